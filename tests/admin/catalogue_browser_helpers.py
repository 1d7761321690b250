"""Browser checks for the console's pages (issue 37), until helper b1's shared ones land:
``assert_fits`` (no sideways scroll at the window's width) and ``assert_accessible``
(axe-core through ``axe-selenium-python``: no serious or critical violation), and ``shoot``
(a screenshot into docs/console/, where the owner's guide shows it)."""

from live import ROOT

DOCS = ROOT / "docs" / "console"
BLOCKING = ("serious", "critical")


def assert_fits(driver) -> None:
    """The page is no wider than the window: nothing scrolls sideways."""
    width = driver.execute_script("return document.documentElement.scrollWidth")
    window = driver.execute_script("return window.innerWidth")
    assert width <= window, f"{driver.title}: {width}px wide in a {window}px window"


def assert_accessible(driver) -> None:
    """axe-core finds no serious or critical violation on the page as it is."""
    from axe_selenium_python import Axe

    axe = Axe(driver)
    axe.inject()
    found = [v for v in axe.run()["violations"] if v["impact"] in BLOCKING]
    assert not found, f"{driver.title}: " + axe.report(found)


def check_page(driver, widths=(1280, 390)) -> None:
    """The page at each width (a desktop, a phone): it fits, and axe finds nothing serious.
    The window is left at the last width."""
    for width in widths:
        driver.set_window_size(width, 900)
        assert_fits(driver)
        assert_accessible(driver)


def shoot(driver, name: str, width: int = 1280) -> None:
    """The whole page at ``width`` as ``docs/console/<name>.png``; the window's size after
    is ``width`` × 900."""
    DOCS.mkdir(parents=True, exist_ok=True)
    driver.set_window_size(width, 900)
    height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.set_window_size(width, min(height + 140, 2600))
    driver.execute_script("window.scrollTo(0, 0)")
    driver.save_screenshot(str(DOCS / f"{name}.png"))
    driver.set_window_size(width, 900)


def catalogue_records(app) -> dict:
    """One record of each catalogue page's address (a product, a category, a collection, a
    content entry), made through the domain, for the console-wide page checks."""
    from shop.actor import NOBODY
    from shop.catalogue import categories, collections, products
    from shop.site import content

    with app.app_context():
        category = categories.create({"name": "Teas", "slug": "teas-console"}, NOBODY)
        collection = collections.create({"title": "Picks", "slug": "picks-console"}, NOBODY)
        product = products.create_product(
            {"name": "Console tea", "slug": "console-tea", "price_cents": 900, "stock": 4},
            NOBODY,
        )
        entry = {"type": "page", "data": {"title": "About"}, "published": True}
        content.put("about-console", entry, NOBODY, lambda: None)
    return {
        "category_id": category,
        "collection_id": collection,
        "product_id": product,
        "key": "about-console",
    }
