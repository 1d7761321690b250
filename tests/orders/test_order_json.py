"""Orders as the database writes their JSON (``shop/orders/order_json.py``, issue 29):
exactly what marshmallow's dump of ``OrderSchema`` gives, field for field, type for type and
in the schema's order, for orders with every part; the list, the detail and checkout's answer
agree; and what a list request and a detail request cost in statements."""

import json

import pytest

from shop import db
from shop.api.schemas import OrderSchema
from tests.catalogue_helpers import Catalogue
from tests.orders_helpers import add_product, basket

UPS = {"carrier": "UPS", "tracking_number": "1Z999", "tracking_url": "https://ups.example/1Z"}


def created(response):
    assert response.status_code == 201, response.json
    return response.json


def ok(response):
    assert response.status_code == 200, response.json
    return response.json


def as_marshmallow_dumps(order: dict) -> str:
    """The order through ``OrderSchema``'s own (uncompiled) dump, as JSON text in its order."""
    return json.dumps(OrderSchema().dump(order))


@pytest.fixture
def shop(app, owner_client, customer_client):
    """Three orders: priced (a method, two rates, a code) of a variant with options and a
    plain product, paid with a note, shipped in two parts; a plain one by another customer
    who is then erased; and one as a release before pricing and variants stored it (no
    breakdown, no line options or total, an address without region, no payment)."""
    catalogue = Catalogue(owner_client)
    options = [{"name": "Size", "values": ["S", "M"]}, {"name": "Colour", "values": ["Red"]}]
    shirt = catalogue.product(options=options, generate=True, price_cents=1500, stock=0)
    variant = ok(owner_client.get(f"/products/{shirt['id']}"))["variants"][1]
    ok(owner_client.patch(f"/products/{shirt['id']}/variants/{variant['id']}", json={"stock": 5}))
    tea = add_product(app, "Tea", price_cents=1999, stock=10)
    method = created(
        owner_client.post(
            "/shipping-methods", json={"name": "Colissimo", "countries": ["FR"], "price_cents": 490}
        )
    )
    created(owner_client.post("/tax-rates", json={"country": "FR", "rate": "20", "name": "TVA"}))
    ok(owner_client.put(f"/products/{shirt['id']}", json={"tax_class": "reduced"}))
    reduced = {"country": "FR", "tax_class": "reduced", "rate": "5.5", "name": "Réduit"}
    created(owner_client.post("/tax-rates", json=reduced))
    created(
        owner_client.post("/discounts", json={"code": "SAVE10", "kind": "percent", "value": "10"})
    )
    body = basket((tea, 2))
    body["items"].append({"variant_id": variant["id"], "quantity": 1})
    body.update(shipping_method_id=method["id"], discount_code="save10")
    priced = created(customer_client.post("/payments/checkout", json=body))
    ok(
        owner_client.patch(
            f"/orders/{priced['id']}/status", json={"status": "paid", "note": "Wire ✓"}
        )
    )
    lines = [{"line": 1, "quantity": 1}]
    created(owner_client.post(f"/orders/{priced['id']}/shipments", json={**UPS, "lines": lines}))
    created(
        owner_client.post(f"/orders/{priced['id']}/shipments", json={**UPS, "tracking_url": None})
    )

    erased_customer = app.test_client()
    registered = created(
        erased_customer.post(
            "/auth/register",
            json={"email": "gone@example.com", "password": "correct horse battery", "name": "G"},
        )
    )
    body = {**basket((tea, 1)), "shipping_method_id": method["id"]}
    plain = created(erased_customer.post("/payments/checkout", json=body))
    ok(owner_client.patch(f"/orders/{plain['id']}/status", json={"status": "cancelled"}))
    assert owner_client.delete(f"/customers/{registered['id']}").status_code == 204

    with app.app_context():
        old = {"id": db.new_id(), "customer": customer_client.user["id"]}
        address = '{"name": "A", "line1": "1 Rue", "line2": null, "city": "Lyon",' \
            ' "postal_code": "69001", "country": "FR"}'  # fmt: skip
        with db.transaction():
            db.execute(
                "INSERT INTO orders (id, number, customer_id, status, subtotal_cents,"
                " total_cents, currency, shipping_address, created_at, updated_at) VALUES"
                " (:id, 'SO-OLD-1', :customer, 'pending', 700, 700, 'EUR', :address,"
                " '2020-01-01T00:00:00.000000Z', '2020-01-01T00:00:00.000000Z')",
                {**old, "address": address},
            )
            db.execute(
                "INSERT INTO order_items (order_id, line, product_id, name, sku,"
                " unit_price_cents, quantity, line_total_cents) VALUES"
                " (:id, 1, 'gone', 'Old tea', NULL, 350, 2, 700)",
                old,
            )
    # As the upgrade from that release does: the kept orders total counts it.
    upgraded = app.test_cli_runner().invoke(args=["db", "upgrade"])
    assert upgraded.exit_code == 0, upgraded.output
    return {"priced": priced["id"], "plain": plain["id"], "old": old["id"], "method": method["id"]}


