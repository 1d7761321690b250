"""Options and variants (issue 25) through the HTTP API, on both engines."""

import pytest

from shop import db
from tests.orders_helpers import ADDRESS
from tests.webhook_helpers import create_hook

SIZES = {"name": "Size", "values": ["S", "M", "L"]}
COLOURS = {"name": "Colour", "values": ["Red", "Blue", "Green", "Black"]}


@pytest.fixture
def app(make_app):
    """Webhooks may point at this machine over http: events are written, never sent here."""
    return make_app(WEBHOOKS_ALLOW_PRIVATE=True, WEBHOOKS_ALLOW_HTTP=True)


@pytest.fixture
def shirt(owner_client):
    """A product with Size × Colour (3 × 4): it starts with one variant, S/Red."""
    response = owner_client.post(
        "/products",
        json={
            "name": "Shirt",
            "price_cents": 2000,
            "stock": 5,
            "sku": "SHIRT-S-RED",
            "options": [SIZES, COLOURS],
        },
    )
    assert response.status_code == 201, response.json
    return response.json


def variants(client, product_id) -> list[dict]:
    response = client.get(f"/products/{product_id}/variants")
    assert response.status_code == 200, response.json
    return response.json["items"]


def generate(client, product_id, **body):
    return client.post(f"/products/{product_id}/variants/generate", json=body)


def test_a_product_with_options_starts_with_its_first_combination(owner_client, shirt):
    (first,) = shirt["variants"]
    assert first["options"] == {"Size": "S", "Colour": "Red"}
    assert (first["price_cents"], first["stock"], first["sku"]) == (2000, 5, "SHIRT-S-RED")
    assert shirt["options"] == [SIZES, COLOURS]
    assert variants(owner_client, shirt["id"]) == shirt["variants"]


def test_generate_3_by_4_makes_12_then_0(owner_client, shirt):
    made = generate(owner_client, shirt["id"], price_cents=2500, stock=2)
    assert made.status_code == 200, made.json
    assert made.json["total"] == 11  # the first combination existed already
    assert {v["price_cents"] for v in made.json["items"]} == {2500}
    everything = variants(owner_client, shirt["id"])
    assert len(everything) == 12
    assert len({tuple(sorted(v["options"].items())) for v in everything}) == 12
    assert [v["position"] for v in everything] == list(range(1, 13))
    again = generate(owner_client, shirt["id"])
    assert again.status_code == 200 and again.json == {"items": [], "total": 0}


def test_more_than_250_combinations_is_a_400_that_says_so(owner_client):
    many = [{"name": n, "values": [str(i) for i in range(7)]} for n in ("A", "B", "C")]
    product = owner_client.post(
        "/products", json={"name": "Big", "price_cents": 1, "options": many}
    )
    assert product.status_code == 201, product.json
    response = generate(owner_client, product.json["id"])
    assert response.status_code == 400
    assert "343 combinations" in response.json["message"] and "250" in response.json["message"]
    assert len(variants(owner_client, product.json["id"])) == 1


def test_variant_rules_same_values_unknown_value_and_duplicate_sku(owner_client, shirt):
    url = f"/products/{shirt['id']}/variants"
    taken = owner_client.post(url, json={"options": {"Size": "S", "Colour": "Red"}})
    assert taken.status_code == 409 and shirt["id"] in taken.json["message"]
    unknown = owner_client.post(url, json={"options": {"Size": "XL", "Colour": "Red"}})
    assert unknown.status_code == 400 and "'XL'" in unknown.json["message"]
    partial = owner_client.post(url, json={"options": {"Size": "M"}})
    assert partial.status_code == 400 and "Colour" in partial.json["message"]
    other = owner_client.post("/products", json={"name": "Mug", "price_cents": 5, "sku": "MUG"})
    dup = owner_client.post(url, json={"options": {"Size": "M", "Colour": "Red"}, "sku": "MUG"})
    assert dup.status_code == 409 and other.json["id"] in dup.json["message"]
    cheap = owner_client.post(
        url,
        json={
            "options": {"Size": "M", "Colour": "Red"},
            "price_cents": 100,
            "compare_at_price_cents": 99,
        },
    )
    assert cheap.status_code == 400 and "compare_at_price_cents" in cheap.json["message"]
    made = owner_client.post(
        url,
        json={"options": {"Size": "M", "Colour": "Red"}, "sku": "SHIRT-M-RED", "stock": 4},
    )
    assert made.status_code == 201, made.json
    assert made.json["price_cents"] == 2000  # the product's
    moved = owner_client.patch(f"{url}/{made.json['id']}", json={"sku": "SHIRT-S-RED"})
    assert moved.status_code == 409
    image = owner_client.patch(f"{url}/{made.json['id']}", json={"image_id": "nope"})
    assert image.status_code == 400 and image.json["message"].startswith("image_id: no image")
    with_db = variants(owner_client, shirt["id"])
    assert [v["sku"] for v in with_db] == ["SHIRT-S-RED", "SHIRT-M-RED"]


