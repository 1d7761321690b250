"""Returns (issue 41), through HTTP on both engines: asked for by the order's customer, a
guest with its token or staff; approved or rejected; received with restock and refund made
once under concurrent receives, priced as the refund preview prices those units."""

import pytest

from shop import db
from tests.carts.test_guest_orders import guest_order
from tests.conftest import login
from tests.orders_helpers import add_product, basket, product_row
from tests.payment_helpers import in_lockstep, like
from tests.webhook_helpers import Receiver, create_hook, verify, work

DAY = 24 * 3600


@pytest.fixture
def app(make_app):
    return make_app(WEBHOOKS_ALLOW_PRIVATE=True, WEBHOOKS_ALLOW_HTTP=True)


def _order(app, customer, owner, lines=((1000, 3),), ship=True):
    """A paid order of ``(unit price, quantity)`` lines, shipped whole when ``ship``; answer
    (order, product ids)."""
    products = [add_product(app, price_cents=price, stock=10) for price, _ in lines]
    body = basket(*[(p, qty) for p, (_, qty) in zip(products, lines, strict=True)])
    order = customer.post("/payments/checkout", json=body).json
    paid = owner.patch(f"/orders/{order['id']}/status", json={"status": "paid"})
    assert paid.status_code == 200, paid.json
    if ship:
        shipped = owner.post(
            f"/orders/{order['id']}/shipments", json={"carrier": "UPS", "tracking_number": "1Z"}
        )
        assert shipped.status_code == 201, shipped.json
    return order, products


def _ask(client, order_id, *lines, query=""):
    body = {"lines": [{"line": line, "quantity": qty} for line, qty in lines]}
    return client.post(f"/orders/{order_id}/returns{query}", json=body)


def _count(app, sql, **params):
    with app.app_context():
        return db.value(sql, params)


def test_requested_approved_received_with_restock_and_refund_once_under_four_receives(
    app, customer_client, owner_client
):
    order, (teapot, cup) = _order(app, customer_client, owner_client, lines=((1000, 3), (333, 3)))
    preview = owner_client.get(f"/orders/{order['id']}/refunds/preview").json
    asked = _ask(customer_client, order["id"], (1, 3), (2, 1))
    assert asked.status_code == 201, asked.json
    ret = asked.json
    assert ret["status"] == "requested" and ret["order_number"] == order["number"]
    assert [(line["line"], line["quantity"]) for line in ret["lines"]] == [(1, 3), (2, 1)]
    approved = owner_client.post(f"/returns/{ret['id']}/approve", json={"instructions": "Box"})
    assert approved.status_code == 200 and approved.json["status"] == "approved"
    assert approved.json["instructions"] == "Box"
    again = owner_client.post(f"/returns/{ret['id']}/approve", json={})
    assert again.status_code == 409 and "approved" in again.json["message"]
    assert product_row(app, teapot)["stock"] == 7 and product_row(app, cup)["stock"] == 7

    url = f"/returns/{ret['id']}/receive"
    clients = [like(app, owner_client) for _ in range(4)]

    def receive(client):
        return lambda _round: client.post(url, json={"restock": True, "refund": True})

    (answers,) = in_lockstep(1, *[receive(c) for c in clients])
    codes = sorted(a.status_code for a in answers)
    assert set(codes) <= {200, 409} and codes[0] == 200, [a.json for a in answers]
    received = owner_client.get(f"/returns/{ret['id']}").json
    assert received["status"] == "received" and received["refund_id"]
    assert [line["received"] for line in received["lines"]] == [3, 1]
    assert _count(app, "SELECT COUNT(*) FROM refunds") == 1
    # Exactly the preview's share of those units: all of line 1, one unit of line 2.
    line1, line2 = preview["lines"]
    share = line1["refundable_cents"] + line2["total_cents"] * 1 // line2["quantity"]
    refund = owner_client.get(f"/orders/{order['id']}/refunds").json["items"]
    assert [r["amount_cents"] for r in refund] == [share] == [1000 * 3 + 333]
    assert refund[0]["restock"] == [{"line": 1, "quantity": 3}, {"line": 2, "quantity": 1}]
    assert product_row(app, teapot)["stock"] == 10 and product_row(app, cup)["stock"] == 8
    assert owner_client.get(f"/orders/{order['id']}").json["status"] == "partially_refunded"
    subjects = {
        row["subject"]
        for row in _query(
            app, "SELECT subject FROM mail_outbox WHERE recipient = :r", r="customer@example.com"
        )  # fmt: skip
    }
    for words in ("return request", "return is approved", "received your return", "refunded"):
        assert any(words in subject for subject in subjects), (words, subjects)
    # Nothing more to return on line 1; two units of line 2 still can be.
    assert _ask(customer_client, order["id"], (1, 1)).status_code == 400
    assert _ask(customer_client, order["id"], (2, 2)).status_code == 201


