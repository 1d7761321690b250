"""Stripe's events under races and in odd shapes (issue 35: findings 2, 3, 5, 6 and 13).

Concurrent events of one order are run from threads released by a barrier, many orders per
test: on PostgreSQL they raced before each event took the order's lock (SQLite lets one
writer in at a time, so there they pass either way).
"""

import json
import time

import pytest

from tests.fake_stripe import deliver, settings, sign
from tests.orders_helpers import add_product, basket
from tests.payment_helpers import (
    audited,
    card_order,
    emitted,
    in_lockstep,
    like,
    paid_card_order,
    row,
    subscribe,
)


@pytest.fixture
def app(make_app, fake_stripe):
    return make_app(**settings(fake_stripe, WEBHOOKS_ALLOW_PRIVATE=True, WEBHOOKS_ALLOW_HTTP=True))


def _order(app, order_id) -> dict:
    return row(
        app,
        "SELECT o.status, o.refunded_cents, p.status AS payment, p.reference"
        " FROM orders o JOIN payments p ON p.order_id = o.id WHERE o.id = :id",
        id=order_id,
    )


def _stripe_events(app) -> int:
    return row(app, "SELECT COUNT(*) AS n FROM stripe_events")["n"]


def _both_at_once(app, pairs: list[tuple]) -> list[list[int]]:
    """Deliver each pair of events at the same moment, one pair after the other."""
    clients = [app.test_client(), app.test_client()]
    return in_lockstep(
        len(pairs),
        lambda r: deliver(clients[0], pairs[r][0]).status_code,
        lambda r: deliver(clients[1], pairs[r][1]).status_code,
    )


# -- finding 6: succeeded and payment_failed at once ---------------------------------------


def test_succeeded_and_failed_at_once_never_leave_a_paid_order_with_a_failed_payment(
    app, customer_client, fake_stripe
):
    """A customer whose cards were declined three times before one went through: Stripe
    sends the four events at once (before the lock, 5 to 13 orders in 30 ended paid with a
    failed payment on PostgreSQL)."""
    orders = [card_order(app, customer_client) for _ in range(30)]
    rounds = []
    for order in orders:
        intent = fake_stripe.intents[order["payment"]["reference"]]
        declined = {**intent, "last_payment_error": {"message": "Your card was declined."}}
        failed = [fake_stripe.event("payment_intent.payment_failed", declined) for _ in range(3)]
        rounds.append([fake_stripe.succeed(intent["id"]), *failed])
    clients = [app.test_client() for _ in range(4)]

    def sender(k):
        return lambda r: deliver(clients[k], rounds[r][k]).status_code

    assert in_lockstep(len(orders), *map(sender, range(4))) == [[200] * 4] * len(orders)
    for order in orders:
        state = _order(app, order["id"])
        assert (state["status"], state["payment"]) == ("paid", "paid"), order["number"]


# -- finding 5: two charge.refunded at once --------------------------------------------------


def test_two_dashboard_refund_events_at_once_record_what_stripe_holds(
    app, customer_client, owner_client, fake_stripe
):
    subscribe(owner_client, "order.refunded")
    orders = [paid_card_order(app, customer_client, fake_stripe, price=1000) for _ in range(10)]
    pairs = []
    for order in orders:
        intent_id = order["payment"]["reference"]
        first = fake_stripe.refund_in_dashboard(intent_id, 300)  # 3.00
        pairs.append((first, fake_stripe.refund_in_dashboard(intent_id, 400)))  # 7.00 in all
    assert _both_at_once(app, pairs) == [[200, 200]] * len(orders)
    for order in orders:
        url = f"/orders/{order['id']}/refunds"
        recorded = owner_client.get(url).json["items"]
        assert sorted(r["amount_cents"] for r in recorded) == [300, 400], recorded
        stripe_ids = {r["id"] for r in fake_stripe.refunds.values()}
        assert {r["reference"] for r in recorded} <= stripe_ids
        assert _order(app, order["id"])["refunded_cents"] == 700
        assert emitted(app, "order.refunded", order["id"]) == 2
        assert owner_client.get(url + "/preview").json["refundable_cents"] == 300
    # The rest can still be refunded, through Stripe.
    rest = owner_client.post(f"/orders/{orders[0]['id']}/refunds", json={"amount_cents": 300})
    assert rest.status_code == 201 and rest.json["status"] == "succeeded"
    # Delivered again, later and out of order: nothing more.
    for first, second in pairs[:3]:
        assert deliver(app.test_client(), second).json["duplicate"] is True
        assert deliver(app.test_client(), first).json["duplicate"] is True
    assert _order(app, orders[1]["id"])["refunded_cents"] == 700


