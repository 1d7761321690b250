"""Exchanging a received return for a draft order (issue 41), through HTTP on both engines:
the draft priced as the quote with the return's value as its credit, the old order's units
refunded to credit (never refunded again), once under concurrent calls, and refused for a
return not received or already refunded; permissions and the keys' ceiling."""

import pytest

from shop import db
from tests.orders_helpers import ADDRESS, add_product
from tests.payment_helpers import in_lockstep, like
from tests.returns.test_returns import _ask, _order


@pytest.fixture
def app(make_app):
    return make_app()


def _received(app, customer, owner, lines=((1000, 3),), asked=((1, 2),), refund=False):
    """A shipped order whose return of ``asked`` was approved and received (every unit),
    with ``refund``; answer (order, return)."""
    order, _products = _order(app, customer, owner, lines=lines)
    ret = _ask(customer, order["id"], *asked).json
    assert owner.post(f"/returns/{ret['id']}/approve", json={}).status_code == 200
    body = {"restock": True, "refund": refund}
    done = owner.post(f"/returns/{ret['id']}/receive", json=body)
    assert done.status_code == 200, done.json
    return order, done.json


def _rows(app, sql, **params):
    with app.app_context():
        return db.query(sql, params)


def _value(app, sql, **params):
    with app.app_context():
        return db.value(sql, params)


def test_an_exchange_makes_a_draft_with_the_value_as_credit_and_spends_it_once(
    app, customer_client, owner_client
):
    order, ret = _received(app, customer_client, owner_client, lines=((999, 3),))
    preview = owner_client.get(f"/orders/{order['id']}/refunds/preview").json
    value = preview["lines"][0]["total_cents"] * 2 // 3  # two of three units (refund_share)
    shirt = add_product(app, "Shirt", price_cents=2500, stock=5)
    url = f"/returns/{ret['id']}/exchange"
    made = owner_client.post(url, json={"lines": [{"product_id": shirt, "quantity": 1}]})
    assert made.status_code == 201, made.json
    draft = made.json["draft_order"]
    assert made.json["return"]["exchange_draft_id"] == draft["id"]
    assert draft["credit_cents"] == value and order["number"] in draft["credit_note"]
    assert draft["customer_id"] == order["customer"]["id"]
    assert {k: draft["shipping_address"][k] for k in ADDRESS} == ADDRESS
    # Priced as the quote prices the same basket to the same address.
    quote = owner_client.post(
        "/payments/quote",
        json={"items": [{"product_id": shirt, "quantity": 1}], "shipping_address": ADDRESS},
    )
    assert quote.status_code == 200, quote.json
    assert draft["totals"]["total_cents"] == quote.json["total_cents"]
    assert draft["amount_due_cents"] == quote.json["total_cents"] - value > 0
    # The old order: those units are refunded to credit, no money moved, not refunded again.
    made_refunds = owner_client.get(f"/orders/{order['id']}/refunds").json["items"]
    (refund,) = [r for r in made_refunds if r["amount_cents"]]  # the receive's: a restock
    assert refund["provider"] == "credit" and refund["amount_cents"] == value
    assert refund["lines"] == [{"line": 1, "quantity": 2}] and refund["status"] == "succeeded"
    after = owner_client.get(f"/orders/{order['id']}/refunds/preview").json
    assert after["lines"][0]["refundable_quantity"] == 1
    again = owner_client.post(
        f"/orders/{order['id']}/refunds", json={"lines": [{"line": 1, "quantity": 2}]}
    )
    assert again.status_code == 400 and "lines" in again.json["message"]
    assert _value(app, "SELECT COUNT(*) FROM mail_outbox WHERE subject LIKE '%refunded'") == 0
    # A replay answers the same draft; completing it asks for the total less the credit.
    replay = owner_client.post(url, json={"lines": [{"product_id": shirt, "quantity": 3}]})
    assert replay.status_code == 200 and replay.json["draft_order"]["id"] == draft["id"]
    done = owner_client.post(
        f"/draft-orders/{draft['id']}/complete", json={"payment_method": "manual"}
    )
    assert done.status_code == 201, done.json
    placed = done.json["order"]
    assert placed["total_cents"] == draft["totals"]["total_cents"]
    assert placed["payment"]["amount_cents"] == draft["totals"]["total_cents"] - value


