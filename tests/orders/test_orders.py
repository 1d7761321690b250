"""Orders: who sees which, the full status transition table, restocking exactly once,
history and audit."""

import pytest

from shop import db
from shop.db import totals
from tests.orders_helpers import add_product, basket, catalogue_client, product_row

NEXT = {
    "pending": {"paid", "cancelled"},
    "paid": {"partially_shipped", "shipped", "refunded"},
    "partially_shipped": {"shipped", "refunded"},
    "shipped": {"delivered"},
    "delivered": {"refunded"},
    "cancelled": set(),
    "refunded": set(),
}
# The moves that bring a new (pending) order to each status.
PATH = {
    "pending": [],
    "paid": ["paid"],
    "partially_shipped": ["paid", "partially_shipped"],
    "shipped": ["paid", "shipped"],
    "delivered": ["paid", "shipped", "delivered"],
    "cancelled": ["cancelled"],
    "refunded": ["paid", "refunded"],
}


@pytest.fixture
def place(app, customer_client):
    """Place an order for the signed-in customer (or another client); answer it."""

    def make(quantity=1, client=None, product=None):
        product = product or add_product(app, stock=10)
        response = (client or customer_client).post(
            "/payments/checkout", json=basket((product, quantity))
        )
        assert response.status_code == 201, response.json
        return response.json

    return make


def move(client, order, status, note=None):
    body = {"status": status} if note is None else {"status": status, "note": note}
    return client.patch(f"/orders/{order['id']}/status", json=body)


def bring_to(client, order, status):
    for step in PATH[status]:
        response = move(client, order, step)
        assert response.status_code == 200, response.json
    return order


# -- the transition table ----------------------------------------------------------------


@pytest.mark.parametrize("target", list(NEXT))
@pytest.mark.parametrize("start", list(NEXT))
def test_transition_table(app, owner_client, place, start, target):
    order = bring_to(owner_client, place(), start)
    response = move(owner_client, order, target)
    if target in NEXT[start]:
        assert response.status_code == 200, response.json
        assert response.json["status"] == target
        assert [h["status"] for h in response.json["status_history"]] == [
            "pending",
            *PATH[start],
            target,
        ]
    else:
        assert response.status_code == 409
        message = response.json["message"]
        assert order["number"] in message and start in message and target in message
        for allowed in NEXT[start]:
            assert allowed in message
        if not NEXT[start]:
            assert "final" in message
        assert owner_client.get(f"/orders/{order['id']}").json["status"] == start


def test_the_orders_total_counts_every_checkout(
    app, owner_client, customer_client, make_customer, place, clock
):
    other = make_customer()
    place(), place(), place(client=other)
    scarce = add_product(app, stock=1)
    assert place(product=scarce)
    refused = other.post("/payments/checkout", json=basket((scarce, 1)))
    assert refused.status_code == 409
    assert owner_client.get("/orders?page_size=1").json["total"] == 4
    assert customer_client.get("/orders?page_size=1").json["total"] == 3
    assert other.get("/orders?page_size=1").json["total"] == 1
    # Checkout does not bump it: the worker folds orders older than totals.SETTLE into the
    # counter, and the list counts the newer ones.
    clock.advance(totals.SETTLE.total_seconds() + 1)
    place()
    with app.app_context():
        totals.fold_orders()
        assert db.value("SELECT value FROM counters WHERE name = 'orders'") == 4
    assert owner_client.get("/orders?page_size=1").json["total"] == 5


def test_unknown_status_is_400(owner_client, place):
    response = move(owner_client, place(), "lost")
    assert response.status_code == 400
    assert "status:" in response.json["message"]


def test_unknown_order_is_404(owner_client):
    assert move(owner_client, {"id": "nope"}, "paid").status_code == 404


# -- restocking ---------------------------------------------------------------------------


@pytest.mark.parametrize("final", ["cancelled", "refunded"])
def test_cancelling_or_refunding_restocks_exactly_once(app, owner_client, place, final):
    teapot = add_product(app, stock=5)
    order = place(quantity=3, product=teapot)
    assert product_row(app, teapot)["stock"] == 2
    bring_to(owner_client, order, final)
    assert product_row(app, teapot)["stock"] == 5
    for again in ("cancelled", "refunded"):
        assert move(owner_client, order, again).status_code == 409
    assert product_row(app, teapot)["stock"] == 5