def test_a_charge_event_without_its_refunds_reads_them_from_stripe(
    app, customer_client, owner_client, fake_stripe
):
    """API versions since 2022-11-15 leave ``refunds`` out of the charge: the handler lists
    them from Stripe (and answers 503 for Stripe to retry when it cannot)."""
    order = paid_card_order(app, customer_client, fake_stripe, price=1000)
    event = fake_stripe.refund_in_dashboard(order["payment"]["reference"], 250)
    del event["data"]["object"]["refunds"]
    fake_stripe.mode = "down"
    refused = deliver(app.test_client(), event)
    assert refused.status_code == 503 and refused.headers["Retry-After"]
    assert _stripe_events(app) == 1  # only the succeeded event: nothing of this one
    fake_stripe.mode = None
    assert deliver(app.test_client(), event).json == {"received": True, "duplicate": False}
    recorded = owner_client.get(f"/orders/{order['id']}/refunds").json["items"]
    assert [(r["amount_cents"], r["reference"]) for r in recorded] == [
        (250, next(iter(fake_stripe.refunds)))
    ]


# -- finding 2 (the event's side): a payment landing on a cancelled order --------------------


def test_a_payment_for_a_cancelled_order_goes_to_review_and_reconcile_lists_it(
    app, customer_client, owner_client, fake_stripe
):
    subscribe(owner_client, "order.payment_review")
    order = card_order(app, customer_client, price=1500)
    cancelled = customer_client.post(f"/orders/{order['id']}/cancel")
    assert cancelled.status_code == 200, cancelled.json
    event = fake_stripe.succeed(order["payment"]["reference"])
    assert deliver(app.test_client(), event).json == {"received": True, "duplicate": False}
    shown = owner_client.get(f"/orders/{order['id']}").json
    assert shown["status"] == "cancelled" and shown["payment"]["status"] == "review"
    assert audited(app, "payment.review", order["id"]) == 1
    assert emitted(app, "order.payment_review", order["id"]) == 1
    reason = row(app, "SELECT note FROM payments WHERE order_id = :id", id=order["id"])["note"]
    assert "was cancelled" in reason and order["payment"]["reference"] in reason
    runner = app.test_cli_runner()
    found = runner.invoke(args=["payments", "reconcile"])
    assert found.exit_code == 0, found.output
    assert "order cancelled here" in found.output and "1 difference(s) found" in found.output
    # --fix leaves it to a person (the money is Stripe's to give back), and says so.
    fixed = runner.invoke(args=["payments", "reconcile", "--fix"])
    assert "0 difference(s) fixed" in fixed.output and "1 difference(s) left" in fixed.output
    assert audited(app, "payment.review", order["id"]) == 1
    # The person refunds it in Stripe: recorded, the payment refunded, the order cancelled.
    refund = fake_stripe.refund_in_dashboard(order["payment"]["reference"], 1500)
    assert deliver(app.test_client(), refund).status_code == 200
    shown = owner_client.get(f"/orders/{order['id']}").json
    assert shown["status"] == "cancelled" and shown["payment"]["status"] == "refunded"
    assert "0 difference(s)" in runner.invoke(args=["payments", "reconcile"]).output


def test_cancelling_an_order_keeps_its_payment_in_review(
    app, customer_client, owner_client, fake_stripe
):
    order = card_order(app, customer_client, price=1200)
    short = fake_stripe.succeed(order["payment"]["reference"], amount=1199)
    assert deliver(app.test_client(), short).status_code == 200
    assert _order(app, order["id"])["payment"] == "review"
    cancelled = owner_client.patch(f"/orders/{order['id']}/status", json={"status": "cancelled"})
    assert cancelled.status_code == 200, cancelled.json
    assert cancelled.json["payment"]["status"] == "review"  # the money received is not hidden
    found = app.test_cli_runner().invoke(args=["payments", "reconcile"]).output
    assert "1199 received, 0 refunded), order cancelled here (payment review)" in found


