"""The console's draft-order pages in a real headless Chromium (issue 41): the list, the new
draft's form filled and sent, the draft's page with its totals, then completed by hand and
the order's page; each page fits 1280 and 390 px with no serious axe-core violation."""

import pytest
from conftest import PASSWORD
from live import LiveServer

from tests.admin.browser_helpers import check_page
from tests.admin.test_admin_browser import (  # noqa: F401 - fixtures
    arrive,
    browser,
    database_url,
    pytestmark,
    sign_in,
)
from tests.orders_helpers import ADDRESS, add_product, product_row

pytestmark = pytestmark  # live, and skipped where Chromium is missing


@pytest.fixture
def live(make_app, database_url):  # noqa: F811
    """A live gunicorn with an owner, two products with SKUs and a shipping method."""
    from shop.actor import CLI
    from shop.auth.users import create_user
    from shop.shipping import store as methods

    app = make_app()
    with app.app_context():
        create_user("owner@example.com", "Olive Owner", PASSWORD, "owner")
        methods.create({"name": "Colissimo", "countries": ["FR"], "price_cents": 490}, CLI)
    tea = add_product(app, "Sencha", price_cents=1250, stock=5, sku="SENCHA-100")
    add_product(app, "Teapot", price_cents=3900, stock=2, sku="POT-1")
    server = LiveServer(
        {"DATABASE_URL": database_url, "SHOP_COOKIE_SECURE": "0", "SHOP_RATELIMIT_ENABLED": "0"}
    )
    server.app, server.tea = app, tea
    yield server
    server.stop()


def test_a_draft_order_made_and_completed_in_the_console(browser, live):  # noqa: F811
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select
    from selenium.webdriver.support.wait import WebDriverWait

    browser.get(live.url + "/admin/login?next=/admin/draft-orders")
    arrive(browser, "Sign in")
    sign_in(browser, lands_on="Draft orders")
    check_page(browser, "draft-orders-empty")
    browser.find_element(By.ID, "new-draft").click()
    arrive(browser, "New draft order")
    check_page(browser, "draft-order-new")
    browser.find_element(By.ID, "email").send_keys("phone@example.com")
    browser.find_element(By.ID, "lines").send_keys("SENCHA-100 2\nPOT-1 1")
    for name, value in ADDRESS.items():
        browser.find_element(By.ID, name).send_keys(value)
    Select(browser.find_element(By.ID, "shipping_method_id")).select_by_visible_text("Colissimo")
    browser.find_element(By.ID, "note").send_keys("Called on Monday")
    browser.find_element(By.CSS_SELECTOR, "#draft-form button[type=submit]").click()
    arrive(browser, "Draft order for phone@example.com")
    assert "Nothing is taken from stock" in browser.page_source
    totals = browser.find_element(By.ID, "draft-totals").text
    assert "Total" in totals and "To collect" not in totals
    check_page(browser, "draft-order")
    assert product_row(live.app, live.tea)["stock"] == 5

    browser.get(live.url + "/admin/draft-orders")
    arrive(browser, "Draft orders")
    assert "phone@example.com" in browser.find_element(By.CSS_SELECTOR, "table.cards").text
    check_page(browser, "draft-orders")
    browser.find_element(By.LINK_TEXT, "phone@example.com").click()
    arrive(browser, "Draft order for phone@example.com")
    browser.find_element(By.CSS_SELECTOR, "#complete button[type=submit]").click()
    WebDriverWait(browser, 10).until(lambda driver: driver.title.startswith("Order "))
    assert product_row(live.app, live.tea)["stock"] == 3
