"""The console's "Edit order" page (issue 41) in a real headless Chromium: from the order
page, quantities changed, previewed, confirmed; the edit page fits 1280 and 390 px and axe
finds nothing serious (``check_page``). The ``browser`` and ``live`` fixtures are the
console's browser test's (its order is paid, by manual payment)."""

from tests.admin.browser_helpers import check_page
from tests.admin.test_admin_browser import (  # noqa: F401 - fixtures
    arrive,
    browser,
    database_url,
    live,
    pytestmark,
    sign_in,
    submit,
)

pytestmark = pytestmark  # live, and skipped where Chromium is missing


def _click(driver, button_id: str, title: str) -> None:
    """Click a submit button and wait for the new page (``submit``'s way, for a button that
    is not the form's first)."""
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.wait import WebDriverWait

    driver.execute_script("window.shopLeaving = true")
    driver.find_element(By.ID, button_id).click()
    WebDriverWait(driver, 10, ignored_exceptions=(WebDriverException,)).until(
        lambda d: d.execute_script("return window.shopLeaving === undefined")
    )
    arrive(driver, title)


def test_edit_an_order_in_the_browser(browser, live):  # noqa: F811
    from selenium.webdriver.common.by import By

    browser.set_window_size(1280, 900)
    browser.get(live.url + "/admin/login?next=/admin/orders/" + live.order_id)
    arrive(browser, "Sign in")
    browser.find_element(By.ID, "email").send_keys("owner@example.com")
    from tests.conftest import PASSWORD

    browser.find_element(By.ID, "password").send_keys(PASSWORD)
    browser.find_element(By.CSS_SELECTOR, "form button[type=submit]").click()
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.wait import WebDriverWait

    WebDriverWait(browser, 10).until(expected_conditions.title_contains("Order "))
    number = browser.title.split(" · ")[0]
    browser.find_element(By.ID, "edit-order-link").click()
    arrive(browser, f"Edit {number[0].lower()}{number[1:]}")
    check_page(browser, "admin-order-edit")
    # The cups (line 2, 3 × 9.00) down to 1: previewed, then confirmed.
    box = browser.find_element(By.ID, "quantity-2")
    box.clear()
    box.send_keys("1")
    browser.find_element(By.ID, "edit-note").send_keys("Two cups fewer")
    submit(browser, "#edit-order", f"Edit {number[0].lower()}{number[1:]}")
    # Fewer units on a paid order: a refund is shown (its amount follows the shop's tax
    # rates of today, which the live shop added after the order was placed).
    assert browser.find_element(By.ID, "edit-refund").text.startswith("€")
    assert browser.find_element(By.ID, "new-total").text.startswith("€")
    check_page(browser)
    _click(browser, "confirm-edit", number)
    assert "Order edited." in browser.page_source
    assert "Two cups fewer" in browser.page_source
    check_page(browser)