def test_removing_a_value_in_use_is_a_409_naming_the_variants(owner_client, shirt):
    made = generate(owner_client, shirt["id"]).json["items"]
    larges = sorted(v["id"] for v in made if v["options"]["Size"] == "L")
    fewer = {"name": "Size", "values": ["S", "M"]}
    response = owner_client.put(f"/products/{shirt['id']}", json={"options": [fewer, COLOURS]})
    assert response.status_code == 409
    assert all(variant_id in response.json["message"] for variant_id in larges)
    for variant_id in larges:
        gone = owner_client.delete(f"/products/{shirt['id']}/variants/{variant_id}")
        assert gone.status_code == 204
    done = owner_client.put(f"/products/{shirt['id']}", json={"options": [fewer, COLOURS]})
    assert done.status_code == 200, done.json
    assert len(done.json["variants"]) == 8


def test_the_default_variant_carries_price_stock_and_sku(owner_client, client):
    made = owner_client.post(
        "/products", json={"name": "Tea", "price_cents": 450, "stock": 7, "sku": "TEA"}
    )
    assert made.status_code == 201, made.json
    tea = made.json
    (variant,) = tea["variants"]
    assert variant["options"] == {} and (variant["price_cents"], variant["stock"]) == (450, 7)
    changed = owner_client.put(f"/products/{tea['id']}", json={"price_cents": 500, "sku": "T2"})
    assert changed.status_code == 200, changed.json
    assert changed.json["variants"][0]["price_cents"] == changed.json["price_cents"] == 500
    assert changed.json["variants"][0]["sku"] == changed.json["sku"] == "T2"
    last = owner_client.delete(f"/products/{tea['id']}/variants/{variant['id']}")
    assert last.status_code == 409
    # a second variant: the product's own price/stock/sku now point at the variants
    owner_client.put(
        f"/products/{tea['id']}", json={"options": [{"name": "Size", "values": ["S", "L"]}]}
    )
    big = owner_client.post(
        f"/products/{tea['id']}/variants",
        json={"options": {"Size": "L"}, "price_cents": 300, "stock": 2},
    )
    assert big.status_code == 201, big.json
    several = owner_client.put(f"/products/{tea['id']}", json={"stock": 1})
    assert several.status_code == 400 and big.json["id"] in several.json["message"]
    read = client.get(f"/products/{tea['id']}").json
    assert (read["price_cents"], read["stock"], read["sku"], read["in_stock"]) == (
        300,
        9,
        None,
        True,
    )
    listed = client.get("/products?sort=price").json["items"]
    assert [(p["id"], p["price_cents"]) for p in listed] == [(tea["id"], 300)]
    owner_client.patch(f"/products/{tea['id']}/variants/{big.json['id']}", json={"active": False})
    public = client.get(f"/products/{tea['id']}").json
    assert [v["id"] for v in public["variants"]] == [variant["id"]]
    assert (public["price_cents"], public["stock"]) == (500, 7)
    assert client.get("/products?max_price=400").json["total"] == 0


