"""A customer's account in a real headless Chromium against a live gunicorn: register → add
an address → add to cart → check out with the saved address (bank transfer) → the order in
"my orders" and its page. Every page at 1280 and 390 px: no sideways scroll, and axe-core
finds no serious or critical violation (tests/admin/browser_helpers.py)."""

from tests.admin.browser_helpers import assert_accessible, assert_fits, check_page
from tests.admin.test_admin_browser import browser  # noqa: F401
from tests.storefront.test_storefront_browser import (  # noqa: F401
    arrive,
    database_url,
    fill,
    live,
    pytestmark,
)


def test_a_customer_registers_saves_an_address_and_checks_out_with_it(browser, live):  # noqa: F811
    from selenium.webdriver.common.by import By

    browser.set_window_size(1280, 900)
    browser.get(live.url + "/store/")
    browser.find_element(By.LINK_TEXT, "Sign in").click()
    arrive(browser, "Sign in · My Shop")
    check_page(browser)
    browser.find_element(By.LINK_TEXT, "Create an account").click()
    arrive(browser, "Create an account · My Shop")
    check_page(browser)
    fill(browser, {"f-name": "Gina Buyer", "f-email": "gina@example.com",
                   "f-password": "correct horse battery"})  # fmt: skip
    browser.find_element(By.CSS_SELECTOR, "main form button[type=submit]").click()
    arrive(browser, "Your account · My Shop")
    assert "No orders yet." in browser.page_source
    check_page(browser)

    browser.find_element(By.LINK_TEXT, "Your addresses").click()
    arrive(browser, "Your addresses · My Shop")
    fill(browser, {"a-name": "Gina Buyer", "a-line1": "Teeweg 1", "a-postal_code": "10115",
                   "a-city": "Berlin", "a-country": "Germany"})  # fmt: skip
    browser.find_element(By.CSS_SELECTOR, "#new-title + form button[type=submit]").click()
    arrive(browser, "Your addresses · My Shop")
    assert "Teeweg 1" in browser.find_element(By.CSS_SELECTOR, ".lines").text
    check_page(browser)

    browser.set_window_size(390, 844)  # the rest on a phone
    browser.get(live.url + "/store/products/sencha")
    browser.find_element(By.CSS_SELECTOR, "form.add button[type=submit]").click()
    arrive(browser, "Cart · My Shop")
    browser.find_element(By.LINK_TEXT, "Check out").click()
    arrive(browser, "Checkout · My Shop")
    saved = browser.find_element(By.CSS_SELECTOR, "input[name=shipping_address_id]")
    assert saved.is_selected()
    email = browser.find_element(By.ID, "f-email").get_attribute("value")
    assert email == "gina@example.com"
    assert_fits(browser)
    assert_accessible(browser)
    browser.find_element(By.XPATH, "//button[.='Ship here']").click()
    arrive(browser, "Checkout · My Shop", "#shipping")
    browser.find_element(By.CSS_SELECTOR, "#shipping form button[type=submit]").click()
    arrive(browser, "Checkout · My Shop", "#payment")
    browser.find_element(By.XPATH, "//label[.='Bank transfer']").click()
    browser.find_element(By.CSS_SELECTOR, "#payment form button[type=submit]").click()
    arrive(browser, "Order ", "placed=1", title_starts=True)
    assert "IBAN DE00 1234 5678" in browser.page_source
    assert "token=" not in browser.current_url  # the customer's own: no token needed
    number = browser.title.split(" ")[1]
    assert_fits(browser)
    assert_accessible(browser)

    browser.find_element(By.LINK_TEXT, "Account").click()
    arrive(browser, "Your account · My Shop")
    check_page(browser)
    browser.find_element(By.LINK_TEXT, f"Order {number}").click()
    arrive(browser, f"Order {number} · My Shop")
    assert "pending" in browser.find_element(By.CSS_SELECTOR, ".status").text