def _query(app, sql, **params):
    with app.app_context():
        return db.query(sql, params)


def test_receive_without_refund_keeps_the_value_of_the_preview(app, customer_client, owner_client):
    from shop.returns import flow

    order, (teapot,) = _order(app, customer_client, owner_client, lines=((999, 3),))
    ret = _ask(customer_client, order["id"], (1, 2)).json
    owner_client.post(f"/returns/{ret['id']}/approve", json={})
    body = {"lines": [{"line": 1, "quantity": 1}], "restock": True, "refund": False}
    done = owner_client.post(f"/returns/{ret['id']}/receive", json=body)
    assert done.status_code == 200, done.json
    assert done.json["refund"] is False and [x["received"] for x in done.json["lines"]] == [1]
    assert product_row(app, teapot)["stock"] == 8  # 10 - 3 + 1
    with app.test_request_context():
        # One unit of a line of 3 x 9.99: the preview's share of it (refund_share).
        assert flow.refundable_value(ret["id"]) == 999
    assert _count(app, "SELECT SUM(amount_cents) FROM refunds") == 0  # a restock, no money
    # The unit that did not arrive may be asked for again.
    assert _ask(customer_client, order["id"], (1, 2)).status_code == 201


def test_no_return_before_shipping_nor_of_another_customers_order_nor_more_than_shipped(
    app, customer_client, owner_client, make_customer
):
    order, _ = _order(app, customer_client, owner_client, lines=((500, 2),), ship=False)
    early = _ask(customer_client, order["id"], (1, 1))
    assert early.status_code == 409 and "not shipped" in early.json["message"]
    shipped = owner_client.post(
        f"/orders/{order['id']}/shipments",
        json={"carrier": "UPS", "tracking_number": "1Z", "lines": [{"line": 1, "quantity": 1}]},
    )
    assert shipped.status_code == 201
    more = _ask(customer_client, order["id"], (1, 2))
    assert more.status_code == 400 and more.json["message"].startswith("lines:")
    assert "1 unit(s) shipped" in more.json["message"]
    assert _ask(customer_client, order["id"], (7, 1)).status_code == 400
    other = make_customer()
    assert _ask(other, order["id"], (1, 1)).status_code == 404
    assert other.get(f"/orders/{order['id']}/returns").status_code == 404
    ret = _ask(customer_client, order["id"], (1, 1))
    assert ret.status_code == 201
    assert other.get(f"/returns/{ret.json['id']}").status_code == 404
    assert customer_client.get(f"/returns/{ret.json['id']}").status_code == 200
    assert _ask(customer_client, order["id"], (1, 1)).status_code == 400  # asked for already
    assert _count(app, "SELECT COUNT(*) FROM returns") == 1
    assert customer_client.get("/returns").status_code == 403
    assert customer_client.post(f"/returns/{ret.json['id']}/approve", json={}).status_code == 403


def _guest_shipped(app, owner_client):
    """A guest's order of one unit, paid and shipped; answer (order id, token, product id)."""
    product = add_product(app, price_cents=800, stock=5)
    placed = guest_order(app, product, "guest@example.com")
    order_id, token = placed["order"]["id"], placed["order_token"]
    owner_client.patch(f"/orders/{order_id}/status", json={"status": "paid"})
    owner_client.post(
        f"/orders/{order_id}/shipments", json={"carrier": "DHL", "tracking_number": "9"}
    )
    return order_id, token, product


def test_a_guest_asks_with_the_orders_token(app, owner_client):
    order_id, token, _product = _guest_shipped(app, owner_client)
    guest = app.test_client()
    assert _ask(guest, order_id, (1, 1)).status_code == 401
    assert _ask(guest, order_id, (1, 1), query="?token=wrong").status_code == 404
    asked = _ask(guest, order_id, (1, 1), query=f"?token={token}")
    assert asked.status_code == 201, asked.json
    assert asked.json["by"]["kind"] == "anonymous"
    listed = guest.get(f"/orders/{order_id}/returns?token={token}")
    assert [r["id"] for r in listed.json["items"]] == [asked.json["id"]]
    assert guest.get(f"/returns/{asked.json['id']}?token={token}").status_code == 200
    assert guest.get(f"/returns/{asked.json['id']}?token=nope").status_code == 404
    assert _count(
        app, "SELECT COUNT(*) FROM mail_outbox WHERE recipient = 'guest@example.com'"
        " AND subject LIKE '%return request%'"
    ) == 1  # fmt: skip


def _sign_in_again(customer, owner):
    """Sessions last a week: sign in again after the clock moved on."""
    login(customer, customer.email, kind="customer")
    login(owner, owner.email)


