"""Cancelled card orders cancel their PaymentIntent, and unpaid card orders expire (issue 35,
findings 2 and 9), against the local fake Stripe (tests/fake_stripe.py), on both engines."""

import json
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from shop import db
from shop.cli import jobs
from shop.payments.stripe import gateway as stripe_gateway
from tests.fake_stripe import deliver, settings
from tests.orders_helpers import add_product, basket, product_row
from tests.webhook_helpers import create_hook

TTL = 3600  # the default of SHOP_UNPAID_ORDER_TTL


HOOK = "http://127.0.0.1:9/hook"  # nothing listens: the events are counted, not sent


@pytest.fixture
def app(make_app, fake_stripe):
    """The shop with the card method on the fake Stripe; webhooks to this machine allowed."""
    return make_app(**settings(fake_stripe, WEBHOOKS_ALLOW_PRIVATE=True, WEBHOOKS_ALLOW_HTTP=True))


def _checkout(app, client, product=None, quantity=1, method="stripe", code=None):
    product = product or add_product(app, price_cents=1500, stock=10)
    body = basket((product, quantity), method=method)
    if code:
        body["discount_code"] = code
    return client.post("/payments/checkout", json=body)


def run_jobs(app):
    """``flask jobs run --once``: the worker's periodic jobs, as the Procfile runs them."""
    result = app.test_cli_runner().invoke(args=["jobs", "run", "--once"])
    assert result.exit_code == 0, result.output


def _state(app, order_id) -> dict:
    with app.app_context():
        return db.one(
            "SELECT o.status, p.status AS payment, p.reference"
            " FROM orders o JOIN payments p ON p.order_id = o.id WHERE o.id = :id",
            {"id": order_id},
        )


def _provider_cancel(app, order_id) -> str | None:
    """Where the cancel of the order's intent at Stripe stands (migration 0023)."""
    with app.app_context():
        return db.value(
            "SELECT provider_cancel FROM payments WHERE order_id = :id", {"id": order_id}
        )


def _cancel_calls(fake, intent_id) -> int:
    return fake.calls.count(("POST", f"/v1/payment_intents/{intent_id}/cancel"))


def _events(app, kind) -> list[dict]:
    with app.app_context():
        rows = db.query("SELECT payload FROM webhook_events WHERE type = :t", {"t": kind})
    return [json.loads(row["payload"]) for row in rows]


# -- finding 2: a cancel cancels the intent; no payment starts for a cancelled order ---------


def test_a_customers_cancel_cancels_the_intent_and_no_payment_starts_after(
    app, customer_client, fake_stripe
):
    order = _checkout(app, customer_client).json
    intent_id = order["payment"]["reference"]
    cancelled = customer_client.post(f"/orders/{order['id']}/cancel")
    assert cancelled.status_code == 200 and cancelled.json["status"] == "cancelled"
    intent = fake_stripe.intents[intent_id]
    assert intent["status"] == "canceled"
    assert intent["cancellation_reason"] == "requested_by_customer"
    # The storefront asks to pay the cancelled order: 409, no secret, and nothing at Stripe.
    calls = len(fake_stripe.calls)
    again = customer_client.post(f"/orders/{order['id']}/payment")
    assert again.status_code == 409 and "client_secret" not in again.json
    assert "cancelled" in again.json["message"] and order["number"] in again.json["message"]
    assert len(fake_stripe.calls) == calls
    assert _cancel_calls(fake_stripe, intent_id) == 1
    assert _provider_cancel(app, order["id"]) == "cancelled"


def test_a_staff_cancel_cancels_the_intent(app, customer_client, owner_client, fake_stripe):
    order = _checkout(app, customer_client).json
    moved = owner_client.patch(f"/orders/{order['id']}/status", json={"status": "cancelled"})
    assert moved.status_code == 200
    intent = fake_stripe.intents[order["payment"]["reference"]]
    assert intent["status"] == "canceled" and intent["cancellation_reason"] == "abandoned"
    assert customer_client.post(f"/orders/{order['id']}/payment").status_code == 409


def test_stripe_down_at_the_cancel_keeps_it_cancelled_and_the_worker_cancels_the_intent(
    app, customer_client, fake_stripe
):
    order = _checkout(app, customer_client).json
    intent_id = order["payment"]["reference"]
    fake_stripe.mode = "down"
    cancelled = customer_client.post(f"/orders/{order['id']}/cancel")
    assert cancelled.status_code == 200 and cancelled.json["status"] == "cancelled"
    assert fake_stripe.intents[intent_id]["status"] == "requires_payment_method"
    paying = customer_client.post(f"/orders/{order['id']}/payment")
    assert paying.status_code == 409 and "client_secret" not in paying.json
    assert _provider_cancel(app, order["id"]) == "due"
    run_jobs(app)  # still down: it stays due
    assert _provider_cancel(app, order["id"]) == "due"
    fake_stripe.mode = None
    run_jobs(app)
    assert fake_stripe.intents[intent_id]["status"] == "canceled"
    assert fake_stripe.intents[intent_id]["cancellation_reason"] == "requested_by_customer"
    assert _provider_cancel(app, order["id"]) == "cancelled"
    run_jobs(app)  # settled: never asked again
    assert _cancel_calls(fake_stripe, intent_id) == 3