def test_a_credit_that_covers_the_replacement_pays_it(app, customer_client, owner_client):
    _order_row, ret = _received(
        app, customer_client, owner_client, lines=((5000, 1),), asked=((1, 1),)
    )
    sock = add_product(app, "Sock", price_cents=300, stock=5)
    made = owner_client.post(
        f"/returns/{ret['id']}/exchange", json={"lines": [{"product_id": sock, "quantity": 1}]}
    )
    assert made.status_code == 201, made.json
    draft = made.json["draft_order"]
    assert draft["amount_due_cents"] == 0
    done = owner_client.post(
        f"/draft-orders/{draft['id']}/complete", json={"payment_method": "manual"}
    )
    assert done.status_code == 201, done.json
    assert done.json["order"]["status"] == "paid"


def test_four_concurrent_exchanges_make_one_refund_and_one_draft(
    app, customer_client, owner_client
):
    order, ret = _received(app, customer_client, owner_client)
    shirt = add_product(app, "Shirt", price_cents=1500, stock=5)
    url = f"/returns/{ret['id']}/exchange"
    body = {"lines": [{"product_id": shirt, "quantity": 1}]}
    clients = [like(app, owner_client) for _ in range(4)]

    def exchange(client):
        return lambda _round: client.post(url, json=body)

    (answers,) = in_lockstep(1, *[exchange(c) for c in clients])
    codes = sorted(a.status_code for a in answers)
    assert codes == [200, 200, 200, 201], [a.json for a in answers]
    assert len({a.json["draft_order"]["id"] for a in answers}) == 1
    assert _value(app, "SELECT COUNT(*) FROM draft_orders") == 1
    credits = _rows(app, "SELECT amount_cents FROM refunds WHERE provider = 'credit'")
    assert len(credits) == 1 and credits[0]["amount_cents"] == 2000
    assert _value(app, "SELECT refunded_cents FROM orders WHERE id = :id", id=order["id"]) == 2000


def test_refused_when_not_received_or_refunded_or_the_lines_are_bad(
    app, customer_client, owner_client
):
    shirt = add_product(app, "Shirt", price_cents=1500, stock=5)
    body = {"lines": [{"product_id": shirt, "quantity": 1}]}
    order, _products = _order(app, customer_client, owner_client)
    asked = _ask(customer_client, order["id"], (1, 1)).json
    early = owner_client.post(f"/returns/{asked['id']}/exchange", json=body)
    assert early.status_code == 409 and "received" in early.json["message"]
    _order2, refunded = _received(app, customer_client, owner_client, refund=True)
    spent = owner_client.post(f"/returns/{refunded['id']}/exchange", json=body)
    assert spent.status_code == 409 and "refunded" in spent.json["message"]
    # Units refunded from the order meanwhile leave nothing to credit.
    order3, kept = _received(app, customer_client, owner_client, asked=((1, 1),))
    by_hand = owner_client.post(
        f"/orders/{order3['id']}/refunds", json={"lines": [{"line": 1, "quantity": 3}]}
    )
    assert by_hand.status_code == 201, by_hand.json
    gone = owner_client.post(f"/returns/{kept['id']}/exchange", json=body)
    assert gone.status_code == 409 and "refunded" in gone.json["message"]
    # An amount refunded meanwhile leaves less than the units' share: a 409, nothing written.
    order5, short = _received(app, customer_client, owner_client)
    paid_back = owner_client.post(f"/orders/{order5['id']}/refunds", json={"amount_cents": 1500})
    assert paid_back.status_code == 201, paid_back.json
    less = owner_client.post(f"/returns/{short['id']}/exchange", json=body)
    assert less.status_code == 409 and "Less is left" in less.json["message"], less.json
    # Lines the quote refuses: a 400 naming them, and nothing written (no refund either).
    _order4, fine = _received(app, customer_client, owner_client)
    refunds_before = _value(app, "SELECT COUNT(*) FROM refunds")
    bad = owner_client.post(
        f"/returns/{fine['id']}/exchange", json={"lines": [{"variant_id": "nope", "quantity": 1}]}
    )
    assert bad.status_code == 400 and "items" in bad.json["message"], bad.json
    assert _value(app, "SELECT COUNT(*) FROM refunds") == refunds_before
    assert _value(app, "SELECT COUNT(*) FROM draft_orders") == 0
    assert owner_client.get(f"/returns/{fine['id']}").json["exchange_draft_id"] is None
    missing = owner_client.post("/returns/nope/exchange", json=body)
    assert missing.status_code == 404