def test_cancel_and_payment_at_once_end_paid_or_in_review_never_silent(
    app, customer_client, owner_client, fake_stripe
):
    orders = [card_order(app, customer_client) for _ in range(12)]
    events = [fake_stripe.succeed(order["payment"]["reference"]) for order in orders]
    customers, stripe = like(app, customer_client), app.test_client()
    answers = in_lockstep(
        len(orders),
        lambda r: customers.post(f"/orders/{orders[r]['id']}/cancel").status_code,
        lambda r: deliver(stripe, events[r]).status_code,
    )
    for order, (cancel, webhook) in zip(orders, answers, strict=True):
        assert webhook == 200
        state = _order(app, order["id"])
        if cancel == 200:
            assert (state["status"], state["payment"]) == ("cancelled", "review")
            assert audited(app, "payment.review", order["id"]) == 1
        else:
            assert cancel == 409
            assert (state["status"], state["payment"]) == ("paid", "paid")


# -- finding 3: only the provider marks a card order paid ------------------------------------


def test_a_card_order_cannot_be_marked_paid_by_hand(
    app, customer_client, owner_client, make_key, make_admin, fake_stripe
):
    order = card_order(app, customer_client)
    url = f"/orders/{order['id']}/status"
    refused = owner_client.patch(url, json={"status": "paid"})
    assert refused.status_code == 409
    assert "stripe confirms" in refused.json["message"] and "manual" in refused.json["message"]
    support = make_admin(role="support")
    assert support.patch(url, json={"status": "paid"}).status_code == 409
    assert make_key("write:order").patch(url, json={"status": "paid"}).status_code == 409
    ship = {"carrier": "UPS", "tracking_number": "1Z1"}
    assert owner_client.post(f"/orders/{order['id']}/shipments", json=ship).status_code == 409
    assert _order(app, order["id"])["status"] == "pending"
    # The console offers no "Mark paid" for it, and refuses the form if posted anyway.
    page = owner_client.get(f"/admin/orders/{order['id']}")
    assert page.status_code == 200 and 'id="mark-paid"' not in page.text
    # Stripe's word still pays it, once.
    assert deliver(app.test_client(), fake_stripe.succeed(order["payment"]["reference"]))
    assert _order(app, order["id"])["status"] == "paid"
    # A manual order is still marked paid by hand.
    manual = customer_client.post(
        "/payments/checkout", json=basket((order["product_id"], 1), method="manual")
    ).json
    moved = owner_client.patch(f"/orders/{manual['id']}/status", json={"status": "paid"})
    assert moved.status_code == 200 and moved.json["payment"]["status"] == "paid"


# -- finding 13: an intent that is not the order's, amounts, shapes, times -------------------


def test_an_intent_naming_another_orders_id_neither_pays_it_nor_takes_its_reference(
    app, customer_client, owner_client, fake_stripe
):
    order = card_order(app, customer_client, price=1000)
    ours = order["payment"]["reference"]
    stranger = fake_stripe.create_intent(1000, "eur", {"order_id": order["id"]})
    stranger["metadata"]["order_number"] = order["number"]
    event = fake_stripe.succeed(stranger["id"])
    assert deliver(app.test_client(), event).status_code == 200
    assert _order(app, order["id"]) == {
        "status": "pending",
        "refunded_cents": 0,
        "payment": "pending",
        "reference": ours,
    }
    found = app.test_cli_runner().invoke(args=["payments", "reconcile"])
    assert "not this order's" in found.output and stranger["id"] in found.output
    # The order's own intent still pays it.
    assert deliver(app.test_client(), fake_stripe.succeed(ours)).status_code == 200
    assert _order(app, order["id"])["status"] == "paid"


def test_an_intent_whose_creation_answer_was_lost_is_adopted_by_its_metadata(
    app, customer_client, fake_stripe
):
    fake_stripe.mode = "lose"  # Stripe makes the intent, its answer never arrives
    product = add_product(app, price_cents=800, stock=5)
    body = basket((product, 1), method="stripe")
    assert customer_client.post("/payments/checkout", json=body).status_code == 503
    order = row(app, "SELECT id FROM orders")
    fake_stripe.mode = None
    assert _order(app, order["id"])["reference"] == ""
    (intent_id,) = fake_stripe.intents
    assert deliver(app.test_client(), fake_stripe.succeed(intent_id)).status_code == 200
    state = _order(app, order["id"])
    assert (state["status"], state["payment"], state["reference"]) == ("paid", "paid", intent_id)


