"""A card order's balance collected by a pay link (issue 41, docs/orders.md "Collecting a
balance"), through HTTP on both engines: an edit up mails the customer the link, its page
pays the balance by card through the fake Stripe (one intent however often it is loaded),
the webhook and the page's return lower the balance once; staff send a new link; a refund
larger than the first capture is split over the order's intents."""

import re
import threading

import pytest
import requests

from shop import db
from tests.admin_helpers import console_client, submit
from tests.fake_stripe import deliver
from tests.fake_stripe import settings as stripe_settings
from tests.mail_helpers import outbox_mails
from tests.orders.test_edits import edit, paid_order
from tests.orders_helpers import add_product
from tests.webhook_helpers import Receiver, create_hook, verify, work


@pytest.fixture
def app(make_app, fake_stripe):
    return make_app(
        WEBHOOKS_ALLOW_PRIVATE=True,
        WEBHOOKS_ALLOW_HTTP=True,
        STRIPE_PUBLISHABLE_KEY="pk_test_shop",
        STRIPE_JS_URL=fake_stripe.url + "/v3/",
        **stripe_settings(fake_stripe),
    )


def edit_mails(app, order) -> list[dict]:
    """The order's mails of its edits and balance, oldest first."""
    with app.app_context():
        return outbox_mails(
            "recipient = :to AND template = 'order_edited' AND subject LIKE :number",
            {"to": order["customer"]["email"], "number": f"%order {order['number']}%"},
        )


def token_in(mail: dict) -> str:
    return re.search(r"http://\S+/store/balance/([\w-]+)", mail["text_body"]).group(1)


def intent_on(page) -> str:
    assert page.status_code == 200, page.text
    return re.search(r'data-secret="(pi_\w+?)_secret_', page.text).group(1)


def card_order_edited_up(app, owner_client, customer_client, fake_stripe):
    """A card order paid 1000, edited up to 3000: 2000 due."""
    tea = add_product(app, "Tea", price_cents=1000, stock=20)
    order = paid_order(app, customer_client, owner_client, [(tea, 1)], "stripe", fake_stripe)
    made = edit(owner_client, order["id"], {"set_quantity": [{"line": 1, "quantity": 3}]})
    assert made["order"]["balance_due_cents"] == 2000
    return made["order"]


def balance_of(owner_client, order_id) -> tuple[int, int]:
    shown = owner_client.get(f"/orders/{order_id}").json
    return shown["balance_due_cents"], shown["payment"]["amount_cents"]


def test_an_edit_up_mails_a_link_whose_page_pays_the_balance_once(
    app, owner_client, customer_client, fake_stripe
):
    order = card_order_edited_up(app, owner_client, customer_client, fake_stripe)
    [mail] = edit_mails(app, order)
    assert "was changed" in mail["subject"] and "3 x Tea" in mail["text_body"]
    assert "Left to pay: €20.00" in mail["text_body"]
    token = token_in(mail)
    with app.app_context():
        stored = db.value(
            "SELECT balance_token_hash FROM orders WHERE id = :id", {"id": order["id"]}
        )
    assert len(token) >= 43 and stored == db.sha256(token)

    browser = app.test_client()
    page = browser.get(f"/store/balance/{token}")
    intent_id = intent_on(page)
    assert page.headers["Cache-Control"] == "no-store"  # its token in the address
    assert "Pay €20.00" in page.text and "Tea" in page.text, page.text
    intent = fake_stripe.intents[intent_id]
    assert intent["amount"] == 2000
    assert intent["metadata"] == {
        "order_id": order["id"],
        "order_number": order["number"],
        "kind": "balance",
        "balance_payment_id": intent["metadata"]["balance_payment_id"],
    }
    # Reloads find the same intent: none made anew.
    assert intent_on(browser.get(f"/store/balance/{token}")) == intent_id
    assert len(fake_stripe.intents) == 2

    event = fake_stripe.succeed(intent_id)
    assert deliver(browser, event).status_code == 200
    assert balance_of(owner_client, order["id"]) == (0, 3000)
    # The same event again, another event of the same intent, the page's return: nothing more.
    deliver(browser, event)
    deliver(browser, fake_stripe.event("payment_intent.succeeded", dict(intent)))
    assert browser.get(f"/store/balance/{token}/paid").status_code == 303
    assert balance_of(owner_client, order["id"]) == (0, 3000)
    shown = owner_client.get(f"/orders/{order['id']}").json
    notes = [h["note"] or "" for h in shown["status_history"]]
    assert sum("Balance of €20.00 paid by card" in note for note in notes) == 1
    assert shown["status"] == "paid"
    with app.app_context():
        audits = db.query("SELECT details FROM audit_log WHERE event = 'order.balance_paid'", {})
    assert len(audits) == 1
    done = browser.get(f"/store/balance/{token}")
    assert done.status_code == 200 and "Nothing left to pay" in done.text
    assert "data-secret" not in done.text
    assert browser.get("/store/balance/" + "x" * 43).status_code == 404


