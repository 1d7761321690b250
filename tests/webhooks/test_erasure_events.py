"""An erased customer's data in the webhook outbox, through the API, the worker and a real
HTTP receiver on 127.0.0.1, both engines: events still pending and replays of delivered ones
send the personal fields null; receivers hear of the erasure (``customer.erased``)."""

import json

import pytest

from shop import db
from shop.webhooks.redaction import blank
from tests.orders_helpers import ADDRESS, add_product, basket
from tests.webhook_helpers import Receiver, create_hook, deliveries, work


@pytest.fixture
def app(make_app):
    return make_app(WEBHOOKS_ALLOW_PRIVATE=True, WEBHOOKS_ALLOW_HTTP=True)


@pytest.fixture
def receiver():
    with Receiver() as server:
        yield server


def test_an_erased_customers_events_send_no_personal_data(
    app, owner_client, make_customer, receiver
):
    hook = create_hook(
        owner_client,
        receiver.url,
        "customer.registered",
        "order.placed",
        "order.cancelled",
        "customer.erased",
    )
    customer = make_customer(email="Erin.Erased@example.com", name="Erin Erased")
    other = make_customer(email="other@example.com", name="Otto Other")
    teapot = add_product(app, name="Brown Teapot", price_cents=1500)
    order = customer.post("/payments/checkout", json=basket((teapot, 2))).json
    kept = other.post("/payments/checkout", json=basket((teapot, 1))).json
    work(app)  # delivered before the erasure: a replay must not send the data again
    assert customer.post(f"/orders/{order['id']}/cancel").status_code == 200  # pending
    customer_id = customer.user["id"]

    assert owner_client.delete(f"/customers/{customer_id}").status_code == 204
    work(app)
    by_type = {}
    for event in receiver.events():
        by_type.setdefault(event["type"], []).append(event["data"])
    assert by_type["customer.erased"] == [
        {"id": customer_id, "erased_at": by_type["customer.erased"][0]["erased_at"]}
    ]
    cancelled = by_type["order.cancelled"][0]  # queued before the erasure, sent after it
    assert cancelled["customer"] == {"id": customer_id, "email": None, "name": None}
    assert cancelled["shipping_address"] is None
    assert [(i["name"], i["quantity"]) for i in cancelled["items"]] == [("Brown Teapot", 2)]
    assert cancelled["total_cents"] == order["total_cents"]

    # A replay of the order's and the registration's first deliveries sends them blanked.
    receiver.requests.clear()
    done = {d["event_type"]: d for d in deliveries(owner_client, hook["id"])}
    for event_type in ("order.placed", "customer.registered"):
        replay = owner_client.post(
            f"/webhooks/{hook['id']}/deliveries/{done[event_type]['id']}/retry"
        )
        assert replay.status_code == 202, replay.json
    work(app)
    sent = {e["type"]: e["data"] for e in receiver.events()}
    assert sent["customer.registered"]["email"] is None
    assert sent["customer.registered"]["name"] is None
    assert sent["order.placed"]["customer"]["email"] is None
    assert sent["order.placed"]["items"][0]["name"] == "Brown Teapot"
    text = json.dumps(sent).lower()
    assert "erin" not in text and ADDRESS["line1"].lower() not in text

    # Another customer's events are untouched.
    with app.app_context():
        payloads = [
            json.loads(r["payload"]) for r in db.query("SELECT payload FROM webhook_events")
        ]
    theirs = [p["data"] for p in payloads if p["data"].get("id") == kept["id"]]
    assert theirs and theirs[0]["customer"]["email"] == "other@example.com"


def test_blank_takes_personal_fields_and_leaves_the_rest():
    order = {
        "id": "o1",
        "customer": {"id": "c1", "email": "a@b.example", "name": "Ann"},
        "shipping_address": {"name": "Ann", "line1": "1 Road"},
        "items": [{"name": "Teapot", "quantity": 1}],
        "shipping_method": {"id": "m1", "name": "Post"},
        "note": "A@B.example",
    }
    assert blank(order, "a@b.example") == {
        "id": "o1",
        "customer": {"id": "c1", "email": None, "name": None},
        "shipping_address": None,
        "items": [{"name": "Teapot", "quantity": 1}],
        "shipping_method": {"id": "m1", "name": "Post"},
        "note": None,
    }
