"""An order's payment status and fulfilment status (issue 37), through HTTP, on every path
that moves an order: checkout, mark paid, Stripe (the fake Stripe server), ship, deliver,
refund, cancel; and ``GET /orders`` filtered by each and searched by customer name."""

import pytest

from tests.fake_stripe import deliver, settings
from tests.orders_helpers import add_product, basket
from tests.payment_helpers import card_order


@pytest.fixture
def app(make_app, fake_stripe):
    return make_app(**settings(fake_stripe))


def _sides(client, order_id) -> tuple:
    shown = client.get(f"/orders/{order_id}")
    assert shown.status_code == 200, shown.json
    body = shown.json
    return body["status"], body["payment_status"], body["fulfillment_status"]


def _manual_order(app, customer, lines=((1000, 2), (500, 1))) -> dict:
    products = [add_product(app, price_cents=price, stock=10) for price, _ in lines]
    body = basket(*[(p, qty) for p, (_, qty) in zip(products, lines, strict=True)])
    response = customer.post("/payments/checkout", json=body)
    assert response.status_code == 201, response.json
    return response.json


def _move(owner, order_id, status):
    moved = owner.patch(f"/orders/{order_id}/status", json={"status": status})
    assert moved.status_code == 200, moved.json
    return moved.json


def _ship(owner, order_id, lines=None):
    body = {"carrier": "UPS", "tracking_number": "1Z999"}
    if lines:
        body["lines"] = [{"line": line, "quantity": qty} for line, qty in lines]
    shipped = owner.post(f"/orders/{order_id}/shipments", json=body)
    assert shipped.status_code == 201, shipped.json
    return shipped.json


def _refund(owner, order_id, **body):
    refunded = owner.post(f"/orders/{order_id}/refunds", json=body)
    assert refunded.status_code == 201, refunded.json


def _found(owner, **query) -> list[str]:
    listed = owner.get("/orders", query_string=query)
    assert listed.status_code == 200, listed.json
    return [order["number"] for order in listed.json["items"]]


def test_checkout_mark_paid_ship_deliver_refund(app, customer_client, owner_client):
    order = _manual_order(app, customer_client)
    assert (order["payment_status"], order["fulfillment_status"]) == ("pending", "unfulfilled")
    oid = order["id"]
    assert _sides(owner_client, oid) == ("pending", "pending", "unfulfilled")
    paid = _move(owner_client, oid, "paid")
    assert (paid["payment_status"], paid["fulfillment_status"]) == ("paid", "unfulfilled")
    part = _ship(owner_client, oid, [(1, 1)])
    assert (part["status"], part["fulfillment_status"]) == (
        "partially_shipped",
        "partially_shipped",
    )
    rest = _ship(owner_client, oid)
    assert (rest["status"], rest["payment_status"], rest["fulfillment_status"]) == (
        "shipped",
        "paid",
        "shipped",
    )
    delivered = _move(owner_client, oid, "delivered")
    assert (delivered["payment_status"], delivered["fulfillment_status"]) == ("paid", "delivered")
    _refund(owner_client, oid, lines=[{"line": 2, "quantity": 1}])
    assert _sides(owner_client, oid) == ("partially_refunded", "partially_refunded", "delivered")
    _refund(owner_client, oid, amount_cents=2000)
    assert _sides(owner_client, oid) == ("refunded", "refunded", "delivered")
    # The events and the customer's copy show the same fields.
    mine = customer_client.get(f"/orders/{oid}").json
    assert (mine["payment_status"], mine["fulfillment_status"]) == ("refunded", "delivered")


def test_a_shipped_order_refunded_in_part_is_still_shipped(app, customer_client, owner_client):
    order = _manual_order(app, customer_client)
    oid = order["id"]
    _move(owner_client, oid, "paid")
    _ship(owner_client, oid)
    _refund(owner_client, oid, lines=[{"line": 2, "quantity": 1}])
    assert _sides(owner_client, oid) == ("partially_refunded", "partially_refunded", "shipped")
    assert _found(owner_client, fulfillment_status="shipped") == [order["number"]]
    assert _found(owner_client, payment_status="partially_refunded") == [order["number"]]
    assert _found(owner_client, payment_status="paid") == []
    assert _found(owner_client, fulfillment_status="unfulfilled") == []
    # Nothing is left to ship: the API says so.
    again = owner_client.post(
        f"/orders/{oid}/shipments", json={"carrier": "UPS", "tracking_number": "2"}
    )
    assert again.status_code == 409 and "nothing left to ship" in again.json["message"]
    _move(owner_client, oid, "delivered")
    assert _sides(owner_client, oid) == ("delivered", "partially_refunded", "delivered")


