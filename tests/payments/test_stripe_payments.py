"""Card payments through Stripe (issue 27), against the local fake (tests/fake_stripe.py)."""

import json
import threading
import time

import pytest

from shop import db
from tests.fake_stripe import deliver, settings, sign
from tests.orders_helpers import add_product, basket


@pytest.fixture
def app(make_app, fake_stripe):
    return make_app(**settings(fake_stripe, WEBHOOKS_ALLOW_PRIVATE=True, WEBHOOKS_ALLOW_HTTP=True))


def _subscribe(owner, *events):
    hook = {"url": "http://127.0.0.1:9/hook", "events": list(events)}
    assert owner.post("/webhooks", json=hook).status_code == 201


def _emitted(app, kind):
    with app.app_context():
        return db.value("SELECT COUNT(*) FROM webhook_events WHERE type = :t", {"t": kind})


def _checkout(app, client, price=1200, quantity=1, headers=None):
    product = add_product(app, price_cents=price, stock=50)
    return client.post(
        "/payments/checkout", json=basket((product, quantity), method="stripe"), headers=headers
    )


def _counts(app, order_id):
    with app.app_context():
        return {
            "status": db.value("SELECT status FROM orders WHERE id = :id", {"id": order_id}),
            "paid_history": db.value(
                "SELECT COUNT(*) FROM order_status_history WHERE order_id = :id"
                " AND status = 'paid'",
                {"id": order_id},
            ),
            "events": db.value("SELECT COUNT(*) FROM stripe_events"),
            "receipts": db.value("SELECT COUNT(*) FROM mail_outbox WHERE subject LIKE '%is paid'"),
            "audit_paid": db.value(
                "SELECT COUNT(*) FROM audit_log WHERE event = 'order.status_changed'"
                ' AND details LIKE \'%"to": "paid"%\''
            ),
        }


def test_checkout_creates_the_intent_after_the_commit(app, customer_client, fake_stripe):
    response = _checkout(app, customer_client, price=1200, quantity=2)
    assert response.status_code == 201, response.json
    order = response.json
    payment = order["payment"]
    assert payment["provider"] == "stripe" and payment["status"] == "pending"
    intent = fake_stripe.intents[payment["reference"]]
    assert payment["client_secret"] == intent["client_secret"]
    assert intent["amount"] == order["total_cents"] == 2400
    assert intent["currency"] == order["currency"].lower()
    assert intent["metadata"]["order_id"] == order["id"]
    # The storefront's confirm before payment: still pending, the same intent.
    again = customer_client.post(f"/orders/{order['id']}/payment")
    assert again.status_code == 200
    assert again.json["reference"] == payment["reference"]
    assert len(fake_stripe.intents) == 1


def _like(app, client):
    """Another test client with ``client``'s cookies (one per thread)."""
    twin = app.test_client()
    for cookie in client._cookies.values():
        twin.set_cookie(cookie.key, cookie.value, domain=cookie.domain, path=cookie.path)
    return twin