def test_stripe_refusing_the_cancel_is_recorded_once_and_its_key_refusal_waits(
    app, customer_client, fake_stripe
):
    order = _checkout(app, customer_client).json
    intent_id = order["payment"]["reference"]
    fake_stripe.refuse("secret_key_invalid", status=401, kind="authentication_error")
    assert customer_client.post(f"/orders/{order['id']}/cancel").status_code == 200
    run_jobs(app)  # the shop's own key refused: nothing known, it stays due
    assert _provider_cancel(app, order["id"]) == "due"
    fake_stripe.refuse("resource_missing", status=404)
    run_jobs(app)  # Stripe refuses the cancel itself: recorded, never asked again
    assert _provider_cancel(app, order["id"]) == "refused"
    calls = _cancel_calls(fake_stripe, intent_id)
    fake_stripe.mode = None
    run_jobs(app)
    assert _cancel_calls(fake_stripe, intent_id) == calls


def test_an_unpaid_order_whose_intent_stripe_does_not_know_expires(
    app, customer_client, fake_stripe, clock
):
    order = _checkout(app, customer_client).json
    clock.advance(TTL + 1)
    fake_stripe.refuse("secret_key_invalid", status=401, kind="authentication_error")
    run_jobs(app)  # nothing known while the key is refused: it waits
    assert _state(app, order["id"])["status"] == "pending"
    fake_stripe.refuse("resource_missing", status=404)
    run_jobs(app)
    assert _state(app, order["id"])["status"] == "cancelled"


def test_an_intent_that_succeeded_first_is_not_cancelled_and_not_retried(
    app, customer_client, fake_stripe
):
    order = _checkout(app, customer_client).json
    intent_id = order["payment"]["reference"]
    fake_stripe.succeed(intent_id)  # paid at Stripe, its webhook not here yet
    assert customer_client.post(f"/orders/{order['id']}/cancel").status_code == 200
    assert fake_stripe.intents[intent_id]["status"] == "succeeded"
    assert _cancel_calls(fake_stripe, intent_id) == 1
    assert _state(app, order["id"])["status"] == "cancelled"
    assert _provider_cancel(app, order["id"]) == "succeeded"
    run_jobs(app)
    assert _cancel_calls(fake_stripe, intent_id) == 1


def test_a_payment_start_overtaken_by_a_cancel_cancels_its_new_intent(
    app, customer_client, fake_stripe, monkeypatch
):
    product = add_product(app, price_cents=900, stock=5)
    fake_stripe.mode = "down"
    assert _checkout(app, customer_client, product).status_code == 503  # no intent yet
    fake_stripe.mode = None
    with app.app_context():
        order_id = db.value("SELECT id FROM orders")
    canceller, create = app.test_client(), stripe_gateway.create_intent
    for cookie in customer_client._cookies.values():
        canceller.set_cookie(cookie.key, cookie.value, domain=cookie.domain, path=cookie.path)
    answers = []

    def create_then_cancel(order):
        """Stripe makes the intent; the customer's cancel commits before it is recorded."""
        intent = create(order)
        thread = threading.Thread(
            target=lambda: answers.append(canceller.post(f"/orders/{order_id}/cancel"))
        )
        thread.start()
        thread.join(timeout=30)
        return intent

    monkeypatch.setattr(stripe_gateway, "create_intent", create_then_cancel)
    paying = customer_client.post(f"/orders/{order_id}/payment")
    assert [a.status_code for a in answers] == [200]
    assert paying.status_code == 409 and "client_secret" not in paying.json
    (intent,) = fake_stripe.intents.values()
    assert intent["status"] == "canceled"
    assert _state(app, order_id) == {
        "status": "cancelled",
        "payment": "cancelled",
        "reference": intent["id"],
    }
    assert _provider_cancel(app, order_id) == "cancelled"


# -- finding 9: unpaid card orders expire -----------------------------------------------------


