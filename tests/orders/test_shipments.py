"""Shipments (issue 27): partial then the rest, over-shipping, permissions, the tracking mail
and the ``order.shipped`` event, and two shipments racing for the last units."""

import json
import threading

import pytest

from tests.mail_helpers import outbox_mails
from tests.orders_helpers import add_product, basket

UPS = {"carrier": "UPS", "tracking_number": "1Z999", "tracking_url": "https://ups.example/1Z999"}


@pytest.fixture
def paid(app, customer_client, owner_client):
    """A paid order of two lines: 3 teapots and 1 cup."""
    teapot, cup = add_product(app, "Teapot", stock=10), add_product(app, "Cup", stock=10)
    response = customer_client.post("/payments/checkout", json=basket((teapot, 3), (cup, 1)))
    assert response.status_code == 201, response.json
    order = response.json
    moved = owner_client.patch(f"/orders/{order['id']}/status", json={"status": "paid"})
    assert moved.status_code == 200, moved.json
    return order


def ship(client, order, **body):
    return client.post(f"/orders/{order['id']}/shipments", json={**UPS, **body})


def outbox(app) -> list[dict]:
    with app.app_context():
        return outbox_mails()


def test_partial_shipment_then_the_rest(app, owner_client, customer_client, paid):
    lines = {item["name"]: item["line"] for item in paid["items"]}
    first = ship(owner_client, paid, lines=[{"line": lines["Teapot"], "quantity": 2}])
    assert first.status_code == 201, first.json
    assert first.json["status"] == "partially_shipped"
    assert [s["lines"] for s in first.json["shipments"]] == [
        [{"line": lines["Teapot"], "quantity": 2}]
    ]
    # The rest by default: one teapot and the cup.
    rest = ship(owner_client, paid, carrier="DHL", tracking_number="JD01", tracking_url=None)
    assert rest.status_code == 201, rest.json
    assert rest.json["status"] == "shipped"
    second = rest.json["shipments"][1]
    assert second["carrier"] == "DHL" and second["tracking_url"] is None
    assert sorted((x["line"], x["quantity"]) for x in second["lines"]) == sorted(
        [(lines["Teapot"], 1), (lines["Cup"], 1)]
    )
    # The customer reads the same shipments; the history shows both moves.
    mine = customer_client.get(f"/orders/{paid['id']}").json
    assert mine["shipments"] == rest.json["shipments"]
    history = [h["status"] for h in mine["status_history"]]
    assert history == ["pending", "paid", "partially_shipped", "shipped"]
    # Nothing left: a third shipment is a 409; delivery follows as before.
    assert ship(owner_client, paid).status_code == 409
    delivered = owner_client.patch(f"/orders/{paid['id']}/status", json={"status": "delivered"})
    assert delivered.status_code == 200


def test_over_shipping_is_409_and_writes_nothing(app, owner_client, paid):
    line = paid["items"][0]
    over = ship(owner_client, paid, lines=[{"line": line["line"], "quantity": 4}])
    assert over.status_code == 409
    assert "has 3 unit(s) left to ship" in over.json["message"]
    assert (
        ship(owner_client, paid, lines=[{"line": line["line"], "quantity": 3}]).status_code == 201
    )
    again = ship(owner_client, paid, lines=[{"line": line["line"], "quantity": 1}])
    assert again.status_code == 409 and "has 0 unit(s)" in again.json["message"]
    order = owner_client.get(f"/orders/{paid['id']}").json
    assert len(order["shipments"]) == 1 and order["status"] == "partially_shipped"
    assert ship(owner_client, paid, lines=[{"line": 99, "quantity": 1}]).status_code == 400


def test_bad_input_and_unpaid_orders(app, owner_client, customer_client):
    product = add_product(app, stock=5)
    pending = customer_client.post("/payments/checkout", json=basket((product, 1))).json
    refused = ship(owner_client, pending)
    assert refused.status_code == 409 and "is pending" in refused.json["message"]
    for body in (
        {"tracking_url": "javascript:alert(1)"},
        {"tracking_url": "ftp://ups.example/1"},
        {"carrier": " "},
        {"lines": [{"line": 1, "quantity": 0}]},
    ):
        bad = ship(owner_client, pending, **body)
        assert bad.status_code == 400, (body, bad.json)
    assert owner_client.post(f"/orders/{pending['id']}/shipments", json={}).status_code == 400


def test_permissions(owner_client, customer_client, make_key, paid):
    reader = make_key("read:order")
    refused = ship(reader, paid)
    assert refused.status_code == 403
    assert "write:order" in refused.json["message"]
    assert ship(customer_client, paid).status_code == 403
    writer = make_key("write:order")  # no read:order: 204, no body
    assert ship(writer, paid).status_code == 204
    assert owner_client.get(f"/orders/{paid['id']}").json["status"] == "shipped"


def test_tracking_mail_and_order_shipped_event(app, owner_client, paid):
    from shop import db

    hook = owner_client.post(
        "/webhooks", json={"url": "https://hooks.example.com/shop", "events": ["order.shipped"]}
    )
    assert hook.status_code == 201, hook.json
    before = len(outbox(app))
    assert ship(owner_client, paid).status_code == 201
    mails = outbox(app)[before:]
    assert len(mails) == 1  # the shipment's mail, not a second plain status mail
    sent = mails[0]
    assert sent["recipient"] == paid["customer"]["email"]
    assert "has shipped" in sent["subject"]
    assert UPS["tracking_url"] in sent["text_body"] and "1Z999" in sent["text_body"]
    assert f'href="{UPS["tracking_url"]}"' in sent["html_body"]
    with app.app_context():
        events = db.query("SELECT payload FROM webhook_events WHERE type = 'order.shipped'")
    assert len(events) == 1
    payload = json.loads(events[0]["payload"])["data"]
    assert payload["status"] == "shipped"
    assert payload["shipment"]["tracking_number"] == "1Z999"


def test_concurrent_shipments_cannot_over_ship(app, owner_client, make_key, paid):
    """Five threads each ship every unit left: exactly one succeeds."""
    results, start = [], threading.Barrier(5)
    key = make_key("read:order", "write:order")

    def attempt():
        client = app.test_client()
        client.environ_base.update(key.environ_base)
        start.wait()
        results.append(ship(client, paid).status_code)

    threads = [threading.Thread(target=attempt) for _ in range(5)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert sorted(results) == [201, 409, 409, 409, 409]
    order = owner_client.get(f"/orders/{paid['id']}").json
    assert len(order["shipments"]) == 1 and order["status"] == "shipped"
