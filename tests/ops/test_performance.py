"""What the hot paths cost in SQL (the benchmark measures the time; these pin the counts).

Key resolution and session refresh are counted in test_api_keys.py and test_auth.py.
"""

import json
import os
import subprocess
import sys

import pytest

from shop import db
from tests.live import ROOT
from tests.orders_helpers import add_product, basket


@pytest.mark.parametrize("who", ["owner_client", "customer_client"])
def test_me_is_answered_by_the_session_query_alone(request, who, sql_count):
    client = request.getfixturevalue(who)

    with sql_count() as cost:
        response = client.get("/auth/me")

    assert response.status_code == 200
    assert response.json["email"] == client.user["email"]
    assert cost == {"statements": 1, "writes": 0}


def test_me_shows_the_new_name_after_patching_it(customer_client):
    response = customer_client.patch("/auth/me", json={"name": "  Robin  "})

    assert response.json["name"] == "Robin"
    assert customer_client.get("/auth/me").json["name"] == "Robin"


def test_sessions_are_found_through_the_unique_token_index(app):
    from shop.auth.sessions import _RESOLVE

    with app.app_context():
        if db.get_db().engine != "sqlite":
            pytest.skip("query plan checked on SQLite; PostgreSQL uses the same unique index")
        for sql in _RESOLVE.values():
            plan = db.query("EXPLAIN QUERY PLAN " + sql, {"token_hash": "x"})
            assert "USING INDEX sqlite_autoindex" in plan[0]["detail"], plan


def test_compiled_responses_equal_marshmallow_dumps():
    from marshmallow import Schema, fields, post_dump

    from shop.api.dump import compile_dump

    class Owner(Schema):
        id = fields.String()
        email = fields.Email(allow_none=True)

    class Record(Schema):
        id = fields.String()
        count = fields.Integer()
        price = fields.Integer(as_string=True)
        active = fields.Boolean()
        tags = fields.List(fields.String())
        owner = fields.Nested(Owner, allow_none=True)
        owners = fields.List(fields.Nested(Owner))
        label = fields.String(data_key="name")
        note = fields.String(dump_default="none")
        data = fields.Raw()
        total = fields.Method("double")
        secret = fields.String(load_only=True)

        def double(self, obj):
            return obj["count"] * 2

    class Hooked(Record):
        @post_dump
        def mark(self, data, **kwargs):
            return {**data, "hooked": True}

    rows = [
        {"id": "a", "count": 3, "price": 250, "active": 1, "tags": ["x", 4], "owner": None,
         "owners": [{"id": "o", "email": None}], "label": "A", "data": {"k": [1]},
         "secret": "s"},
        {"id": 7, "count": True, "price": 0, "active": 0, "tags": None,
         "owner": {"id": "o", "email": "o@example.com"}, "owners": [], "label": None,
         "note": "kept", "data": None},
        {"id": "missing keys", "count": 1},  # marshmallow leaves the others out
        {"label": "B", "owners": [{"email": None}], "id": "x", "count": 2},  # in any order
    ]  # fmt: skip

    def same(fast, slow):  # equal, and in the same order: the JSON's bytes
        assert json.dumps(fast) == json.dumps(slow)

    for schema in (Record(), Record(many=True), Hooked()):
        fast = compile_dump(schema)
        if isinstance(schema, Hooked):
            assert fast is None
            continue
        if schema.many:
            same(fast(rows), schema.dump(rows))
            continue
        for row in rows:
            same(fast(row), schema.dump(row))
        same(fast(rows, many=True), schema.dump(rows, many=True))


def test_a_kept_cursor_binding_is_the_digest_it_always_was():
    """``pages._binding`` is kept per list (issue 42); its digest is still the hash of the
    JSON of the list, its filters, its sort and the asked query, so cursors handed out
    before still bind to the same list, and another filter still gives another digest."""
    import hashlib

    from shop.db import pages

    where = pages.Where("p.active = 1", "p.category_id = :category")
    keys = [("p.created_at", True), ("p.id", True)]
    asked = {pages.ASKED: ["/products", [("category", "c1"), ("option[Size]", "M")]]}
    text = json.dumps(
        [hashlib.sha256(b"SELECT p.id FROM products p").hexdigest(), where.conditions, keys,
         asked[pages.ASKED]]
    )  # fmt: skip
    expected = hashlib.sha256(text.encode()).hexdigest()[:16]
    for _ in range(2):  # computed, then kept
        assert pages._binding("SELECT p.id FROM products p", where, keys, asked) == expected
    other = {pages.ASKED: ["/products", [("category", "c2")]]}
    assert pages._binding("SELECT p.id FROM products p", where, keys, other) != expected


def test_load_hooks_do_not_stop_a_schema_from_being_compiled():
    from marshmallow import Schema, fields, post_load

    from shop.api.dump import compile_dump

    class Address(Schema):
        city = fields.String()

        @post_load
        def tidy(self, data, **kwargs):
            return data

    assert compile_dump(Address()) is not None
    assert compile_dump(Address())({"city": "Bath"}) == {"city": "Bath"}