def test_an_unpaid_card_order_expires_after_the_ttl(
    app, customer_client, owner_client, make_customer, fake_stripe, clock
):
    create_hook(owner_client, HOOK, "order.cancelled")
    body = {"code": "LAST", "kind": "fixed", "value": 300, "usage_limit": 1}
    assert owner_client.post("/discounts", json=body).status_code == 201
    product = add_product(app, price_cents=1500, stock=3)
    card = _checkout(app, customer_client, product, quantity=2, code="LAST").json
    assert card["discount_cents"] == 300
    transfer = _checkout(app, make_customer(), product, quantity=1, method="manual").json
    assert product_row(app, product)["stock"] == 0

    clock.advance(TTL - 1)
    run_jobs(app)  # not yet
    assert _state(app, card["id"])["status"] == "pending"
    assert _events(app, "order.cancelled") == []

    clock.advance(2)
    run_jobs(app)
    shown = owner_client.get(f"/orders/{card['id']}").json
    assert shown["status"] == "cancelled" and shown["payment"]["status"] == "cancelled"
    entry = shown["status_history"][-1]
    assert entry["by"] == {"kind": "system", "id": None, "label": "unpaid order expiry"}
    assert "Not paid within 60 minutes" in entry["note"]
    (event,) = _events(app, "order.cancelled")
    assert json.dumps(event).count("Not paid within 60 minutes") == 1
    assert product_row(app, product)["stock"] == 2  # the card order's 2, not the transfer's
    intent = fake_stripe.intents[card["payment"]["reference"]]
    assert intent["status"] == "canceled" and intent["cancellation_reason"] == "abandoned"
    # The code's one use is back: another customer's checkout may use it.
    again = _checkout(app, make_customer(), product, quantity=1, code="LAST")
    assert again.status_code == 201 and again.json["discount_cents"] == 300
    # Bank transfers wait for the transfer, however long.
    clock.advance(30 * 24 * 3600)
    run_jobs(app)
    assert _state(app, transfer["id"])["status"] == "pending"
    assert len(_events(app, "order.cancelled")) == 2  # the second card order expired too


def test_an_order_stripe_never_saw_expires_without_asking_it(
    app, customer_client, fake_stripe, clock
):
    product = add_product(app, price_cents=900, stock=1)
    fake_stripe.mode = "down"
    assert _checkout(app, customer_client, product).status_code == 503
    with app.app_context():
        order_id = db.value("SELECT id FROM orders")
    clock.advance(TTL + 1)
    run_jobs(app)  # Stripe still down: this order needs no call
    state = _state(app, order_id)
    assert state["status"] == "cancelled" and state["reference"] == ""
    assert product_row(app, product)["stock"] == 1
    fake_stripe.mode = None
    assert customer_client.post(f"/orders/{order_id}/payment").status_code == 409
    assert fake_stripe.intents == {}


def test_an_intent_paid_meanwhile_is_settled_not_cancelled(
    app, customer_client, owner_client, fake_stripe, clock
):
    create_hook(owner_client, HOOK, "order.paid", "order.cancelled")
    product = add_product(app, price_cents=1500, stock=5)
    order = _checkout(app, customer_client, product).json
    intent_id = order["payment"]["reference"]
    event = fake_stripe.succeed(intent_id)  # paid; the webhook is late
    clock.advance(TTL + 1)
    run_jobs(app)
    assert _state(app, order["id"])["status"] == "paid"
    assert fake_stripe.intents[intent_id]["status"] == "succeeded"
    assert _cancel_calls(fake_stripe, intent_id) == 0
    assert product_row(app, product)["stock"] == 4
    assert deliver(app.test_client(), event).status_code == 200  # the late webhook: nothing more
    assert len(_events(app, "order.paid")) == 1 and _events(app, "order.cancelled") == []


def test_stripe_down_during_expiry_is_retried_on_the_next_pass(
    app, customer_client, fake_stripe, clock
):
    product = add_product(app, price_cents=1500, stock=5)
    order = _checkout(app, customer_client, product).json
    intent_id = order["payment"]["reference"]
    clock.advance(TTL + 1)
    fake_stripe.mode = "down"
    run_jobs(app)
    assert _state(app, order["id"])["status"] == "pending"  # not cancelled blind
    assert product_row(app, product)["stock"] == 4
    fake_stripe.mode = None
    run_jobs(app)
    assert _state(app, order["id"])["status"] == "cancelled"
    assert _provider_cancel(app, order["id"]) == "cancelled"
    assert fake_stripe.intents[intent_id]["status"] == "canceled"
    assert product_row(app, product)["stock"] == 5


def test_two_workers_expiring_at_once_cancel_each_order_once(
    app, make_customer, owner_client, fake_stripe, clock
):
    create_hook(owner_client, HOOK, "order.cancelled")
    product = add_product(app, price_cents=1000, stock=20)
    orders = [_checkout(app, make_customer(), product, quantity=2).json for _ in range(4)]
    clock.advance(TTL + 1)
    barrier = threading.Barrier(2)

    def worker(_):
        """One worker's pass of the job (``flask jobs run`` runs it on its main thread)."""
        with app.app_context():
            try:
                barrier.wait(timeout=30)
                jobs.unpaid_card_orders()
            finally:
                app.extensions["shop.db"].close()

    with ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(worker, range(2)))  # a worker's exception is raised here
    assert product_row(app, product)["stock"] == 20
    assert len(_events(app, "order.cancelled")) == 4
    with app.app_context():
        assert db.value("SELECT COUNT(*) FROM order_status_history WHERE status = 'cancelled'") == 4
    for order in orders:
        assert fake_stripe.intents[order["payment"]["reference"]]["status"] == "canceled"
