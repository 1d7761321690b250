"""A return of a card order is refunded through Stripe, once: Stripe down leaves the return
received with its refund owed, and receiving again makes that same refund."""

import pytest

from shop import db
from tests.fake_stripe import settings
from tests.payment_helpers import paid_card_order
from tests.returns.test_returns import _ask


@pytest.fixture
def app(make_app, fake_stripe):
    return make_app(**settings(fake_stripe))


def test_stripe_down_then_the_same_refund_once(app, customer_client, owner_client, fake_stripe):
    order = paid_card_order(app, customer_client, fake_stripe, price=1500, quantity=2)
    shipped = owner_client.post(
        f"/orders/{order['id']}/shipments", json={"carrier": "UPS", "tracking_number": "1Z"}
    )
    assert shipped.status_code == 201, shipped.json
    ret = _ask(customer_client, order["id"], (1, 1)).json
    assert owner_client.post(f"/returns/{ret['id']}/approve", json={}).status_code == 200
    url, body = f"/returns/{ret['id']}/receive", {"restock": True, "refund": True}
    fake_stripe.mode = "down"
    down = owner_client.post(url, json=body)
    assert down.status_code == 503 and down.headers["Retry-After"], down.json
    owed = owner_client.get(f"/returns/{ret['id']}").json
    assert owed["status"] == "received" and owed["refund_id"] is None
    fake_stripe.mode = None
    made = owner_client.post(url, json=body)
    assert made.status_code == 200 and made.json["refund_id"], made.json
    refunds = owner_client.get(f"/orders/{order['id']}/refunds").json["items"]
    assert [(r["amount_cents"], r["provider"], r["status"]) for r in refunds] == [
        (1500, "stripe", "succeeded")
    ]
    assert len(fake_stripe.refunds) == 1
    again = owner_client.post(url, json=body)
    assert again.status_code == 409 and "received" in again.json["message"]
    with app.app_context():
        assert db.value("SELECT COUNT(*) FROM refunds") == 1
