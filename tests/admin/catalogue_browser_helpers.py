"""The catalogue pages' browser checks (issue 37): ``check_page`` at each width with the
console's own ``assert_fits`` and ``assert_accessible`` (tests/admin/browser_helpers.py),
``shoot`` (the whole page into docs/console/) and one record of each page's address."""

from live import ROOT

from tests.admin.browser_helpers import assert_accessible, assert_fits

DOCS = ROOT / "docs" / "console"


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