def test_the_page_return_before_the_webhook_lowers_the_balance_once(
    app, owner_client, customer_client, fake_stripe
):
    order = card_order_edited_up(app, owner_client, customer_client, fake_stripe)
    token = token_in(edit_mails(app, order)[0])
    browser = app.test_client()
    page = browser.get(f"/store/balance/{token}")
    intent_id = intent_on(page)
    secret = re.search(r'data-secret="([^"]+)"', page.text).group(1)
    # What Stripe.js does with the card: the intent succeeds at Stripe.
    paid = requests.post(
        f"{fake_stripe.url}/v1/payment_intents/{intent_id}/confirm",
        data={"client_secret": secret, "card": "4242424242424242"},
        timeout=5,
    )
    assert paid.status_code == 200
    back = browser.get(f"/store/balance/{token}/paid?payment_intent={intent_id}")
    assert back.status_code == 303
    assert balance_of(owner_client, order["id"]) == (0, 3000)
    deliver(browser, fake_stripe.event("payment_intent.succeeded", fake_stripe.intents[intent_id]))
    assert balance_of(owner_client, order["id"]) == (0, 3000)


def test_a_balance_changed_after_the_link_pays_what_the_intent_says(
    app, owner_client, customer_client, fake_stripe
):
    order = card_order_edited_up(app, owner_client, customer_client, fake_stripe)
    token = token_in(edit_mails(app, order)[0])
    browser = app.test_client()
    first = intent_on(browser.get(f"/store/balance/{token}"))
    # Edited down to 2000 meanwhile: 1000 due; the customer's open page still asks 2000.
    edit(owner_client, order["id"], {"set_quantity": [{"line": 1, "quantity": 2}]})
    token = token_in(edit_mails(app, order)[-1])  # the edit mailed a new link
    assert browser.get(f"/store/balance/{token_in(edit_mails(app, order)[0])}").status_code == 404
    deliver(browser, fake_stripe.succeed(first))
    # What the intent received is received: 1000 more than due, owed to the customer.
    assert balance_of(owner_client, order["id"]) == (-1000, 3000)
    assert "Nothing left to pay" in browser.get(f"/store/balance/{token}").text

    # A reload after a change asks for the new amount and cancels the intent of the old.
    other = card_order_edited_up(app, owner_client, customer_client, fake_stripe)
    token = token_in(edit_mails(app, other)[0])
    old = intent_on(browser.get(f"/store/balance/{token}"))
    edit(owner_client, other["id"], {"set_quantity": [{"line": 1, "quantity": 2}]})
    token = token_in(edit_mails(app, other)[-1])
    new = intent_on(browser.get(f"/store/balance/{token}"))
    assert new != old and fake_stripe.intents[new]["amount"] == 1000
    assert fake_stripe.intents[old]["status"] == "canceled"


def test_staff_send_a_new_link_and_what_is_refused(
    app, owner_client, customer_client, fake_stripe, make_admin
):
    order = card_order_edited_up(app, owner_client, customer_client, fake_stripe)
    first = token_in(edit_mails(app, order)[0])
    sent = owner_client.post(f"/orders/{order['id']}/balance/link")
    assert sent.status_code == 200, sent.json
    assert sent.json["mailed"] is True and sent.json["balance_due_cents"] == 2000
    token = sent.json["url"].rsplit("/", 1)[1]
    mails = edit_mails(app, order)
    assert len(mails) == 2 and token_in(mails[-1]) == token
    assert "€20.00 to pay" in mails[-1]["subject"]
    browser = app.test_client()
    assert browser.get(f"/store/balance/{first}").status_code == 404
    assert browser.get(f"/store/balance/{token}").status_code == 200
    # A card balance is not recorded by hand; a customer may not send links.
    refused = owner_client.post(f"/orders/{order['id']}/balance", json={})
    assert refused.status_code == 409 and "pay link" in refused.json["message"]
    assert customer_client.post(f"/orders/{order['id']}/balance/link").status_code in (403, 404)
    # Nothing due, or a manual order's balance: 409.
    tea = add_product(app, "Cup", price_cents=500, stock=20)
    manual = paid_order(app, customer_client, owner_client, [(tea, 1)])
    assert owner_client.post(f"/orders/{manual['id']}/balance/link").status_code == 409
    edit(owner_client, manual["id"], {"set_quantity": [{"line": 1, "quantity": 2}]})
    refused = owner_client.post(f"/orders/{manual['id']}/balance/link")
    assert refused.status_code == 409 and "record it received" in refused.json["message"]
    [manual_mail] = edit_mails(app, manual)[-1:]
    assert "/store/balance/" not in manual_mail["text_body"]
    assert "Left to pay: €5.00" in manual_mail["text_body"]
    assert owner_client.post("/orders/nope/balance/link").status_code == 404


