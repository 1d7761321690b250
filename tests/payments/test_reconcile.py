"""``flask payments reconcile`` both ways (issue 35): Stripe above us is fixed from Stripe's
word, us above Stripe and status disagreements are reported for a person."""

import json

import pytest

from tests.fake_stripe import deliver, settings
from tests.payment_helpers import paid_card_order, row


@pytest.fixture
def app(make_app, fake_stripe):
    return make_app(**settings(fake_stripe))


def _reconcile(app, *args) -> tuple[list[dict], list[str]]:
    result = app.test_cli_runner().invoke(args=["payments", "reconcile", *args])
    assert result.exit_code == 0, result.output
    lines = result.output.strip().splitlines()
    found = [json.loads(line) for line in lines if line.startswith("{")]
    return found, [line for line in lines if not line.startswith("{")]


def test_more_refunded_here_than_at_stripe_is_reported_not_fixed(
    app, customer_client, owner_client, fake_stripe
):
    order = paid_card_order(app, customer_client, fake_stripe, price=2000)
    url = f"/orders/{order['id']}/refunds"
    made = owner_client.post(url, json={"amount_cents": 300})
    assert made.status_code == 201 and made.json["status"] == "succeeded"
    fake_stripe.refunds.clear()  # Stripe holds no refund of it (a support case to look at)
    fake_stripe.mode = "down"
    assert owner_client.post(url, json={"amount_cents": 500}).status_code == 503
    fake_stripe.mode = None  # the 500 stays pending, reserved, never sent
    found, summary = _reconcile(app)
    assert found == [
        {
            "order": order["number"],
            "intent": order["payment"]["reference"],
            "difference": "refunded 0 at Stripe, 800 recorded here (500 of it in refunds"
            " pending, not confirmed by Stripe)",
            "fixable": False,
        }
    ]
    assert summary == ["1 difference(s) found."]
    found, summary = _reconcile(app, "--fix")
    assert [item["fixed"] for item in found] == [False]
    assert summary == ["0 difference(s) fixed.", "1 difference(s) left to a person."]
    assert row(app, "SELECT refunded_cents FROM orders")["refunded_cents"] == 800


def test_paid_here_but_not_at_stripe_is_reported(app, customer_client, fake_stripe):
    order = paid_card_order(app, customer_client, fake_stripe)
    # Stripe says otherwise (say, an order of an earlier release marked paid by hand).
    fake_stripe.intents[order["payment"]["reference"]]["status"] = "requires_payment_method"
    found, _ = _reconcile(app, "--fix")
    assert [(item["difference"], item["fixed"]) for item in found] == [
        ("paid here, requires_payment_method at Stripe", False)
    ]
    assert row(app, "SELECT status FROM orders")["status"] == "paid"


def test_refunds_made_at_stripe_are_recorded_by_their_ids_once(
    app, customer_client, owner_client, fake_stripe
):
    order = paid_card_order(app, customer_client, fake_stripe, price=2000)
    intent_id = order["payment"]["reference"]
    late = [
        fake_stripe.refund_in_dashboard(intent_id, 300),
        fake_stripe.refund_in_dashboard(intent_id, 450),
    ]  # their events have not arrived
    found, _ = _reconcile(app)
    assert [item["difference"] for item in found] == ["refunded 750 at Stripe, 0 recorded"]
    found, summary = _reconcile(app, "--fix")
    assert summary == ["1 difference(s) fixed."]
    recorded = owner_client.get(f"/orders/{order['id']}/refunds").json["items"]
    assert sorted((r["amount_cents"], r["reference"]) for r in recorded) == sorted(
        (r["amount"], r["id"]) for r in fake_stripe.refunds.values()
    )
    for event in late:  # the events, at last
        assert deliver(app.test_client(), event).status_code == 200
    assert row(app, "SELECT refunded_cents FROM orders")["refunded_cents"] == 750
    assert _reconcile(app) == ([], ["0 difference(s) found."])