def test_webhook_and_confirm_racing_from_20_threads_pay_once(
    app, customer_client, owner_client, fake_stripe
):
    _subscribe(owner_client, "order.paid")
    order = _checkout(app, customer_client).json
    event = fake_stripe.succeed(order["payment"]["reference"])
    clients = [app.test_client() for _ in range(10)] + [
        _like(app, customer_client) for _ in range(10)
    ]
    barrier, answers = threading.Barrier(20), []

    def run(n):
        barrier.wait(timeout=30)
        if n < 10:
            answers.append(deliver(clients[n], event).status_code)
        else:
            answers.append(clients[n].post(f"/orders/{order['id']}/payment").status_code)

    threads = [threading.Thread(target=run, args=(n,)) for n in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sorted(answers) == [200] * 20
    counts = _counts(app, order["id"])
    assert counts == {**counts, "status": "paid", "paid_history": 1, "receipts": 1}
    assert counts["audit_paid"] == 1 and counts["events"] == 1
    assert _emitted(app, "order.paid") == 1
    # An administrator's mark-paid afterwards: a 409, nothing more.
    late = owner_client.patch(f"/orders/{order['id']}/status", json={"status": "paid"})
    assert late.status_code == 409
    assert _emitted(app, "order.paid") == 1


def test_the_same_webhook_five_times_changes_nothing_more(app, customer_client, fake_stripe):
    order = _checkout(app, customer_client).json
    event = fake_stripe.succeed(order["payment"]["reference"])
    first = deliver(app.test_client(), event)
    assert first.json == {"received": True, "duplicate": False}
    after_first = _counts(app, order["id"])
    for _ in range(4):
        again = deliver(app.test_client(), event)
        assert again.status_code == 200 and again.json["duplicate"] is True
    assert _counts(app, order["id"]) == after_first
    assert after_first["status"] == "paid" and after_first["receipts"] == 1


def test_a_bad_or_stale_signature_is_400_and_writes_nothing(app, customer_client, fake_stripe):
    order = _checkout(app, customer_client).json
    event = fake_stripe.succeed(order["payment"]["reference"])
    client = app.test_client()
    before = _counts(app, order["id"])
    assert deliver(client, event, secret="whsec_wrong_secret_000000").status_code == 400
    assert deliver(client, event, at=int(time.time()) - 301).status_code == 400
    payload = json.dumps(event)
    tampered = client.post(
        "/payments/stripe/webhook",
        data=payload.replace('"succeeded"', '"canceled"', 1),
        headers={"Stripe-Signature": sign(payload), "Content-Type": "application/json"},
    )
    assert tampered.status_code == 400
    unsigned = client.post("/payments/stripe/webhook", data=payload)
    assert unsigned.status_code == 400 and "Stripe-Signature" in unsigned.json["message"]
    assert _counts(app, order["id"]) == before
    assert before["status"] == "pending" and before["events"] == 0


def test_an_amount_or_currency_mismatch_goes_to_review_not_paid(
    app, customer_client, owner_client, fake_stripe
):
    _subscribe(owner_client, "order.payment_review")
    for n, (amount, currency) in enumerate([(1199, None), (None, "usd")], start=1):
        order = _checkout(app, customer_client).json
        event = fake_stripe.succeed(order["payment"]["reference"], amount, currency)
        assert deliver(app.test_client(), event).status_code == 200
        shown = owner_client.get(f"/orders/{order['id']}").json
        assert shown["status"] == "pending" and shown["payment"]["status"] == "review"
        assert _emitted(app, "order.payment_review") == n
        with app.app_context():
            reason = db.value(
                "SELECT details FROM audit_log WHERE event = 'payment.review'"
                " AND details LIKE :number",
                {"number": f"%{order['number']}%"},
            )
        assert "PaymentIntent" in reason and (currency or "").upper() in reason


def test_stripe_unreachable_at_checkout_is_503_and_the_retry_starts_it_once(
    app, customer_client, fake_stripe
):
    product = add_product(app, price_cents=900, stock=5)
    fake_stripe.mode = "down"
    response = customer_client.post(
        "/payments/checkout", json=basket((product, 1), method="stripe")
    )
    assert response.status_code == 503 and int(response.headers["Retry-After"]) > 0
    assert "POST /orders/" in response.json["message"]
    with app.app_context():
        order = db.one("SELECT id, status FROM orders")
    assert order["status"] == "pending" and fake_stripe.intents == {}
    assert customer_client.post(f"/orders/{order['id']}/payment").status_code == 503
    fake_stripe.mode = None
    first = customer_client.post(f"/orders/{order['id']}/payment")
    second = customer_client.post(f"/orders/{order['id']}/payment")
    assert first.status_code == second.status_code == 200
    assert first.json["client_secret"] == second.json["client_secret"]
    assert len(fake_stripe.intents) == 1
    created = [c for c in fake_stripe.calls if c == ("POST", "/v1/payment_intents")]
    assert len(created) == 3  # two refused while down, one that made it


def test_failed_and_cancelled_intents_and_the_method_only_when_configured(
    app, make_app, customer_client, fake_stripe
):
    order = _checkout(app, customer_client).json
    intent = fake_stripe.intents[order["payment"]["reference"]]
    failed = fake_stripe.event(
        "payment_intent.payment_failed",
        {**intent, "last_payment_error": {"message": "Your card was declined."}},
    )
    assert deliver(app.test_client(), failed).status_code == 200
    with app.app_context():
        assert db.value("SELECT status FROM payments") == "failed"
    cancelled = fake_stripe.event("payment_intent.canceled", intent)
    assert deliver(app.test_client(), cancelled).status_code == 200
    with app.app_context():
        assert db.value("SELECT status FROM payments") == "cancelled"
        assert db.value("SELECT status FROM orders") == "pending"
    plain = make_app()
    assert plain.test_client().post("/payments/stripe/webhook", data="{}").status_code == 404
