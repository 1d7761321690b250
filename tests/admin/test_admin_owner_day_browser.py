"""An owner's day with orders in a real headless Chromium (issue 37): a customer orders
through the JSON API of the live server; the owner signs in, lands on the dashboard, finds
the order there, marks it paid, ships it, marks it delivered, refunds a unit, and finds it
with the *shipped* filter; a note, the packing slip and the cancel page of another order.
Each page is checked at 1280 and 390 px (no sideways scroll) and by axe-core (0 serious or
critical violations); ``SHOP_DOCS_SCREENSHOT=1`` refreshes docs/console/*.png, the owner's
guide's pictures (docs/console.md). The ``browser`` and ``live`` fixtures are the console's
browser test's.
"""

import http.cookiejar
import json
import urllib.error
import urllib.request

from conftest import PASSWORD

from tests.admin.browser_helpers import assert_accessible, assert_fits, check_page
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


class Customer:
    """A customer of the live shop, talking JSON to its API with their session cookie."""

    def __init__(self, base: str):
        self.base = base
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar())
        )

    def call(self, method: str, path: str, body: dict | None = None) -> dict:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(  # noqa: S310 - the live server on 127.0.0.1
            self.base + path, data=data, method=method
        )
        request.add_header("Content-Type", "application/json")
        try:
            with self.opener.open(request, timeout=10) as response:
                return json.load(response)
        except urllib.error.HTTPError as error:  # say what the API said
            raise AssertionError(f"{method} {path}: {error.code} {error.read()!r}") from None


def _place_order(base: str, method_id: str | None = None) -> dict:
    """Grace registers and orders 2 teapots and 1 cup by bank transfer, through the API."""
    grace = Customer(base)
    grace.call(
        "POST",
        "/auth/register",
        {"email": "grace@example.com", "password": PASSWORD, "name": "Grace Hopper"},
    )
    products = {p["name"]: p["id"] for p in grace.call("GET", "/products")["items"]}
    address = {
        "name": "Grace Hopper",
        "line1": "1 Navy Yard",
        "city": "Lyon",
        "postal_code": "69001",
        "country": "FR",
    }
    items = [
        {"product_id": products["Teapot"], "quantity": 2},
        {"product_id": products["Cup"], "quantity": 1},
    ]
    body = {"items": items, "shipping_address": address, "payment_method": "manual"}
    if method_id:  # the console-wide checks' shop has a method: a checkout then names one
        body["shipping_method_id"] = method_id
    first = grace.call("POST", "/payments/checkout", body)
    body["items"] = items[1:]
    second = grace.call("POST", "/payments/checkout", body)
    return {"order": first, "other": second}


def test_an_owners_day_with_orders(browser, live):  # noqa: F811 - fixtures
    from selenium.webdriver.common.by import By

    placed = _place_order(live.url, live.store_records.get("method_id"))
    order, other = placed["order"], placed["other"]
    number = f"Order {order['number']}"

    # Sign in: the owner lands on the dashboard, where the new order waits.
    browser.get(live.url + "/admin/login")
    arrive(browser, "Sign in")
    sign_in(browser, lands_on="Dashboard")
    latest = browser.find_element(By.ID, "latest-orders").text
    assert order["number"] in latest and "Grace Hopper" in latest
    # The live shop's two (one of them returned: tests/orders_helpers.py) and the two above.
    assert browser.find_element(By.ID, "orders-today").text.startswith("4 orders")
    check_page(browser, "dashboard")

    # Open it: mark the transfer paid, then ship everything (Ship comes before Refund).
    browser.find_element(By.LINK_TEXT, order["number"]).click()
    arrive(browser, number)
    browser.find_element(By.ID, "paid-note").send_keys("Transfer 2211 received")
    submit(browser, "#mark-paid", number)
    assert browser.find_element(By.ID, "payment-status").text == "paid"
    page = browser.page_source
    assert page.index('id="ship"') < page.index('id="refund"')
    check_page(browser, "order")
    browser.find_element(By.ID, "carrier").send_keys("DHL")
    browser.find_element(By.ID, "tracking_number").send_keys("JD014600006281")
    submit(browser, "#ship", number)
    assert browser.find_element(By.ID, "fulfillment-status").text == "shipped"
    assert not browser.find_elements(By.ID, "ship")

    # The carrier says it arrived; then one cup comes back broken: a refund of one unit.
    submit(browser, "#deliver", number)
    assert browser.find_element(By.ID, "fulfillment-status").text == "delivered"
    cup = browser.find_element(
        By.XPATH, "//form[@id='refund']//label[starts-with(normalize-space(), 'Cup')]"
    ).get_attribute("for")
    browser.find_element(By.ID, cup).send_keys("1")
    browser.find_element(By.ID, "refund-reason").send_keys("Broken in transit")
    submit(browser, "#refund", number)
    assert "Refund recorded" in browser.find_element(By.CSS_SELECTOR, ".alert").text
    assert browser.find_element(By.ID, "payment-status").text == "partially refunded"
    assert browser.find_element(By.ID, "fulfillment-status").text == "delivered"
    assert not browser.find_elements(By.ID, "ship")

    # A note for the team, and the packing slip (no prices).
    browser.find_element(By.ID, "note-body").send_keys("Customer keeps the chipped cup.")
    submit(browser, "#add-note", number)
    assert "chipped cup" in browser.find_element(By.ID, "notes").text
    check_page(browser, "order-refunded")
    browser.find_element(By.ID, "packing-slip-link").click()
    arrive(browser, f"Packing slip {order['number']}")
    assert "TEA-1" in browser.find_element(By.ID, "slip-lines").text
    assert "1 Navy Yard" in browser.find_element(By.ID, "slip-address").text
    check_page(browser, "packing-slip")

    # The Shipped filter still finds it, delivered and refunded in part.
    browser.get(live.url + "/admin/orders")
    arrive(browser, "Orders")
    browser.find_element(By.LINK_TEXT, "Shipped").click()
    arrive(browser, "Orders")
    assert "fulfillment=shipped" in browser.current_url
    rows = browser.find_elements(By.CSS_SELECTOR, "table.orders tbody tr")
    shown = [row.find_element(By.TAG_NAME, "a").text for row in rows]
    assert order["number"] in shown and other["number"] not in shown  # the latter: unshipped
    check_page(browser, "orders-shipped")

    # Search by the customer's name, then the list's date filter: today.
    browser.get(live.url + "/admin/orders?q=hopper&placed=today")
    arrive(browser, "Orders")
    found = browser.find_element(By.CSS_SELECTOR, "table.orders tbody").text
    assert order["number"] in found and other["number"] in found
    check_page(browser, "orders-search")

    # Cancel asks first: the other order's page links to a page that explains, then cancels.
    browser.get(live.url + f"/admin/orders/{other['id']}")
    arrive(browser, f"Order {other['number']}")
    browser.find_element(By.ID, "cancel-link").click()
    arrive(browser, f"Cancel order {other['number']}")
    check_page(browser, "cancel")
    submit(browser, "#cancel", f"Order {other['number']}")
    assert browser.find_element(By.ID, "order-status").text == "cancelled"
    assert browser.find_element(By.ID, "payment-status").text == "voided"
    assert_fits(browser)
    assert_accessible(browser)

    # The console's error page (the frame's, for every page): accessible, fits a phone.
    browser.get(live.url + "/admin/orders/" + "0" * 24)
    arrive(browser, "Error 404")
    check_page(browser)