def test_refund_after_delivery_restocks_once(app, owner_client, place):
    teapot = add_product(app, stock=4)
    order = bring_to(owner_client, place(quantity=4, product=teapot), "delivered")
    assert product_row(app, teapot)["stock"] == 0
    assert move(owner_client, order, "refunded").status_code == 200
    assert product_row(app, teapot)["stock"] == 4
    assert move(owner_client, order, "refunded").status_code == 409
    assert product_row(app, teapot)["stock"] == 4


def test_cancelling_an_order_of_a_deleted_product_still_works(app, owner_client, place):
    teapot = add_product(app, "Teapot", stock=4)
    order = place(quantity=1, product=teapot)
    assert catalogue_client(app).delete(f"/products/{teapot}").status_code == 204
    response = move(owner_client, order, "cancelled")
    assert response.status_code == 200
    assert response.json["items"][0]["name"] == "Teapot"
    assert response.json["items"][0]["product_id"] == teapot


def test_a_line_without_a_variant_restocks_only_a_lone_variant(app, owner_client, place):
    """A line sold by a node of the previous release during a rolling upgrade has no variant
    id (tests/ops/test_upgrade.py runs such a node). Cancelled, its quantity goes back to its
    product's lone variant; a product given a second variant since cannot tell which one
    sold, and keeps the stock its variants say."""
    catalogue = catalogue_client(app)
    lone, several = add_product(app, stock=5), add_product(app, stock=5)
    orders = [place(quantity=2, product=lone), place(quantity=2, product=several)]
    with app.app_context(), db.transaction():
        for order in orders:
            db.execute("UPDATE order_items SET variant_id = NULL WHERE order_id = :id", order)
    sizes = {"options": [{"name": "Size", "values": ["S", "L"]}]}
    assert catalogue.put(f"/products/{several}", json=sizes).status_code == 200
    added = {"options": {"Size": "L"}, "price_cents": 300, "stock": 4}
    assert catalogue.post(f"/products/{several}/variants", json=added).status_code == 201
    for order in orders:
        assert move(owner_client, order, "cancelled").status_code == 200
    for product, stocks in ((lone, [5]), (several, [3, 4])):
        read = catalogue.get(f"/products/{product}").json
        assert sorted(v["stock"] for v in read["variants"]) == stocks
        assert read["stock"] == sum(stocks)


# -- payment, history and audit ------------------------------------------------------------


def test_payment_follows_the_order(owner_client, place):
    order = place()
    assert order["payment"]["status"] == "pending"
    assert move(owner_client, order, "paid").json["payment"]["status"] == "paid"
    assert move(owner_client, order, "refunded").json["payment"]["status"] == "refunded"
    cancelled = move(owner_client, place(), "cancelled").json
    assert cancelled["payment"]["status"] == "cancelled"


def test_every_change_is_in_the_history_and_the_audit_log(owner_client, customer_client, place):
    order = place()
    moved = move(owner_client, order, "paid", note="Transfer received").json
    assert moved["updated_at"] >= order["updated_at"]
    entry = moved["status_history"][-1]
    assert entry["status"] == "paid"
    assert entry["note"] == "Transfer received"
    owner = {"kind": "admin", "id": owner_client.user_id, "label": "owner@example.com"}
    assert entry["by"] == owner
    # The customer sees the same history on their own order.
    assert (
        customer_client.get(f"/orders/{order['id']}").json["status_history"]
        == (moved["status_history"])
    )
    log = owner_client.get("/audit-log", query_string={"event": "order.status_changed"}).json
    [record] = log["items"]
    assert record["details"]["from"] == "pending" and record["details"]["to"] == "paid"
    assert record["details"]["number"] == order["number"]
    assert record["actor"]["id"] == owner_client.user_id
    placed = owner_client.get("/audit-log", query_string={"event": "order.placed"}).json
    assert placed["items"][0]["details"]["order_id"] == order["id"]


# -- a customer's own orders ------------------------------------------------------------


