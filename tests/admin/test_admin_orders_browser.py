"""The console's order page in a real headless Chromium (issue 27), on a 390 px phone: find
the order, ship part of it with tracking, then the rest, then refund a unit; the page never
scrolls sideways.
Screenshots go to ``artifacts/``; ``SHOP_DOCS_SCREENSHOT=1`` refreshes docs/admin-order-*.png
(docs/payments.md). The ``browser`` and ``live`` fixtures are the console's browser test's.
"""

import os

from live import ROOT

from tests.admin.test_admin_browser import (  # noqa: F401 - fixtures
    ARTIFACTS,
    arrive,
    browser,
    database_url,
    live,
    pytestmark,
    sign_in,
    submit,
)

pytestmark = pytestmark  # live, and skipped where Chromium is missing


def fits(driver) -> bool:
    """Whether the page is no wider than the window (no sideways scrolling)."""
    width = driver.execute_script("return document.documentElement.scrollWidth")
    return width <= driver.execute_script("return window.innerWidth")


def shoot(driver, name: str) -> None:
    """A screenshot into artifacts/ and, asked for, the whole page into docs/."""
    ARTIFACTS.mkdir(exist_ok=True)
    driver.save_screenshot(str(ARTIFACTS / f"{name}.png"))
    if os.environ.get("SHOP_DOCS_SCREENSHOT") == "1":
        height = driver.execute_script("return document.documentElement.scrollHeight")
        width = driver.execute_script("return window.innerWidth")
        driver.set_window_size(width, min(height + 120, 2400))
        driver.save_screenshot(str(ROOT / "docs" / f"{name}.png"))


def test_ship_an_order_in_two_parts_on_a_phone(browser, live):  # noqa: F811 - fixtures
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.wait import WebDriverWait

    browser.get(live.url + "/admin/login?next=/admin/orders")
    arrive(browser, "Sign in")
    sign_in(browser, lands_on="Orders")
    assert fits(browser)
    browser.set_window_size(390, 844)
    browser.find_element(By.ID, "q").send_keys("ada@")
    browser.find_element(By.CSS_SELECTOR, "form.search button").click()
    # Same title before and after the search: wait for the searched page itself.
    WebDriverWait(browser, 10).until(expected_conditions.url_contains("q=ada"))
    arrive(browser, "Orders")
    rows = browser.find_elements(By.CSS_SELECTOR, "table.orders tbody tr")
    assert len(rows) == 1 and "paid" in rows[0].text
    rows[0].find_element(By.TAG_NAME, "a").click()
    WebDriverWait(browser, 10).until(expected_conditions.title_contains("Order "))
    number = browser.title.split(" · ")[0]
    arrive(browser, number)
    assert fits(browser)
    assert "Mark paid" not in browser.page_source  # already paid

    # Ship one teapot: the quantity box of its line, carrier, tracking and link.
    teapot = browser.find_element(
        By.XPATH, "//form[@id='ship']//label[starts-with(normalize-space(), 'Teapot')]"
    ).get_attribute("for")  # line-<n>
    browser.find_element(By.ID, teapot).send_keys("1")
    browser.find_element(By.ID, "carrier").send_keys("UPS")
    browser.find_element(By.ID, "tracking_number").send_keys("1Z999AA10123456784")
    browser.find_element(By.ID, "tracking_url").send_keys("https://ups.example/track/1Z999")
    submit(browser, "#ship", number)
    assert "Shipment recorded" in browser.find_element(By.CSS_SELECTOR, ".alert").text
    assert browser.find_element(By.ID, "order-status").text == "partially shipped"
    link = browser.find_element(By.CSS_SELECTOR, "#shipments a")
    assert link.get_attribute("href") == "https://ups.example/track/1Z999"
    assert fits(browser)
    shoot(browser, "admin-order-390")
    browser.set_window_size(1280, 900)
    browser.refresh()
    arrive(browser, number)
    assert fits(browser)
    shoot(browser, "admin-order-1280")
    browser.set_window_size(390, 844)

    # The rest, with the quantities left empty.
    browser.find_element(By.ID, "carrier").send_keys("DHL")
    browser.find_element(By.ID, "tracking_number").send_keys("JD014600006281")
    submit(browser, "#ship", number)
    assert browser.find_element(By.ID, "order-status").text == "shipped"
    assert len(browser.find_elements(By.CSS_SELECTOR, "#shipments tbody tr")) == 2
    assert not browser.find_elements(By.ID, "ship")
    assert fits(browser)
    # What is left to do is Mark delivered (issue 37), above the refund.
    assert browser.find_element(By.CSS_SELECTOR, "#deliver button").text == "Mark delivered"

    # Refund one teapot, putting it back on the shelf: the refunds list shows it.
    browser.find_element(By.ID, teapot.replace("line", "refund")).send_keys("1")
    browser.find_element(By.ID, teapot.replace("line", "restock")).send_keys("1")
    browser.find_element(By.ID, "refund-reason").send_keys("Chipped lid")
    submit(browser, "#refund", number)
    assert "Refund recorded" in browser.find_element(By.CSS_SELECTOR, ".alert").text
    assert "Chipped lid" in browser.find_element(By.ID, "refunds").text
    assert fits(browser)


def test_the_orders_list_fits_a_phone(browser, live):  # noqa: F811 - fixtures
    from selenium.webdriver.common.by import By

    browser.set_window_size(390, 844)
    browser.get(live.url + "/admin/login?next=/admin/orders")
    arrive(browser, "Sign in")
    sign_in(browser, lands_on="Orders")
    assert browser.find_elements(By.CSS_SELECTOR, "table.orders tbody tr")
    assert fits(browser)
    shoot(browser, "admin-orders-390")