def test_what_a_checkout_and_a_status_change_cost_in_sql(
    app, customer_client, owner_client, sql_count
):
    """Issue 29's target is at most 10 statements and 7 writes, met: the session, the
    decrement (which finds the product's lone variant itself; a trigger keeps the product's
    stock), one read of the settings, tax rates, shipping methods and the order number (a
    sequence: no counter row), then the order, its items, payment, first history entry,
    confirmation mail and audit entry; the webhook subscriptions are kept by the web worker
    since the first checkout read them (issue 42: ``outbox.Subscribers``), so 9 statements;
    on PostgreSQL the order, its one item and its payment are one statement (issue 42:
    ``placing._write_order``), so 7 statements and 5 writes there. The orders total is not
    bumped (``shop/db/totals.py``) and the answer is presented from what was written, not read
    back: it is exactly what ``GET /orders/{id}`` reads.

    ``PATCH /orders/{id}/status``: the session, the order with its payment and its two
    progress statuses, the move (which writes those too: issue 42), its history entry, the
    payment's status, the audit entry (the webhook subscriptions kept, as above), the order
    read back (one statement: ``orders/order_json.py``), the settings (once for the invoice
    and the mail: issue 42) and the mail; on PostgreSQL also the order's lock
    (``orders.lock``, an advisory lock: issue 35), which SQLite's one writer at a time makes
    unneeded."""
    teapot = add_product(app, stock=5)
    assert customer_client.post("/payments/checkout", json=basket((teapot, 1))).status_code == 201

    with sql_count() as cost:
        response = customer_client.post("/payments/checkout", json=basket((teapot, 1)))

    assert response.status_code == 201
    one_statement = app.extensions["shop.db"].engine == "postgresql"
    assert cost == (
        {"statements": 7, "writes": 5} if one_statement else {"statements": 9, "writes": 7}
    )
    assert customer_client.get(f"/orders/{response.json['id']}").json == response.json

    with sql_count() as cost:
        moved = owner_client.patch(f"/orders/{response.json['id']}/status", json={"status": "paid"})

    assert moved.status_code == 200 and moved.json["payment"]["status"] == "paid"
    locked = app.extensions["shop.db"].engine == "postgresql"
    # Issue 37 keeps the payment and fulfilment statuses (written by the move itself since
    # issue 42); issue 40 issues the invoice in the same transaction: the settings, the
    # counter's bump, the order, its lines, payment and discount for the snapshot, and the
    # invoice itself.
    assert cost == {"statements": 14 + locked, "writes": 8}


def test_hot_product_reads_cost_the_same_statements_whatever_the_variants(
    app, owner_client, make_key, sql_count
):
    """Issue 29: the list reads the products' own list columns (``price_cents``, ``stock``
    kept by every variant write), never their variants or images, and the keyed detail is
    one statement beside the key's, however many variants there are."""
    from tests.catalogue_helpers import Catalogue

    shop = Catalogue(owner_client)
    options = [{"name": "Size", "values": ["S", "M", "L"]}, {"name": "Colour", "values": ["Red"]}]
    shirt = shop.product(options=options, generate=True, price_cents=1500)
    owner_client.patch(
        f"/products/{shirt['id']}/variants/{shirt['variants'][0]['id']}", json={"stock": 4}
    )
    plain = shop.product(stock=0)
    reader = make_key("read:product")
    anonymous = app.test_client()
    assert reader.get(f"/products/{plain['id']}").status_code == 200  # the key's first use

    costs = {}
    for name, client, path in (
        ("list", anonymous, "/products"),
        ("detail", reader, f"/products/{shirt['id']}"),
        ("one variant", reader, f"/products/{plain['id']}"),
    ):
        with sql_count() as costs[name]:
            response = client.get(path)
        assert response.status_code == 200, response.json
        if name == "list":
            listed = {item["id"]: item for item in response.json["items"]}
        elif name == "detail":
            detail = response.json

    assert costs == {
        # A short last page tells its own total; the page's prior prices (issue 40) are one.
        "list": {"statements": 2, "writes": 0},
        "detail": {"statements": 2, "writes": 0},
        "one variant": {"statements": 2, "writes": 0},
    }
    assert len(detail["variants"]) == 3
    assert listed[shirt["id"]]["price_cents"] == detail["price_cents"] == 1500
    assert listed[shirt["id"]]["stock"] == sum(v["stock"] for v in detail["variants"]) >= 4
    assert listed[shirt["id"]]["in_stock"] is True and listed[plain["id"]]["in_stock"] is False
    assert list(listed[plain["id"]]) == list(detail)[: len(listed[plain["id"]])]  # schema order


_LOADED_WHEN_NEEDED = ("psycopg", "fpdf", "stripe", "redis", "sqlite_utils", "PIL")
_SERVE_AND_LIST_LOADED = f"""
import sys
from shop import create_app
app = create_app()
client = app.test_client()
for path in ("/healthz", "/readyz", "/products", "/products/facets", "/store/"):
    assert client.get(path).status_code < 500, path
print(",".join(name for name in {_LOADED_WHEN_NEEDED!r} if name in sys.modules))
"""


def test_a_sqlite_shop_loads_no_driver_pdf_or_stripe_library_it_does_not_use(tmp_path):
    # A one-node SQLite shop's web process holds none of psycopg, fpdf2, Stripe's SDK (with
    # httpx), redis, sqlite-utils or Pillow until it needs one (~48 MB: docs/performance.md,
    # "Worker memory"): the PDF library comes with the first invoice drawn, the file reader
    # with the first catalogue import, Pillow with the first image decoded, the driver with a
    # PostgreSQL DATABASE_URL.
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "DATABASE_URL": f"sqlite:///{tmp_path / 'shop.db'}",
    }
    subprocess.run(
        [sys.executable, "-m", "flask", "--app", "app", "db", "upgrade"],
        cwd=ROOT, env=env, capture_output=True, check=True, timeout=60,
    )  # fmt: skip
    result = subprocess.run(
        [sys.executable, "-c", _SERVE_AND_LIST_LOADED],
        cwd=ROOT, env=env, capture_output=True, text=True, check=True, timeout=60,
    )  # fmt: skip
    assert result.stdout.strip() == "", result.stdout