def test_checkout_by_variant_records_it_and_a_cancel_puts_it_back(
    app, owner_client, customer_client, shirt
):
    made = generate(owner_client, shirt["id"], stock=3).json["items"]
    medium_blue = next(v for v in made if v["options"] == {"Size": "M", "Colour": "Blue"})
    owner_client.patch(
        f"/products/{shirt['id']}/variants/{medium_blue['id']}", json={"sku": "SHIRT-M-BLUE"}
    )
    body = {"shipping_address": ADDRESS, "payment_method": "manual"}
    vague = customer_client.post(
        "/payments/checkout", json={**body, "items": [{"product_id": shirt["id"], "quantity": 1}]}
    )
    assert vague.status_code == 400
    assert "12 variants" in vague.json["message"] and medium_blue["id"] in vague.json["message"]
    order = customer_client.post(
        "/payments/checkout",
        json={**body, "items": [{"variant_id": medium_blue["id"], "quantity": 2}]},
    )
    assert order.status_code == 201, order.json
    (line,) = order.json["items"]
    assert line["variant_id"] == medium_blue["id"] and line["product_id"] == shirt["id"]
    assert (line["sku"], line["options"]) == ("SHIRT-M-BLUE", {"Size": "M", "Colour": "Blue"})
    too_many = customer_client.post(
        "/payments/checkout",
        json={**body, "items": [{"variant_id": medium_blue["id"], "quantity": 2}]},
    )
    assert too_many.status_code == 409 and medium_blue["id"] in too_many.json["message"]
    stocks = {v["id"]: v["stock"] for v in variants(owner_client, shirt["id"])}
    assert stocks[medium_blue["id"]] == 1
    assert owner_client.get(f"/products/{shirt['id']}").json["stock"] == 5 + 11 * 3 - 2
    cancelled = customer_client.post(f"/orders/{order.json['id']}/cancel")
    assert cancelled.status_code == 200, cancelled.json
    stocks = {v["id"]: v["stock"] for v in variants(owner_client, shirt["id"])}
    assert stocks[medium_blue["id"]] == 3
    # the line keeps the variant's SKU and options as they were at the sale
    owner_client.patch(f"/products/{shirt['id']}/variants/{medium_blue['id']}", json={"sku": "X"})
    kept = customer_client.get(f"/orders/{order.json['id']}").json["items"][0]
    assert kept["sku"] == "SHIRT-M-BLUE"


def test_stock_low_fires_once_until_back_above_and_variant_changes_are_product_updates(
    app, owner_client, customer_client
):
    create_hook(owner_client, "http://127.0.0.1:9/hook", "variant.stock_low", "product.updated")
    mug = owner_client.post(
        "/products",
        json={"name": "Mug", "price_cents": 900, "stock": 4, "low_stock_threshold": 2},
    ).json
    (variant,) = mug["variants"]
    url = f"/products/{mug['id']}/variants/{variant['id']}"
    body = {"shipping_address": ADDRESS, "payment_method": "manual"}
    for stock in (2, 1):  # falls to the threshold, then below it: one event
        assert owner_client.patch(url, json={"stock": stock}).status_code == 200
    owner_client.patch(url, json={"stock": 3})  # above again
    bought = customer_client.post(
        "/payments/checkout",
        json={**body, "items": [{"variant_id": variant["id"], "quantity": 1}]},
    )
    assert bought.status_code == 201, bought.json
    with app.app_context():
        events = db.query("SELECT type, subject_id FROM webhook_events ORDER BY created_at, id")
    low = [e["subject_id"] for e in events if e["type"] == "variant.stock_low"]
    assert low == [variant["id"], variant["id"]]
    updated = [e for e in events if e["type"] == "product.updated"]
    assert len(updated) == 3 and {e["subject_id"] for e in updated} == {mug["id"]}


def test_a_basket_of_several_variants_keeps_each_products_stock_and_says_when_it_ran_out(
    app, owner_client, customer_client, shirt
):
    create_hook(owner_client, "http://127.0.0.1:9/hook", "product.out_of_stock")
    small_red = variants(owner_client, shirt["id"])[0]
    made = generate(owner_client, shirt["id"], stock=1).json["items"]
    others = sorted(made, key=lambda v: v["id"], reverse=True)[:2]
    mug = owner_client.post("/products", json={"name": "Mug", "price_cents": 900, "stock": 2}).json
    body = {"shipping_address": ADDRESS, "payment_method": "manual"}
    lines = [
        {"variant_id": others[0]["id"], "quantity": 1},
        {"product_id": mug["id"], "quantity": 2},
        {"variant_id": small_red["id"], "quantity": 5},
        {"variant_id": others[1]["id"], "quantity": 1},
    ]
    order = customer_client.post("/payments/checkout", json={**body, "items": lines})

    assert order.status_code == 201, order.json
    assert [item["quantity"] for item in order.json["items"]] == [1, 2, 5, 1]
    assert owner_client.get(f"/products/{mug['id']}").json["stock"] == 0
    assert owner_client.get(f"/products/{shirt['id']}").json["stock"] == len(made) - 2
    listed = {p["id"]: p["stock"] for p in owner_client.get("/products").json["items"]}
    assert listed == {mug["id"]: 0, shirt["id"]: len(made) - 2}
    with app.app_context():
        events = db.query(
            "SELECT subject_id FROM webhook_events WHERE type = 'product.out_of_stock'"
        )
    assert [e["subject_id"] for e in events] == [mug["id"]]


