"""The console's return pages in a real headless Chromium (issue 41): the list, a return's
page, approve and receive by the forms, at 1280 and 390 px with no sideways scroll and no
serious or critical axe-core violation (``check_page``). SQLite alone, as the console's
other browser tests (tests/admin/test_admin_browser.py says why)."""

import pytest
from conftest import PASSWORD, login
from live import LiveServer

from tests.admin.browser_helpers import check_page
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


@pytest.fixture
def returns_live(make_app, make_admin, database_url):  # noqa: F811
    """A live gunicorn whose shop has a shipped order of two lines and a requested return."""
    app = make_app()
    make_admin("owner", email="owner@example.com")
    order = order_for_console(app, "owner@example.com")
    owner = app.test_client()
    login(owner, "owner@example.com")
    shipped = owner.post(
        f"/orders/{order['id']}/shipments", json={"carrier": "UPS", "tracking_number": "1Z9"}
    )
    assert shipped.status_code == 201, shipped.json
    customer = app.test_client()
    login(customer, "ada@example.com", PASSWORD, kind="customer")
    body = {
        "lines": [{"line": 1, "quantity": 1, "reason": "Chipped spout"}, {"line": 2, "quantity": 2}]
    }
    asked = customer.post(f"/orders/{order['id']}/returns", json=body)
    assert asked.status_code == 201, asked.json
    server = LiveServer(
        {"DATABASE_URL": database_url, "SHOP_COOKIE_SECURE": "0", "SHOP_RATELIMIT_ENABLED": "0"}
    )
    server.order, server.ret, server.owner = order, asked.json, owner
    yield server
    server.stop()


def test_the_return_pages_list_approve_and_receive(browser, returns_live):  # noqa: F811
    from selenium.webdriver.common.by import By

    live = returns_live
    browser.set_window_size(1280, 900)
    browser.get(live.url + "/admin/login?next=/admin/returns")
    arrive(browser, "Sign in")
    sign_in(browser, lands_on="Returns")
    assert browser.find_element(By.LINK_TEXT, "Returns")  # in the navigation
    rows = browser.find_elements(By.CSS_SELECTOR, "#returns-list tbody tr")
    assert len(rows) == 1 and "requested" in rows[0].text
    check_page(browser, "admin-returns")
    browser.find_element(By.LINK_TEXT, f"Return of {live.order['number']}").click()
    title = f"Return of order {live.order['number']}"
    arrive(browser, title)
    assert "Chipped spout" in browser.find_element(By.ID, "return-lines").text
    check_page(browser, "admin-return")
    browser.find_element(By.ID, "instructions").send_keys("Post it to 1 Quay Street")
    submit(browser, "#approve", title)  # the same title: waits for the new page
    assert browser.find_element(By.ID, "return-status").text == "approved"
    assert "1 Quay Street" in browser.find_element(By.CSS_SELECTOR, "dl.facts").text
    check_page(browser)
    two = browser.find_element(By.ID, "received-2")
    two.clear()
    two.send_keys("1")  # one cup of the two arrived
    browser.find_element(By.ID, "receive-restock").click()
    browser.find_element(By.ID, "receive-refund").click()
    submit(browser, "#receive", title)
    assert browser.find_element(By.ID, "return-status").text == "received"
    assert "Return received." in browser.page_source
    check_page(browser)
    browser.find_element(By.ID, "order-link").click()
    arrive(browser, f"Order {live.order['number']}")
    assert "received" in browser.find_element(By.ID, "returns").text
    refunds = live.owner.get(f"/orders/{live.order['id']}/refunds").json["items"]
    assert [r["amount_cents"] for r in refunds] == [3200 + 900]
    assert refunds[0]["restock"] == [{"line": 1, "quantity": 1}, {"line": 2, "quantity": 1}]


def test_a_received_return_is_exchanged_by_the_form(browser, returns_live):  # noqa: F811
    from selenium.webdriver.common.by import By

    live = returns_live
    ret, owner = live.ret, live.owner
    assert owner.post(f"/returns/{ret['id']}/approve", json={}).status_code == 200
    kept = owner.post(f"/returns/{ret['id']}/receive", json={"restock": True, "refund": False})
    assert kept.status_code == 200, kept.json
    shirt = {"name": "Shirt", "price_cents": 2500, "stock": 5, "sku": "SHIRT-M"}
    assert owner.post("/products", json=shirt).status_code == 201
    browser.set_window_size(1280, 900)
    browser.get(live.url + f"/admin/login?next=/admin/returns/{ret['id']}")
    arrive(browser, "Sign in")
    title = f"Return of order {live.order['number']}"
    sign_in(browser, lands_on=title)
    check_page(browser, "admin-return-exchange")
    browser.find_element(By.ID, "exchange-lines").send_keys("SHIRT-M 1")
    submit(browser, "#exchange", title)
    assert "Exchanged:" in browser.page_source
    check_page(browser)
    browser.find_element(By.ID, "exchange-draft").click()
    draft_id = owner.get(f"/returns/{ret['id']}").json["exchange_draft_id"]
    assert browser.current_url.endswith(f"/admin/draft-orders/{draft_id}")
