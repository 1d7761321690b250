"""The console's store pages in a real headless Chromium (issue 37): an owner creates a
discount code (after a refused try), a shipping method with weight bands and a tax rate,
saves the settings and edits a role; then every store page is checked at 1280 and 390 px
(no sideways scrolling, axe-core: no serious or critical violation) and photographed
(``artifacts/``; ``SHOP_DOCS_SCREENSHOT=1`` refreshes docs/console/store-*.png for
docs/console.md). The ``browser`` and ``database_url`` fixtures are the console's
browser test's (SQLite alone: every page's reads and writes run on both engines through the
test client, tests/admin/test_admin_store.py).
"""

import pytest
from conftest import PASSWORD
from live import LiveServer

from tests.admin.store_browser_helpers import check_page
from tests.admin.test_admin_browser import (  # noqa: F401 - fixtures
    arrive,
    browser,
    database_url,
    pytestmark,
    sign_in,
    submit,
)
from tests.orders_helpers import order_for_console

pytestmark = pytestmark  # live, and skipped where Chromium is missing

FORM = "main form.stack"


@pytest.fixture
def live(make_app, database_url):  # noqa: F811 - fixtures
    """A live gunicorn with an owner, a support member and one customer's paid order."""
    from shop.auth.users import create_user

    app = make_app()
    with app.app_context():
        create_user("owner@example.com", "Olive Owner", PASSWORD, "owner")
        create_user("sam@example.com", "Sam Support", PASSWORD, "support")
    order_for_console(app, "owner@example.com")
    server = LiveServer(
        {
            "DATABASE_URL": database_url,
            "SHOP_COOKIE_SECURE": "0",  # plain http on 127.0.0.1
            "SHOP_RATELIMIT_ENABLED": "0",
        }
    )
    server.app = app
    yield server
    server.stop()


def fill(driver, **fields) -> None:
    """Type into the fields with these ids (cleared first)."""
    from selenium.webdriver.common.by import By

    for name, value in fields.items():
        element = driver.find_element(By.ID, name)
        element.clear()
        element.send_keys(value)


def choose(driver, name: str, value: str) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.select import Select

    Select(driver.find_element(By.ID, name)).select_by_value(value)


def tick(driver, element_id: str, on: bool = True) -> None:
    from selenium.webdriver.common.by import By

    box = driver.find_element(By.ID, element_id)
    if box.is_selected() != on:
        box.click()


def said(driver) -> str:
    """The page's message: what was done, or why not."""
    from selenium.webdriver.common.by import By

    return driver.find_element(By.CSS_SELECTOR, "main .alert").text