def _as_a_checkout_holds_the_product(database_url, product_id, variant_id, write):
    """Hold the product's row as a checkout's decrement does, call ``write`` (an HTTP request)
    in a thread until it waits for that row, then take the variant's stock as the checkout
    goes on to do, and answer ``write``'s response. A writer that took the variant's row
    before the product's makes this a deadlock (PostgreSQL rolls one side back)."""
    import threading

    import psycopg

    answers = []
    with psycopg.connect(database_url) as checkout:
        checkout.execute("SELECT id FROM products WHERE id = %s FOR UPDATE", (product_id,))
        mine = checkout.execute("SELECT pg_backend_pid()").fetchone()[0]
        writer = threading.Thread(target=lambda: answers.append(write()))
        writer.start()
        with psycopg.connect(database_url, autocommit=True) as watcher:
            for _ in range(600):  # until the write waits for this transaction (at most ~30 s)
                blocked = watcher.execute(
                    "SELECT COUNT(*) FROM pg_stat_activity WHERE %s = ANY(pg_blocking_pids(pid))",
                    (mine,),
                ).fetchone()[0]
                if blocked or not writer.is_alive():
                    break
                threading.Event().wait(0.05)
        assert blocked, "the write never waited for the product's row"
        checkout.execute("SET LOCAL lock_timeout = '10s'")
        checkout.execute(
            "UPDATE product_variants SET stock = stock - 1 WHERE id = %s", (variant_id,)
        )
    writer.join(30)
    assert answers, "the write did not answer"
    return answers[0]


def test_a_variant_write_takes_its_product_row_before_the_variant_row(
    owner_client, shirt, database_url
):
    """Checkout locks a product's row, then its variants' (the trigger of 0020 updates the
    product when a variant's stock changes): a variant's other writers must take the product
    first too, or a checkout and a restock wait for each other. Here the test holds the
    product's row as a checkout does; the PATCH must wait for it without holding the
    variant's row, so the "checkout" can still take the variant's stock."""
    if not database_url.startswith("postgres"):
        pytest.skip("row locks: SQLite lets one writer in at a time")
    product_id, variant_id = shirt["id"], shirt["variants"][0]["id"]
    answer = _as_a_checkout_holds_the_product(
        database_url,
        product_id,
        variant_id,
        lambda: owner_client.patch(
            f"/products/{product_id}/variants/{variant_id}", json={"stock": 9}
        ),
    )
    assert answer.status_code == 200, answer.json
    assert variants(owner_client, product_id)[0]["stock"] == 9


def test_a_change_of_options_takes_the_product_row_before_its_variants(
    owner_client, shirt, database_url
):
    """``PUT /products/{id}`` with new options rewrites every variant's options
    (``variants.set_options``) and then the product's row: like every other writer of
    variants it must take the product's row first, or it holds a variant a checkout is about
    to take while waiting for the product that checkout holds (a deadlock: a 503 to one of
    them). Found by reviewing the writers of variant rows against the lock order of 0020."""
    if not database_url.startswith("postgres"):
        pytest.skip("row locks: SQLite lets one writer in at a time")
    product_id, variant_id = shirt["id"], shirt["variants"][0]["id"]
    material = {"name": "Material", "values": ["Cotton", "Linen"]}
    answer = _as_a_checkout_holds_the_product(
        database_url,
        product_id,
        variant_id,
        lambda: owner_client.put(
            f"/products/{product_id}", json={"options": [SIZES, COLOURS, material]}
        ),
    )
    assert answer.status_code == 200, answer.json
    assert variants(owner_client, product_id)[0]["options"]["Material"] == "Cotton"
    assert variants(owner_client, product_id)[0]["stock"] == 4  # the "checkout" took one