def test_permissions_and_the_keys_ceiling(app, customer_client, owner_client, make_admin, make_key):
    _order_row, ret = _received(app, customer_client, owner_client)
    shirt = add_product(app, "Shirt", price_cents=1500, stock=5)
    url = f"/returns/{ret['id']}/exchange"
    body = {"lines": [{"product_id": shirt, "quantity": 1}]}
    assert customer_client.post(url, json=body).status_code == 403
    support = make_admin("support", permissions=["api_key.create"])
    key = make_key("write:return", "write:draft_order", by=support)
    clerk = {"name": "returns_clerk", "permissions": ["returns.read", "returns.update"]}
    assert owner_client.post("/roles", json=clerk).status_code == 201
    assert owner_client.patch(f"/users/{support.user_id}", json={"role": "returns_clerk"}).json
    refused = support.post(url, json=body)
    assert refused.status_code == 403 and "draft_orders.create" in refused.json["message"]
    # The key's scopes would allow it; its owner's permissions do not (the ceiling).
    assert key.post(url, json=body).status_code == 403
    assert make_key("write:return").post(url, json=body).status_code == 403
    assert make_key("write:draft_order").post(url, json=body).status_code == 403
    assert _value(app, "SELECT COUNT(*) FROM refunds WHERE provider = 'credit'") == 0
    done = make_key("write:return", "write:draft_order").post(url, json=body)
    assert done.status_code == 201, done.json


def test_a_guest_orders_exchange_is_a_draft_for_its_email(app, owner_client):
    from tests.returns.test_returns import _guest_shipped

    order_id, token, product = _guest_shipped(app, owner_client)
    ret = _ask(app.test_client(), order_id, (1, 1), query=f"?token={token}").json
    owner_client.post(f"/returns/{ret['id']}/approve", json={})
    body = {"restock": False, "refund": False}
    assert owner_client.post(f"/returns/{ret['id']}/receive", json=body).status_code == 200
    made = owner_client.post(
        f"/returns/{ret['id']}/exchange",
        json={"lines": [{"product_id": product, "quantity": 1}], "note": "Size M"},
    )
    assert made.status_code == 201, made.json
    draft = made.json["draft_order"]
    assert draft["customer_id"] is None and draft["email"] == "guest@example.com"
    assert draft["note"] == "Size M" and draft["credit_cents"] > 0


def test_the_console_exchanges_a_received_return(app, customer_client, owner_client, make_admin):
    from admin_helpers import console_client, hidden_fields

    order, ret = _received(app, customer_client, owner_client)
    add_product(app, "Shirt", price_cents=2500, stock=5, sku="SHIRT-M")
    owner = console_client(app, owner_client.email)
    page = owner.get(f"/admin/returns/{ret['id']}").text
    assert 'id="exchange"' in page
    clerk = console_client(app, make_admin("editor", permissions=["returns.read"]).email)
    assert 'id="exchange"' not in clerk.get(f"/admin/returns/{ret['id']}").text
    url = f"/admin/returns/{ret['id']}/exchange"
    unknown = owner.post(url, data={**hidden_fields(page), "lines": "NOPE 1"})
    assert unknown.status_code == 400 and "NOPE" in unknown.text
    assert _value(app, "SELECT COUNT(*) FROM draft_orders") == 0
    done = owner.post(url, data={**hidden_fields(page), "lines": "SHIRT-M 2", "note": "Size M"})
    assert done.status_code == 303, done.text
    shown = owner.get(done.headers["Location"]).text
    draft_id = owner_client.get(f"/returns/{ret['id']}").json["exchange_draft_id"]
    assert "Exchanged" in shown and f'href="/admin/draft-orders/{draft_id}"' in shown
    assert 'id="exchange"' not in shown
    draft = owner_client.get(f"/draft-orders/{draft_id}").json
    assert [(line["sku"], line["quantity"]) for line in draft["lines"]] == [("SHIRT-M", 2)]
    assert draft["credit_cents"] == 2000 and order["number"] in draft["credit_note"]