def test_an_owner_sets_up_the_store(browser, live):  # noqa: F811 - fixtures
    from selenium.webdriver.common.by import By

    browser.set_window_size(1280, 900)
    browser.get(live.url + "/admin/discounts")
    arrive(browser, "Sign in")
    sign_in(browser, lands_on="Discount codes")

    # A discount code: a refused value first (the API's words, the input kept), then right.
    browser.find_element(By.LINK_TEXT, "New discount code").click()
    arrive(browser, "New discount code")
    fill(browser, code="SPRING5", value="150")
    submit(browser, FORM, "New discount code")
    assert said(browser).startswith("Value: a percent discount takes a decimal string")
    assert browser.find_element(By.ID, "code").get_attribute("value") == "SPRING5"
    check_page(browser, "store-discount-refused")
    choose(browser, "kind", "fixed")
    fill(browser, value="5.00", min_subtotal="30", usage_limit="100")
    submit(browser, FORM, "Discount SPRING5")
    assert said(browser) == "Discount code created."
    check_page(browser, "store-discount")
    browser.get(live.url + "/admin/discounts")
    arrive(browser, "Discount codes")
    assert "€5.00 off" in browser.find_element(By.CSS_SELECTOR, "main table").text
    check_page(browser, "store-discounts")

    # A shipping method priced by weight: two bands in one form.
    browser.find_element(By.LINK_TEXT, "Shipping").click()
    arrive(browser, "Shipping methods")
    browser.find_element(By.LINK_TEXT, "New shipping method").click()
    arrive(browser, "New shipping method")
    fill(browser, name="Parcel", countries="FR DE", free_over="80")
    fill(browser, **{"band-0-up_to_grams": "2000", "band-0-price": "4.90"})
    fill(browser, **{"band-1-up_to_grams": "10000", "band-1-price": "9.90"})
    submit(browser, FORM, "Parcel")
    assert said(browser) == "Shipping method created."
    assert browser.find_element(By.ID, "band-1-price").get_attribute("value") == "9.90"
    check_page(browser, "store-shipping-method")
    browser.find_element(By.LINK_TEXT, "← Shipping methods").click()
    arrive(browser, "Shipping methods")
    assert "by weight: 2 bands" in browser.find_element(By.CSS_SELECTOR, "main table").text
    check_page(browser, "store-shipping-methods")

    # A tax rate.
    browser.find_element(By.LINK_TEXT, "Tax rates").click()
    arrive(browser, "Tax rates")
    browser.find_element(By.LINK_TEXT, "New tax rate").click()
    arrive(browser, "New tax rate")
    fill(browser, name="TVA", country="FR", rate="20")
    submit(browser, FORM, "Tax rate TVA")
    assert said(browser) == "Tax rate created."
    check_page(browser, "store-tax-rate")
    browser.find_element(By.LINK_TEXT, "Delete…").click()
    arrive(browser, "Delete tax rate TVA")
    check_page(browser)
    browser.find_element(By.LINK_TEXT, "Keep it").click()
    arrive(browser, "Tax rate TVA")
    browser.find_element(By.LINK_TEXT, "← Tax rates").click()
    arrive(browser, "Tax rates")
    check_page(browser, "store-tax-rates")

    # Settings: the currency is locked (an order exists); the rest saves.
    browser.find_element(By.LINK_TEXT, "Settings").click()
    arrive(browser, "Settings")
    assert browser.find_element(By.ID, "currency").get_attribute("readonly")
    fill(browser, shop_name="Leaf & Kettle", address="1 Leaf Lane\n75001 Paris")
    tick(browser, "prices_include_tax")
    submit(browser, FORM, "Settings")
    assert said(browser) == "Settings saved."
    check_page(browser, "store-settings")

    # A role: the support role may now create discount codes too.
    browser.find_element(By.LINK_TEXT, "Roles").click()
    arrive(browser, "Roles")
    check_page(browser, "store-roles")
    browser.find_element(By.LINK_TEXT, "support").click()
    arrive(browser, "Role support")
    tick(browser, "perm-discounts-create")
    submit(browser, FORM, "Role support")
    assert said(browser) == "Role saved."
    assert browser.find_element(By.ID, "perm-discounts-create").is_selected()
    check_page(browser, "store-role")

    # Staff: the list, a member's page, the new-member form.
    browser.find_element(By.LINK_TEXT, "Staff").click()
    arrive(browser, "Staff")
    check_page(browser, "store-staff")
    browser.find_element(By.LINK_TEXT, "Sam Support").click()
    arrive(browser, "Sam Support")
    check_page(browser, "store-staff-member")
    browser.get(live.url + "/admin/staff/new")
    arrive(browser, "New staff member")
    check_page(browser)

    # Customers: the list, Ada's page with her order, the erase confirmation.
    browser.find_element(By.LINK_TEXT, "Customers").click()
    arrive(browser, "Customers")
    fill(browser, q="lovelace")
    browser.find_element(By.CSS_SELECTOR, "form.search button").click()
    arrive(browser, "Customers")
    check_page(browser, "store-customers")
    browser.find_element(By.LINK_TEXT, "Ada Lovelace").click()
    arrive(browser, "Ada Lovelace")
    assert "1 Market Street" in browser.find_element(By.CSS_SELECTOR, ".addresses").text
    check_page(browser, "store-customer")
    browser.find_element(By.PARTIAL_LINK_TEXT, "Erase personal data").click()
    arrive(browser, "Erase ada@example.com")
    check_page(browser)

    # What the pages wrote is what the API reads.
    with live.app.app_context():
        from shop.auth.roles import role_by_name
        from shop.site import settings

        assert "discounts.create" in role_by_name("support")["permissions"]
        assert settings.current()["shop_name"] == "Leaf & Kettle"
        assert settings.current()["prices_include_tax"] is True
