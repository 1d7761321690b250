"""A card order's balance paid by its pay link, in a real headless Chromium against a live
gunicorn (docs/orders.md, "Collecting a balance"): a guest pays an order by card, staff edit
it up, the customer's edit mail carries the link, its page takes the card through the fake
Stripe's Payment Element, and the balance is 0. At 1280 px and on a 390 px phone: no
sideways scroll, no serious or critical axe-core violation.
"""

import re

import pytest

from tests.admin.test_admin_browser import browser  # noqa: F401
from tests.mail_helpers import outbox_mails
from tests.storefront.test_storefront_browser import (  # noqa: F401 - fixtures
    arrive,
    check_page,
    checkout_as_guest,
    database_url,
    live,
    pytestmark,
)


@pytest.mark.parametrize(("width", "height"), [(1280, 900), (390, 844)], ids=["desktop", "phone"])
def test_an_order_edited_up_is_paid_by_the_mailed_link(  # noqa: F811
    browser,  # noqa: F811
    live,  # noqa: F811
    fake_stripe,
    owner_client,
    width,
    height,
):
    from selenium.webdriver.common.by import By

    browser.set_window_size(width, height)
    size = "1280" if width == 1280 else "390"
    checkout_as_guest(browser, live, f"balance-{size}")
    browser.find_element(By.XPATH, "//label[.='Card']").click()
    browser.find_element(By.CSS_SELECTOR, "#payment form button[type=submit]").click()
    arrive(browser, "Pay for order", "/pay", title_starts=True)
    browser.find_element(By.ID, "fake-card-number").send_keys("4242 4242 4242 4242")
    browser.find_element(By.CSS_SELECTOR, "#pay button[type=submit]").click()
    arrive(browser, "Order ", "placed=1", title_starts=True)
    order_id = re.search(r"/store/orders/([^/?]+)", browser.current_url).group(1)
    order = owner_client.get(f"/orders/{order_id}").json
    assert order["status"] == "paid"
    paid = order["payment"]["amount_cents"]

    # Staff add one more: the total goes up, the customer is mailed the link.
    edited = owner_client.post(
        f"/orders/{order_id}/edits", json={"set_quantity": [{"line": 1, "quantity": 3}]}
    )
    assert edited.status_code == 201, edited.json
    due = edited.json["order"]["balance_due_cents"]
    assert due > 0
    with owner_client.application.app_context():
        [mail] = outbox_mails(
            "recipient = :to AND template = 'order_edited'", {"to": "gina@example.com"}
        )
    token = re.search(r"/store/balance/([\w-]+)", mail["text_body"]).group(1)

    browser.get(f"{live.url}/store/balance/{token}")
    arrive(browser, "Pay for order", "/balance/", title_starts=True)
    assert "left to pay" in browser.page_source
    card = browser.find_element(By.ID, "fake-card-number")
    check_page(browser, f"balance-pay-{size}")
    card.send_keys("4242 4242 4242 4242")
    browser.find_element(By.CSS_SELECTOR, "#pay button[type=submit]").click()
    arrive(browser, "Order ", f"/balance/{token}", title_starts=True)
    assert "Nothing left to pay" in browser.page_source
    check_page(browser, f"balance-paid-{size}")
    order = owner_client.get(f"/orders/{order_id}").json
    assert order["balance_due_cents"] == 0 and order["payment"]["amount_cents"] == paid + due
    assert len(fake_stripe.browser_confirmed) == 2