def test_a_refund_larger_than_the_first_capture_is_split_over_the_intents(
    app, owner_client, customer_client, fake_stripe
):
    order = card_order_edited_up(app, owner_client, customer_client, fake_stripe)
    token = token_in(edit_mails(app, order)[0])
    browser = app.test_client()
    balance_intent = intent_on(browser.get(f"/store/balance/{token}"))
    deliver(browser, fake_stripe.succeed(balance_intent))
    first_intent = owner_client.get(f"/orders/{order['id']}").json["payment"]["reference"]
    preview = owner_client.get(f"/orders/{order['id']}/refunds/preview").json
    assert preview["refundable_cents"] == 3000
    # A refund made in Stripe's dashboard on the balance intent is recorded against it.
    deliver(browser, fake_stripe.refund_in_dashboard(balance_intent, 300))
    preview = owner_client.get(f"/orders/{order['id']}/refunds/preview").json
    assert preview["refundable_cents"] == 2700

    made = owner_client.post(f"/orders/{order['id']}/refunds", json={"amount_cents": 2500})
    assert made.status_code == 201, made.json
    assert made.json["status"] == "succeeded"
    at_stripe = [(r["payment_intent"], r["amount"]) for r in fake_stripe.refunds.values()]
    assert at_stripe == [(balance_intent, 300), (first_intent, 1000), (balance_intent, 1500)]
    # The charge.refunded events of both intents change nothing more.
    for intent in (first_intent, balance_intent):
        deliver(browser, fake_stripe.charge_refunded(intent))
    preview = owner_client.get(f"/orders/{order['id']}/refunds/preview").json
    assert preview["refunded_cents"] == 2800 and preview["refundable_cents"] == 200
    rest = owner_client.post(f"/orders/{order['id']}/refunds", json={"amount_cents": 200})
    assert rest.status_code == 201, rest.json
    assert list(fake_stripe.refunds.values())[-1]["payment_intent"] == balance_intent
    assert owner_client.get(f"/orders/{order['id']}").json["status"] == "refunded"
    preview = owner_client.get(f"/orders/{order['id']}/refunds/preview").json
    assert preview["refunded_cents"] == 3000 and preview["refundable_cents"] == 0
    more = owner_client.post(f"/orders/{order['id']}/refunds", json={"amount_cents": 1})
    assert more.status_code in (400, 409)
    assert len(fake_stripe.refunds) == 4


def test_the_fake_refuses_a_refund_larger_than_its_intent(fake_stripe):
    intent = fake_stripe.create_intent(1000, "usd", {})
    fake_stripe.succeed(intent["id"])
    refused = requests.post(
        f"{fake_stripe.url}/v1/refunds",
        data={"payment_intent": intent["id"], "amount": 1001},
        timeout=5,
    )
    assert refused.status_code == 400
    assert refused.json()["error"]["code"] == "amount_too_large"


def test_a_webhook_receiver_gets_order_balance_paid(
    app, owner_client, customer_client, fake_stripe
):
    with Receiver() as receiver:
        hook = create_hook(owner_client, receiver.url, "order.balance_paid")
        order = card_order_edited_up(app, owner_client, customer_client, fake_stripe)
        token = token_in(edit_mails(app, order)[0])
        browser = app.test_client()
        deliver(browser, fake_stripe.succeed(intent_on(browser.get(f"/store/balance/{token}"))))
        work(app)
        (request,) = receiver.requests
        payload = verify(hook["secret"], request)
    assert payload["type"] == "order.balance_paid"
    assert payload["data"]["balance_payment"]["amount_cents"] == 2000
    assert payload["data"]["balance_due_cents"] == 0