def test_the_window_counts_from_the_delivery_else_the_last_shipment(
    clock, customer_client, owner_client
):
    app = customer_client.application
    assert app.config["RETURN_WINDOW_DAYS"] == 30
    first, _ = _order(app, customer_client, owner_client)
    second, _ = _order(app, customer_client, owner_client)
    clock.advance(20 * DAY)
    _sign_in_again(customer_client, owner_client)
    delivered = owner_client.patch(f"/orders/{second['id']}/status", json={"status": "delivered"})
    assert delivered.status_code == 200, delivered.json
    clock.advance(10 * DAY + 60)  # 30 days and a minute after the shipments
    _sign_in_again(customer_client, owner_client)
    late = _ask(customer_client, first["id"], (1, 1))
    assert late.status_code == 409 and "30-day window" in late.json["message"]
    assert _ask(customer_client, second["id"], (1, 1)).status_code == 201  # 10 days delivered


def test_permissions_and_the_keys_ceiling(app, customer_client, owner_client, make_admin, make_key):
    order, _ = _order(app, customer_client, owner_client)
    ret = _ask(customer_client, order["id"], (1, 2)).json
    support = make_admin("support", permissions=["api_key.create"])
    key = make_key("read:return", "write:return", "write:order", by=support)
    # Support becomes a clerk who may handle returns but not refund.
    clerk = {"name": "returns_clerk", "permissions": ["returns.read", "returns.update"]}
    assert owner_client.post("/roles", json=clerk).status_code == 201
    assert owner_client.patch(f"/users/{support.user_id}", json={"role": "returns_clerk"}).json
    assert support.get("/returns").status_code == 200
    assert support.get("/returns?status=requested").json["items"][0]["id"] == ret["id"]
    assert support.get("/returns?status=received").json["items"] == []
    assert support.post(f"/returns/{ret['id']}/approve", json={}).status_code == 200
    # support may update returns but not refund: receiving with a refund is refused.
    body = {"restock": True, "refund": True}
    refused = support.post(f"/returns/{ret['id']}/receive", json=body)
    assert refused.status_code == 403 and "orders.refund" in refused.json["message"]
    reader = make_key("read:return")
    assert reader.get(f"/returns/{ret['id']}").status_code == 200
    assert reader.post(f"/returns/{ret['id']}/reject", json={"reason": "x"}).status_code == 403
    # A key's rights are its scopes within its owner's: the clerk's key cannot refund either,
    # though its scopes would let it.
    refused = key.post(f"/returns/{ret['id']}/receive", json=body)
    assert refused.status_code == 403, refused.json
    assert _count(app, "SELECT COUNT(*) FROM refunds") == 0
    writer = make_key("write:return")
    assert writer.post(f"/returns/{ret['id']}/receive", json=body).status_code == 403
    both = make_key("write:return", "write:order")
    done = both.post(f"/returns/{ret['id']}/receive", json=body)
    assert done.status_code == 200 and done.json["refund_id"], done.json
    # Reject: a reason is required; a rejected return frees its units.
    second = _ask(customer_client, order["id"], (1, 1)).json
    assert support.post(f"/returns/{second['id']}/reject", json={}).status_code == 400
    rejected = support.post(f"/returns/{second['id']}/reject", json={"reason": "Worn"})
    assert rejected.status_code == 200 and rejected.json["reject_reason"] == "Worn"
    assert _ask(customer_client, order["id"], (1, 1)).status_code == 201


def test_a_webhook_receiver_gets_the_return_events_signed(app, customer_client, owner_client):
    with Receiver() as receiver:
        hook = create_hook(
            owner_client, receiver.url, "return.requested", "return.received", "order.refunded"
        )
        order, _ = _order(app, customer_client, owner_client)
        ret = _ask(customer_client, order["id"], (1, 1)).json
        owner_client.post(f"/returns/{ret['id']}/approve", json={})
        body = {"restock": False, "refund": True}
        assert owner_client.post(f"/returns/{ret['id']}/receive", json=body).status_code == 200
        work(app)
        kinds = [verify(hook["secret"], request)["type"] for request in receiver.requests]
        assert sorted(kinds) == ["order.refunded", "return.received", "return.requested"]
        received = next(e for e in receiver.events() if e["type"] == "return.received")
        assert received["data"]["id"] == ret["id"] and received["data"]["status"] == "received"


def test_a_guest_orders_return_is_received_and_refunded(app, owner_client):
    order_id, token, product = _guest_shipped(app, owner_client)
    ret = _ask(app.test_client(), order_id, (1, 1), query=f"?token={token}").json
    owner_client.post(f"/returns/{ret['id']}/approve", json={})
    done = owner_client.post(
        f"/returns/{ret['id']}/receive", json={"restock": True, "refund": True}
    )
    assert done.status_code == 200, done.json
    assert product_row(app, product)["stock"] == 5
    mailed = "SELECT COUNT(*) FROM mail_outbox WHERE recipient = 'guest@example.com'"
    assert _count(app, mailed + " AND subject LIKE '%refunded'") == 1