def test_customer_cancels_their_own_pending_order(app, owner_client, customer_client, place):
    teapot = add_product(app, stock=3)
    order = place(quantity=2, product=teapot)
    response = customer_client.post(f"/orders/{order['id']}/cancel")
    assert response.status_code == 200
    assert response.json["status"] == "cancelled"
    assert response.json["status_history"][-1]["by"]["kind"] == "customer"
    assert product_row(app, teapot)["stock"] == 3
    assert customer_client.post(f"/orders/{order['id']}/cancel").status_code == 409
    paid = bring_to(owner_client, place(), "paid")
    response = customer_client.post(f"/orders/{paid['id']}/cancel")
    assert response.status_code == 409
    assert "shipped" in response.json["message"]


def test_another_customers_order_is_404(app, make_customer, customer_client, place):
    order = place()
    stranger = make_customer()
    assert stranger.get(f"/orders/{order['id']}").status_code == 404
    assert stranger.post(f"/orders/{order['id']}/cancel").status_code == 404
    assert stranger.get("/orders").json["total"] == 0
    assert customer_client.get(f"/orders/{order['id']}").status_code == 200


def test_customer_lists_only_their_own_orders_newest_first(make_customer, place, clock):
    alice, bob = make_customer(), make_customer()
    first = place(client=alice)
    clock.advance(60)
    second = place(client=alice)
    place(client=bob)
    listed = alice.get("/orders").json
    assert listed["total"] == 2
    assert [o["id"] for o in listed["items"]] == [second["id"], first["id"]]
    # Asking for someone else's orders by filter still shows only your own.
    query = {"customer_id": bob.user["id"]}
    assert alice.get("/orders", query_string=query).json["total"] == 0


def test_customers_cannot_change_status(customer_client, place):
    assert move(customer_client, place(), "paid").status_code == 403


# -- administrators and API keys ------------------------------------------------------------


def test_admin_lists_all_orders_with_filters(owner_client, make_customer, place, clock):
    alice, bob = make_customer(), make_customer()
    start = clock.moment
    a1 = place(client=alice)
    clock.advance(3600)
    b1 = place(client=bob)
    clock.advance(3600)
    a2 = bring_to(owner_client, place(client=alice), "paid")

    def ids(**query):
        response = owner_client.get("/orders", query_string=query)
        assert response.status_code == 200, response.json
        return [o["id"] for o in response.json["items"]]

    assert ids() == [a2["id"], b1["id"], a1["id"]]
    assert ids(status="paid") == [a2["id"]]
    assert ids(customer_id=alice.user["id"]) == [a2["id"], a1["id"]]
    middle = (start.replace(tzinfo=None)).isoformat(timespec="seconds")
    assert ids(created_after=middle) == [a2["id"], b1["id"], a1["id"]]
    one_hour = start.timestamp() + 3600
    from datetime import UTC, datetime

    cut = datetime.fromtimestamp(one_hour, UTC).isoformat()
    assert ids(created_after=cut) == [a2["id"], b1["id"]]
    assert ids(created_before=cut) == [a1["id"]]
    assert ids(created_after=cut, status="pending") == [b1["id"]]
    page = owner_client.get("/orders", query_string={"page_size": 2}).json
    assert page["total"] == 3 and len(page["items"]) == 2
    assert owner_client.get("/orders", query_string={"status": "lost"}).status_code == 400


def test_reading_orders_needs_orders_read(make_admin, place):
    order = place()
    editor = make_admin("editor")
    assert editor.get("/orders").status_code == 403
    assert editor.get(f"/orders/{order['id']}").status_code == 403
    support = make_admin("support")
    assert support.get(f"/orders/{order['id']}").status_code == 200
    assert move(support, order, "paid").status_code == 200


def test_api_keys_read_and_move_orders_by_scope(make_key, place, client):
    order = place()
    reader = make_key("read:order")
    assert reader.get("/orders").json["total"] == 1
    assert reader.get(f"/orders/{order['id']}").json["id"] == order["id"]
    assert move(reader, order, "paid").status_code == 403
    writer = make_key("write:order")
    assert writer.get("/orders").status_code == 403
    moved = move(writer, order, "paid")
    assert moved.status_code == 204 and moved.data == b""  # write does not imply read
    both = make_key("read:order", "write:order")
    assert move(both, order, "shipped").json["status"] == "shipped"
    assert make_key("read:product").get("/orders").status_code == 403
    assert client.get("/orders").status_code == 401
    assert client.get(f"/orders/{order['id']}").status_code == 401