def test_four_loads_of_the_page_at_once_make_one_intent(
    app, owner_client, customer_client, fake_stripe
):
    order = card_order_edited_up(app, owner_client, customer_client, fake_stripe)
    token = token_in(edit_mails(app, order)[0])
    seen = []

    def load():
        seen.append(intent_on(app.test_client().get(f"/store/balance/{token}")))

    threads = [threading.Thread(target=load) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert len(seen) == 4 and len(set(seen)) == 1
    assert len(fake_stripe.intents) == 2  # the order's, and one for its balance
    with app.app_context():
        assert db.value("SELECT COUNT(*) FROM balance_payments", {}) == 1


def test_the_webhook_racing_the_page_return_lowers_the_balance_once(
    app, owner_client, customer_client, fake_stripe
):
    order = card_order_edited_up(app, owner_client, customer_client, fake_stripe)
    token = token_in(edit_mails(app, order)[0])
    intent_id = intent_on(app.test_client().get(f"/store/balance/{token}"))
    events = [fake_stripe.succeed(intent_id)]
    events.append(fake_stripe.event("payment_intent.succeeded", fake_stripe.intents[intent_id]))

    def webhook(event):
        deliver(app.test_client(), event)

    def back():
        app.test_client().get(f"/store/balance/{token}/paid")

    jobs = [lambda e=event: webhook(e) for event in events * 2] + [back, back]
    threads = [threading.Thread(target=job) for job in jobs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert balance_of(owner_client, order["id"]) == (0, 3000)
    with app.app_context():
        assert db.value("SELECT COUNT(*) FROM audit_log WHERE event = 'order.balance_paid'") == 1


def test_the_console_mails_a_new_link(app, owner_client, customer_client, fake_stripe):
    order = card_order_edited_up(app, owner_client, customer_client, fake_stripe)
    console = console_client(app, owner_client.email)
    page = console.get(f"/admin/orders/{order['id']}")
    assert page.status_code == 200 and 'id="send-balance-link"' in page.text
    sent = submit(
        console, f"/admin/orders/{order['id']}", f"/admin/orders/{order['id']}/balance-link"
    )
    assert sent.status_code == 303, sent.text
    assert "pay link" in console.get(sent.headers["Location"]).text
    mails = edit_mails(app, order)
    assert len(mails) == 2 and token_in(mails[1]) != token_in(mails[0])
    # Once paid, no more links: the form is gone and the API says why.
    browser = app.test_client()
    deliver(
        browser, fake_stripe.succeed(intent_on(browser.get(f"/store/balance/{token_in(mails[1])}")))
    )
    assert 'id="send-balance-link"' not in console.get(f"/admin/orders/{order['id']}").text
    assert owner_client.post(f"/orders/{order['id']}/balance/link").status_code == 409


def test_a_part_refused_after_another_went_back_keeps_the_refund_pending(
    app, owner_client, customer_client, fake_stripe
):
    """A split refund's second part refused (a dashboard refund the shop has not heard of
    yet took the balance intent's money) after its first went back: nothing is released,
    so a new refund cannot send the first part again; the same key sends the rest."""
    order = card_order_edited_up(app, owner_client, customer_client, fake_stripe)
    token = token_in(edit_mails(app, order)[0])
    browser = app.test_client()
    balance_intent = intent_on(browser.get(f"/store/balance/{token}"))
    deliver(browser, fake_stripe.succeed(balance_intent))
    unheard = fake_stripe.refund_in_dashboard(balance_intent, 1800)  # not delivered yet
    key = {"Idempotency-Key": "split-refused-1"}

    refused = owner_client.post(
        f"/orders/{order['id']}/refunds", json={"amount_cents": 2500}, headers=key
    )
    assert refused.status_code == 409, refused.json
    assert "after €10.00 of it went back" in refused.json["message"]
    [refund] = owner_client.get(f"/orders/{order['id']}/refunds").json["items"]
    assert refund["status"] == "pending"
    preview = owner_client.get(f"/orders/{order['id']}/refunds/preview").json
    assert preview["refundable_cents"] == 500  # the 2,500 stays taken
    again = owner_client.post(f"/orders/{order['id']}/refunds", json={"amount_cents": 2500})
    assert again.status_code == 400, again.json
    sent = [(r["payment_intent"], r["amount"]) for r in fake_stripe.refunds.values()]
    assert sent == [(balance_intent, 1800), (order_intent := sent[1][0], 1000)]
    with app.app_context():
        assert db.value("SELECT COUNT(*) FROM audit_log WHERE event = 'refund.partly_refused'") == 1

    # The dashboard's refund is heard of and recorded on its own; the pending refund's rest
    # cannot go (Stripe holds 200 of the balance intent), so a retry is refused again,
    # and the first part is never sent twice.
    deliver(browser, unheard)
    retried = owner_client.post(
        f"/orders/{order['id']}/refunds", json={"amount_cents": 2500}, headers=key
    )
    assert retried.status_code == 409, retried.json
    assert [r["payment_intent"] for r in fake_stripe.refunds.values()].count(order_intent) == 1
    shown = owner_client.get(f"/orders/{order['id']}/refunds").json["items"]
    assert sorted((r["amount_cents"], r["status"]) for r in shown) == [
        (1800, "succeeded"),
        (2500, "pending"),
    ]
