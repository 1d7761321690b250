"""Checks the store pages' browser tests share (issue 37): a page is accessible (axe-core,
0 serious or critical violations) and fits the window (no sideways scrolling), at 1280 and
at 390 px, with screenshots for the owner's guide (docs/console.md).

    assert_accessible(driver)      # axe-core on the page as it is now
    assert_fits(driver)            # the page is no wider than the window
    check_page(driver, "name")     # both, at 1280 and at 390 px, with screenshots

The same names and behaviour as helper b1's ``tests/admin/browser_helpers.py`` (not merged
when this was written), so that the lead keeps one of the two. axe-core comes from
``axe-selenium-python`` (requirements-dev.txt), which bundles ``axe.min.js``: nothing is
fetched; the driver injects it, so the console's CSP does not stop it.
"""

import os

from live import ROOT

DOCS_SHOTS = ROOT / "docs" / "console"
ARTIFACTS = ROOT / "artifacts"
BLOCKING = ("serious", "critical")
WIDTHS = ((1280, 900), (390, 844))


def assert_accessible(driver) -> None:
    """axe-core finds no serious or critical violation on the current page."""
    from axe_selenium_python import Axe

    axe = Axe(driver)
    axe.inject()
    results = axe.run()
    blocking = [v for v in results["violations"] if v.get("impact") in BLOCKING]
    assert not blocking, f"{driver.title}: " + axe.report(blocking)


def assert_fits(driver) -> None:
    """The page is no wider than the window: no sideways scrolling."""
    width = driver.execute_script("return document.documentElement.scrollWidth")
    window = driver.execute_script("return window.innerWidth")
    assert width <= window, f"{driver.title}: {width} px wide in a {window} px window"


def shoot(driver, name: str) -> None:
    """A screenshot into artifacts/ and, with ``SHOP_DOCS_SCREENSHOT=1``, into docs/console/
    (the window, not the whole page: small PNGs)."""
    ARTIFACTS.mkdir(exist_ok=True)
    driver.save_screenshot(str(ARTIFACTS / f"{name}.png"))
    if os.environ.get("SHOP_DOCS_SCREENSHOT") == "1":
        DOCS_SHOTS.mkdir(parents=True, exist_ok=True)
        driver.save_screenshot(str(DOCS_SHOTS / f"{name}.png"))


def check_page(driver, name: str | None = None) -> None:
    """The current page at 1280 and at 390 px: it fits, axe finds nothing serious, and (with
    ``name``) its screenshots ``<name>-1280`` / ``<name>-390``. Leaves the window at 1280."""
    for width, height in WIDTHS:
        driver.set_window_size(width, height)
        assert_fits(driver)
        assert_accessible(driver)
        if name:
            shoot(driver, f"{name}-{width}")
    driver.set_window_size(*WIDTHS[0])


def store_records(app) -> dict:
    """One record of each store page's address (a discount code, a shipping method, a tax
    rate; the customer, the staff member and the role already there), made through the
    domain, for the console-wide page checks: ``{"discount_id": ..., ...}``."""
    from shop import db
    from shop.actor import NOBODY
    from shop.discounts import store as discounts
    from shop.pricing import tax_rates
    from shop.shipping import store as shipping

    with app.app_context():
        discount = discounts.create({"code": "WELCOME10", "kind": "percent", "value": "10"}, NOBODY)
        bands = [{"up_to_grams": 2000, "price_cents": 490}]
        method = shipping.create(
            {"name": "Parcel", "price_cents": 0, "weight_bands": bands}, NOBODY
        )
        rate = tax_rates.create({"country": "FR", "rate": "20", "name": "TVA"}, NOBODY)
        return {
            "discount_id": discount["id"],
            "method_id": method["id"],
            "rate_id": rate["id"],
            "customer_id": db.value("SELECT id FROM customers ORDER BY created_at LIMIT 1"),
            "user_id": db.value("SELECT id FROM users ORDER BY created_at LIMIT 1"),
            "role_id": db.value("SELECT id FROM roles WHERE name = 'support'"),
        }