def test_a_partial_refund_before_shipping_stays_once_it_ships(app, customer_client, owner_client):
    order = _manual_order(app, customer_client)
    oid = order["id"]
    _move(owner_client, oid, "paid")
    _refund(owner_client, oid, amount_cents=300)
    assert _sides(owner_client, oid) == ("partially_refunded", "partially_refunded", "unfulfilled")
    _ship(owner_client, oid)
    # The status line says shipped; the money still says part of it went back.
    assert _sides(owner_client, oid) == ("shipped", "partially_refunded", "shipped")


def test_cancel_voids_and_a_refund_by_hand_refunds(app, customer_client, owner_client):
    first = _manual_order(app, customer_client)
    cancelled = customer_client.post(f"/orders/{first['id']}/cancel")
    assert cancelled.status_code == 200, cancelled.json
    assert _sides(owner_client, first["id"]) == ("cancelled", "voided", "unfulfilled")
    second = _manual_order(app, customer_client)
    _move(owner_client, second["id"], "cancelled")
    assert _sides(owner_client, second["id"])[1:] == ("voided", "unfulfilled")
    third = _manual_order(app, customer_client)
    _move(owner_client, third["id"], "paid")
    _move(owner_client, third["id"], "refunded")
    assert _sides(owner_client, third["id"]) == ("refunded", "refunded", "unfulfilled")
    assert _found(owner_client, payment_status="voided") == [second["number"], first["number"]]


def test_stripe_paid_refunded_in_the_dashboard_and_review(
    app, customer_client, owner_client, fake_stripe
):
    order = card_order(app, customer_client, price=1500)
    assert (order["payment_status"], order["fulfillment_status"]) == ("pending", "unfulfilled")
    reference = order["payment"]["reference"]
    assert deliver(app.test_client(), fake_stripe.succeed(reference)).status_code == 200
    assert _sides(owner_client, order["id"]) == ("paid", "paid", "unfulfilled")
    refund = fake_stripe.refund_in_dashboard(reference, 500)
    assert deliver(app.test_client(), refund).status_code == 200
    assert _sides(owner_client, order["id"])[1:] == ("partially_refunded", "unfulfilled")

    # Another amount than the order's: review, the order still pending.
    short = card_order(app, customer_client, price=1200)
    event = fake_stripe.succeed(short["payment"]["reference"], amount=1199)
    assert deliver(app.test_client(), event).status_code == 200
    assert _sides(owner_client, short["id"]) == ("pending", "review", "unfulfilled")
    _move(owner_client, short["id"], "cancelled")  # the money received is not hidden
    assert _sides(owner_client, short["id"]) == ("cancelled", "review", "unfulfilled")
    assert _found(owner_client, payment_status="review") == [short["number"]]

    # Paid at Stripe after the order was cancelled here: review, then refunded in Stripe.
    late = card_order(app, customer_client, price=900)
    assert customer_client.post(f"/orders/{late['id']}/cancel").status_code == 200
    assert _sides(owner_client, late["id"])[1] == "voided"
    event = fake_stripe.succeed(late["payment"]["reference"])
    assert deliver(app.test_client(), event).status_code == 200
    assert _sides(owner_client, late["id"]) == ("cancelled", "review", "unfulfilled")
    refund = fake_stripe.refund_in_dashboard(late["payment"]["reference"], 900)
    assert deliver(app.test_client(), refund).status_code == 200
    assert _sides(owner_client, late["id"]) == ("cancelled", "refunded", "unfulfilled")


def test_search_by_customer_name_email_or_number(app, make_customer, owner_client, make_key):
    grace = make_customer(email="grace@example.com", name="Grace Hopper")
    alan = make_customer(email="alan@example.com", name="Alan Turing")
    orders = {}
    for name, customer in (("grace", grace), ("alan", alan)):
        orders[name] = _manual_order(app, customer, lines=((700, 1),))
    assert _found(owner_client, q="hopper") == [orders["grace"]["number"]]
    assert _found(owner_client, q="GRACE H") == [orders["grace"]["number"]]
    assert _found(owner_client, q="alan@") == [orders["alan"]["number"]]
    assert _found(owner_client, q=orders["alan"]["number"]) == [orders["alan"]["number"]]
    assert _found(owner_client, q="%") == []  # wildcards are literal
    assert _found(owner_client, q="turing", payment_status="pending") == [orders["alan"]["number"]]
    assert _found(owner_client, q="turing", payment_status="paid") == []
    assert make_key("read:order").get("/orders?q=Hopper").json["total"] == 1
    # A customer's search finds only their own orders.
    assert [o["number"] for o in alan.get("/orders?q=hopper").json["items"]] == []
    bad = owner_client.get("/orders?payment_status=settled")
    assert bad.status_code == 400 and "payment_status" in bad.json["message"]
    bad = owner_client.get("/orders?fulfillment_status=lost")
    assert bad.status_code == 400 and "fulfillment_status" in bad.json["message"]