def test_a_checkout_that_waited_for_another_says_when_their_product_ran_out(
    app, owner_client, customer_client, database_url
):
    """Two checkouts take the last unit of each of a product's two variants: the one that
    waited for the other's product row must see the other's decrement and emit
    ``product.out_of_stock`` (checkout's one-statement decrement read the other variants'
    stock as of before its wait, so neither checkout saw the product at 0). Found by reading
    the decrement's ``RETURNING`` against PostgreSQL's READ COMMITTED snapshots."""
    if not database_url.startswith("postgres"):
        pytest.skip("row locks: SQLite lets one writer in at a time")
    create_hook(owner_client, "http://127.0.0.1:9/hook", "product.out_of_stock")
    sizes = {"name": "Size", "values": ["S", "M"]}
    created = owner_client.post(
        "/products", json={"name": "Cap", "price_cents": 900, "stock": 1, "options": [sizes]}
    )
    assert created.status_code == 201, created.json
    product_id = created.json["id"]
    assert generate(owner_client, product_id, stock=1).status_code == 200
    first, second = variants(owner_client, product_id)
    body = {"shipping_address": ADDRESS, "payment_method": "manual"}
    answer = _as_a_checkout_holds_the_product(
        database_url,
        product_id,
        second["id"],  # the other checkout takes the last M
        lambda: customer_client.post(
            "/payments/checkout",
            json={**body, "items": [{"variant_id": first["id"], "quantity": 1}]},
        ),
    )
    assert answer.status_code == 201, answer.json
    assert owner_client.get(f"/products/{product_id}").json["stock"] == 0
    with app.app_context():
        events = db.query(
            "SELECT subject_id FROM webhook_events WHERE type = 'product.out_of_stock'"
        )
    assert [e["subject_id"] for e in events] == [product_id]


def test_a_lone_variants_price_sku_and_stock_change_together(owner_client):
    """One PATCH of a lone variant's price, SKU and stock keeps all three, on the variant and
    on its product: the stock trigger (0020) and the lone-variant trigger (0007) must not
    copy the product's older price and SKU back onto the variant."""
    product = owner_client.post(
        "/products", json={"name": "Pot", "price_cents": 1000, "stock": 5, "sku": "POT-1"}
    ).json
    variant_id = product["variants"][0]["id"]
    changed = owner_client.patch(
        f"/products/{product['id']}/variants/{variant_id}",
        json={"price_cents": 2000, "stock": 7, "sku": "POT-2"},
    )
    assert changed.status_code == 200, changed.json
    assert (changed.json["price_cents"], changed.json["stock"], changed.json["sku"]) == (
        2000,
        7,
        "POT-2",
    )
    shown = owner_client.get(f"/products/{product['id']}").json
    assert (shown["price_cents"], shown["stock"], shown["sku"]) == (2000, 7, "POT-2")


def _list_columns(app, product_id) -> tuple:
    with app.app_context():
        row = db.one(
            "SELECT price_cents, stock, sku FROM products WHERE id = :id", {"id": product_id}
        )
    return row["price_cents"], row["stock"], row["sku"]


def _write(app, sql: str, **params) -> None:
    with app.app_context(), db.transaction():
        db.execute(sql, params)


def test_the_product_columns_follow_any_write_of_its_variants_in_the_database(app, owner_client):
    """The list columns' rule lives in the database (0021): a variant added, changed or
    removed by any writer (here plain SQL, as a node of another release could) moves its
    product's price (lowest active), stock (active sum) and SKU (a lone variant's)."""
    product = owner_client.post(
        "/products", json={"name": "Jar", "price_cents": 1000, "stock": 5, "sku": "JAR-1"}
    ).json
    product_id = product["id"]
    _write(
        app,
        "INSERT INTO product_variants (id, product_id, sku, option_key, price_cents, stock,"
        " active, created_at, updated_at) VALUES ('second', :id, 'JAR-2', '[\"2\"]', 400, 3,"
        " 0, '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z')",
        id=product_id,
    )
    assert _list_columns(app, product_id) == (1000, 5, None)  # inactive: only the count
    _write(app, "UPDATE product_variants SET active = 1 WHERE id = 'second'")
    assert _list_columns(app, product_id) == (400, 8, None)
    _write(app, "UPDATE product_variants SET price_cents = 1200 WHERE id = 'second'")
    assert _list_columns(app, product_id) == (1000, 8, None)
    _write(app, "DELETE FROM product_variants WHERE id = :id", id=product_id)
    assert _list_columns(app, product_id) == (1200, 3, "JAR-2")
    _write(app, "UPDATE product_variants SET sku = 'JAR-3' WHERE id = 'second'")
    assert _list_columns(app, product_id) == (1200, 3, "JAR-3")


def test_deleting_a_product_takes_its_variants_with_it(app, owner_client, shirt):
    """Its variants go by the cascade, and their trigger (0021) finds no product to update."""
    assert generate(owner_client, shirt["id"], stock=1).status_code == 200
    assert owner_client.delete(f"/products/{shirt['id']}").status_code == 204
    assert owner_client.get(f"/products/{shirt['id']}").status_code == 404
    with app.app_context():
        left = db.value(
            "SELECT COUNT(*) FROM product_variants WHERE product_id = :id", {"id": shirt["id"]}
        )
    assert left == 0