def test_amount_received_zero_is_not_paid(app, customer_client, owner_client, fake_stripe):
    order = card_order(app, customer_client, price=1000)
    event = fake_stripe.succeed(order["payment"]["reference"], amount=0)
    assert event["data"]["object"]["amount"] == 1000
    assert deliver(app.test_client(), event).status_code == 200
    state = _order(app, order["id"])
    assert (state["status"], state["payment"]) == ("pending", "review")


MALFORMED = [
    ("payment_intent.succeeded", lambda e: e.update(data=[e["data"]]), "data.object"),
    ("payment_intent.succeeded", lambda e: e["data"].update(object="pi"), "data.object"),
    ("payment_intent.succeeded", lambda e: e["data"]["object"].update(metadata=[1]), "metadata"),
    (
        "payment_intent.succeeded",
        lambda e: e["data"]["object"]["metadata"].update(order_id={"x": 1}),
        "order_id",
    ),
    ("payment_intent.succeeded", lambda e: e["data"]["object"].pop("id"), ".id"),
    (
        "payment_intent.succeeded",
        lambda e: e["data"]["object"].update(amount_received="1000"),
        "amount_received",
    ),
    (
        "payment_intent.payment_failed",
        lambda e: e["data"]["object"].update(last_payment_error="declined"),
        "last_payment_error",
    ),
    ("charge.refunded", lambda e: e["data"]["object"].update(amount_refunded="700"), "amount"),
    ("charge.refunded", lambda e: e["data"]["object"].pop("payment_intent"), "payment_intent"),
    (
        "charge.refunded",
        lambda e: e["data"]["object"]["refunds"]["data"][0].update(amount=None),
        "refunds.data[0].amount",
    ),
    ("charge.refunded", lambda e: e["data"]["object"]["refunds"].update(data={}), "refunds"),
    ("payment_intent.succeeded", lambda e: e.update(type=7), "type"),
]


@pytest.mark.parametrize(("kind", "spoil", "named"), MALFORMED)
def test_a_signed_but_malformed_event_is_400_and_writes_nothing(
    app, customer_client, fake_stripe, kind, spoil, named
):
    order = paid_card_order(app, customer_client, fake_stripe, price=1000)
    intent_id = order["payment"]["reference"]
    if kind == "charge.refunded":
        event = fake_stripe.refund_in_dashboard(intent_id, 100)
    else:
        event = fake_stripe.event(kind, dict(fake_stripe.intents[intent_id]))
    spoil(event)
    before = (_order(app, order["id"]), _stripe_events(app))
    answer = deliver(app.test_client(), event)
    assert answer.status_code == 400, answer.json
    assert "Malformed Stripe event" in answer.json["message"] and named in answer.json["message"]
    assert (_order(app, order["id"]), _stripe_events(app)) == before


def test_a_body_that_is_not_an_object_is_400(app, fake_stripe):
    for body in ("[]", '"evt"', "3", "{"):
        answer = app.test_client().post(
            "/payments/stripe/webhook",
            data=body,
            headers={"Stripe-Signature": sign(body), "Content-Type": "application/json"},
        )
        assert answer.status_code == 400, (body, answer.json)


def test_a_signature_dated_in_the_future_is_refused(app, customer_client, fake_stripe):
    order = card_order(app, customer_client)
    event = fake_stripe.succeed(order["payment"]["reference"])
    client = app.test_client()
    ahead = deliver(client, event, at=int(time.time()) + 3600)
    assert ahead.status_code == 400 and "Stripe-Signature" in ahead.json["message"]
    assert _order(app, order["id"])["status"] == "pending" and _stripe_events(app) == 0
    payload = json.dumps(event)  # a clock a minute fast is within the tolerance
    skewed = client.post(
        "/payments/stripe/webhook",
        data=payload,
        headers={"Stripe-Signature": sign(payload, at=int(time.time()) + 60)},
    )
    assert skewed.status_code == 200 and _order(app, order["id"])["status"] == "paid"