def test_orders_are_what_marshmallow_would_dump_in_its_field_order(owner_client, shop):
    listed = ok(owner_client.get("/orders"))
    by_id = {order["id"]: order for order in listed["items"]}
    assert {shop["priced"], shop["plain"], shop["old"]} == set(by_id)

    for order_id in (shop["priced"], shop["plain"], shop["old"]):
        detail = owner_client.get(f"/orders/{order_id}")
        assert detail.status_code == 200 and detail.mimetype == "application/json"
        assert detail.json == by_id[order_id]
        # Same values, same types, same keys in the same order as the schema writes them.
        assert json.dumps(detail.json) == as_marshmallow_dumps(detail.json), order_id

    priced, plain, old = by_id[shop["priced"]], by_id[shop["plain"]], by_id[shop["old"]]
    assert [item["options"] for item in priced["items"]] == [{}, {"Size": "M", "Colour": "Red"}]
    assert priced["tax_lines"] and priced["applied"] and priced["discount_code"] == "SAVE10"
    assert priced["shipping_method"]["name"] == "Colissimo"
    assert [s["lines"] for s in priced["shipments"]] == [
        [{"line": 1, "quantity": 1}],
        [{"line": 1, "quantity": 1}, {"line": 2, "quantity": 1}],
    ]
    assert priced["shipments"][1]["tracking_url"] is None
    assert [h["status"] for h in priced["status_history"]] == [
        "pending", "paid", "partially_shipped", "shipped"]  # fmt: skip
    assert priced["status_history"][1]["note"] == "Wire ✓"
    assert priced["status_history"][1]["by"]["kind"] == "admin"
    assert priced["shipping_address"]["region"] is None
    assert plain["customer"]["email"] is None and plain["shipping_address"] is None
    assert old["payment"] is None and old["shipping_method"] is None
    assert old["tax_lines"] == old["applied"] == [] and old["prices_include_tax"] is False
    assert old["shipping_tax_cents"] == 0 and old["status_history"] == []
    assert old["items"][0]["options"] == {} and old["items"][0]["total_cents"] == 700
    assert old["items"][0]["variant_id"] is None and old["items"][0]["tax_rate"] is None
    assert old["shipping_address"]["region"] is None


def test_checkout_answers_the_order_it_reads_back_with_every_priced_part(
    app, owner_client, customer_client, shop
):
    """Checkout presents its answer from what it wrote (``orders.present_new``): it must be
    what the database's JSON shows, a breakdown, a variant's options and a tax rate's
    non-ASCII name included."""
    tea = add_product(app, "Thé vert", price_cents=1000, stock=3)
    body = {**basket((tea, 1)), "discount_code": "SAVE10", "shipping_method_id": shop["method"]}
    placed = created(customer_client.post("/payments/checkout", json=body))

    assert customer_client.get(f"/orders/{placed['id']}").json == placed
    mine = ok(customer_client.get("/orders", query_string={"page_size": 1}))
    assert mine["items"] == [placed] and mine["next_cursor"]


@pytest.mark.parametrize("page_size", [1, 100])
def test_an_orders_page_is_one_statement_with_its_kept_total(
    owner_client, shop, sql_count, page_size
):
    """The session and the page with every order's lines, history, payment and shipments;
    the kept total is read by the page's own statement (issue 42), and a last page tells it."""
    with sql_count() as cost:
        page = ok(owner_client.get("/orders", query_string={"page_size": page_size}))

    assert len(page["items"]) == min(page_size, 3) and page["total"] == 3
    assert cost == {"statements": 2, "writes": 0}

    with sql_count() as cost:
        ok(owner_client.get(f"/orders/{shop['priced']}"))

    assert cost == {"statements": 2, "writes": 0}


def test_a_customer_reads_only_their_own_orders(customer_client, shop):
    mine = ok(customer_client.get("/orders"))
    assert {order["id"] for order in mine["items"]} == {shop["priced"], shop["old"]}
    assert customer_client.get(f"/orders/{shop['plain']}").status_code == 404
