"""Seed a realistic data set by bulk SQL inserts through the data module.

Every table is filled by ``db.execute_many`` inside one transaction per table. Secrets the
benchmark needs (a few API keys and session cookies) are returned; the rest are random and
forgotten, as they would be in a real shop.
"""

import base64
import json
import random
import secrets
from dataclasses import dataclass, field
from datetime import timedelta

from werkzeug.security import generate_password_hash

from shop import db
from shop.clock import iso, now

USER_AGENT = "shop-bench/1"
BENCH_IP = "127.0.0.1"
STATUSES = (
    ("pending", 60),
    ("paid", 10),
    ("shipped", 10),
    ("delivered", 15),
    ("cancelled", 5),
)
BENCH_SCOPES = "read:order read:product write:order"
CHUNK = 5000


@dataclass
class Size:
    """How much data to make."""

    products: int
    categories: int
    keys: int
    customers: int
    orders: int


FULL = Size(products=10_000, categories=200, keys=100_000, customers=10_000, orders=50_000)
QUICK = Size(products=1_000, categories=20, keys=10_000, customers=1_000, orders=5_000)


@dataclass
class Seeded:
    """What the scenarios need to know about the seeded data."""

    product_ids: list = field(default_factory=list)
    variant_product_ids: list = field(default_factory=list)  # 12 variants each
    pending_order_ids: list = field(default_factory=list)
    paid_order_ids: list = field(default_factory=list)  # status paid (the invoice row's)
    order_key: str = ""  # read:order, read:product, write:order
    admin_cookie: str = ""
    customer_cookie: str = ""
    counts: dict = field(default_factory=dict)


def _secret(rng: random.Random) -> str:
    """An API key secret in the service's format, from a seeded generator."""
    return "eck_" + base64.urlsafe_b64encode(rng.randbytes(32)).rstrip(b"=").decode()


def _insert(sql: str, rows) -> int:
    """Insert ``rows`` in chunks inside one transaction; answer how many."""
    rows = list(rows)
    with db.transaction():
        for start in range(0, len(rows), CHUNK):
            db.execute_many(sql, rows[start : start + CHUNK])
    return len(rows)


def seed(size: Size, seed_value: int = 6) -> Seeded:
    """Fill an empty database (schema applied) with ``size``; answer the bench's handles."""
    rng = random.Random(seed_value)
    out = Seeded()
    moment = now()
    stamp = iso(moment)
    # One hash for every account: nobody signs in during the run (sessions are seeded).
    password_hash = generate_password_hash(secrets.token_urlsafe(16), method="scrypt:1024:8:1")

    owner_role = db.value("SELECT id FROM roles WHERE name = 'owner'")
    owner_id = db.new_id()
    _insert(
        "INSERT INTO users (id, email, name, password_hash, role_id, active, created_at,"
        " updated_at) VALUES (:id, :email, 'Bench Owner', :hash, :role, 1, :now, :now)",
        [{"id": owner_id, "email": "owner@bench.example", "hash": password_hash,
          "role": owner_role, "now": stamp}],
    )  # fmt: skip

    category_ids = [db.new_id() for _ in range(size.categories)]
    top = max(1, size.categories // 10)
    out.counts["categories"] = _insert(
        "INSERT INTO categories (id, name, slug, description, parent_id, position, created_at,"
        " updated_at) VALUES (:id, :name, :slug, '', :parent, :position, :now, :now)",
        (
            {
                "id": cid,
                "name": f"Category {i:03d}",
                "slug": f"category-{i:03d}",
                "parent": None if i < top else category_ids[i % top],
                "position": i,
                "now": stamp,
            }
            for i, cid in enumerate(category_ids)
        ),
    )

    out.counts["products"] = add_products(size.products, category_ids, rng, out)
    out.counts["variants"] = add_variant_products(max(20, size.products // 50), out)

    customer_ids = [db.new_id() for _ in range(size.customers)]
    out.counts["customers"] = _insert(
        "INSERT INTO customers (id, email, name, password_hash, active, created_at,"
        " updated_at) VALUES (:id, :email, :name, :hash, 1, :now, :now)",
        (
            {
                "id": cid,
                "email": f"customer{i:05d}@bench.example",
                "name": f"Customer {i:05d}",
                "hash": password_hash,
                "now": stamp,
            }
            for i, cid in enumerate(customer_ids)
        ),
    )

    out.counts["api_keys"] = _add_keys(size.keys, owner_id, rng, moment, out)
    _add_orders(size.orders, customer_ids, out.product_ids, rng, moment, out)

    # The sessions the load generator presents: the owner's and a customer's.
    out.admin_cookie = secrets.token_urlsafe(32)
    out.customer_cookie = secrets.token_urlsafe(32)
    for table, holder, holder_id, token in (
        ("user_session", "user_id", owner_id, out.admin_cookie),
        ("customer_session", "customer_id", customer_ids[0], out.customer_cookie),
    ):
        _insert(
            f"INSERT INTO {table} (id, token_hash, {holder}, created_at, last_seen_at,"
            " expires_at, user_agent, ip) VALUES (:id, :hash, :holder, :now, :now, :expires,"
            " :ua, :ip)",
            [{"id": db.new_id(), "hash": db.sha256(token), "holder": holder_id, "now": stamp,
              "expires": iso(moment + timedelta(days=7)), "ua": USER_AGENT, "ip": BENCH_IP}],
        )  # fmt: skip
    return out


def add_products(count: int, category_ids: list, rng: random.Random, out: Seeded) -> int:
    """Insert ``count`` products (19 in 20 active, plenty of stock) after those there are."""
    first = db.value("SELECT COUNT(*) FROM products") or 0
    stamp = iso(now())
    rows = []
    words = ("Linen", "Oak", "Wool", "Steel", "Clay", "Cotton", "Glass", "Walnut", "Copper")
    kinds = ("Shirt", "Table", "Scarf", "Mug", "Lamp", "Bowl", "Chair", "Vase", "Blanket")
    for i in range(first, first + count):
        pid = db.new_id()
        active = i % 20 != 7
        if active:
            out.product_ids.append(pid)
        name = f"{rng.choice(words)} {rng.choice(kinds)} {i:06d}"
        rows.append(
            {
                "id": pid,
                "name": name,
                "slug": f"product-{i:06d}",
                "description": f"{name}: made to last, shipped within two days.",
                "sku": f"SKU-{i:06d}",
                "price": rng.randrange(100, 50_000),
                "stock": 1_000_000,
                "active": active,
                "category": rng.choice(category_ids),
                "now": stamp,
            }
        )
    return _insert(
        "INSERT INTO products (id, name, slug, description, sku, price_cents, stock, active,"
        " category_id, created_at, updated_at) VALUES (:id, :name, :slug, :description, :sku,"
        " :price, :stock, :active, :category, :now, :now)",
        rows,
    )


SIZES = ("S", "M", "L")
COLOURS = ("Red", "Blue", "Green", "Black")


def add_variant_products(count: int, out: Seeded) -> int:
    """Insert ``count`` active products with Size x Colour: 12 variants each; answer how many
    variants. The database's trigger gives each product its default variant, which becomes
    the first combination."""
    options = json.dumps([{"name": "Size", "values": SIZES}, {"name": "Colour", "values": COLOURS}])
    stamp = iso(now())
    products, variants, values = [], [], []
    for i in range(count):
        pid = db.new_id()
        out.variant_product_ids.append(pid)
        products.append({"id": pid, "slug": f"shirt-{i:05d}", "options": options, "now": stamp})
        for position, (size, colour) in enumerate(
            ((size, colour) for size in SIZES for colour in COLOURS), start=1
        ):
            vid = pid if position == 1 else db.new_id()
            variants.append(
                {"id": vid, "pid": pid, "sku": f"SHIRT-{i:05d}-{size}-{colour}",
                 "options": json.dumps({"Size": size, "Colour": colour}),
                 "key": json.dumps([size, colour]), "price": 1500 + 100 * position,
                 "position": position, "now": stamp}
            )  # fmt: skip
            values += [
                {"vid": vid, "pid": pid, "name": "Size", "value": size},
                {"vid": vid, "pid": pid, "name": "Colour", "value": colour},
            ]
    _insert(
        "INSERT INTO products (id, name, slug, description, price_cents, stock, active,"
        " options, created_at, updated_at) VALUES (:id, 'Bench shirt', :slug, 'Cotton.', 1600,"
        " 12000000, 1, :options, :now, :now)",
        products,
    )
    with db.transaction():
        db.execute_many(
            "DELETE FROM product_variants WHERE id = :id", [{"id": p["id"]} for p in products]
        )
    _insert(
        "INSERT INTO product_variants (id, product_id, sku, options, option_key, price_cents,"
        " stock, active, position, stock_low, created_at, updated_at) VALUES (:id, :pid, :sku,"
        " :options, :key, :price, 1000000, 1, :position, 0, :now, :now)",
        variants,
    )
    _insert(
        "INSERT INTO variant_option_values (variant_id, product_id, name, value)"
        " VALUES (:vid, :pid, :name, :value)",
        values,
    )
    return len(variants)


def _add_keys(count: int, owner_id: str, rng: random.Random, moment, out: Seeded) -> int:
    """API keys: half the owner's, half made by the CLI; some expired, some revoked."""
    out.order_key = "eck_" + secrets.token_urlsafe(32)
    rows = []
    for i in range(count):
        secret = out.order_key if i == 0 else _secret(rng)
        created = moment - timedelta(minutes=count - i)
        rows.append(
            {
                "id": db.new_id(),
                "label": f"integration {i:06d}",
                "hash": db.sha256(secret),
                "scopes": BENCH_SCOPES if i == 0 else "read:product",
                "source": "admin" if i % 2 == 0 else "cli",
                "owner": owner_id if i % 2 == 0 else None,
                "created": iso(created),
                "expires": iso(moment - timedelta(days=1)) if i % 50 == 49 else None,
                "revoked": iso(moment) if i % 40 == 39 else None,
            }
        )
    return _insert(
        "INSERT INTO api_keys (id, label, token_hash, scopes, source, owner_id, created_at,"
        " expires_at, revoked_at) VALUES (:id, :label, :hash, :scopes, :source, :owner,"
        " :created, :expires, :revoked)",
        rows,
    )


def _add_orders(count, customer_ids, product_ids, rng, moment, out: Seeded) -> None:
    """Orders with one to three items, a payment and their first status each."""
    weights = [w for _, w in STATUSES]
    names = [s for s, _ in STATUSES]
    products = {
        row["id"]: row
        for row in db.query("SELECT id, name, sku, price_cents FROM products WHERE active = 1")
    }
    orders, items, payments, history = [], [], [], []
    address = json.dumps(
        {"name": "A Customer", "line1": "1 High Street", "line2": None, "city": "Bath",
         "postal_code": "BA1 1AA", "country": "GB"}
    )  # fmt: skip
    for i in range(count):
        oid = db.new_id()
        status = rng.choices(names, weights)[0]
        created = iso(moment - timedelta(minutes=count - i))
        subtotal = 0
        for line in range(1, rng.randint(1, 3) + 1):
            product = products[rng.choice(product_ids)]
            quantity = rng.randint(1, 3)
            line_total = product["price_cents"] * quantity
            subtotal += line_total
            items.append(
                {"order_id": oid, "line": line, "product_id": product["id"],
                 "name": product["name"], "sku": product["sku"],
                 "unit": product["price_cents"], "quantity": quantity, "total": line_total}
            )  # fmt: skip
        orders.append(
            {"id": oid, "number": f"SO-{i + 1:06d}", "customer": rng.choice(customer_ids),
             "status": status, "subtotal": subtotal, "address": address, "created": created,
             "restocked": created if status == "cancelled" else None}
        )  # fmt: skip
        payments.append(
            {"id": db.new_id(), "order_id": oid, "amount": subtotal,
             "status": "pending" if status in ("pending", "cancelled") else "paid",
             "reference": f"MANUAL-{i + 1:06d}", "created": created}
        )  # fmt: skip
        history.append({"id": db.new_id(), "order_id": oid, "status": status, "at": created})
        if status == "pending":
            out.pending_order_ids.append(oid)
        elif status == "paid":
            out.paid_order_ids.append(oid)
    out.counts["orders"] = _insert(
        "INSERT INTO orders (id, number, customer_id, status, subtotal_cents, total_cents,"
        " currency, shipping_address, restocked_at, created_at, updated_at) VALUES (:id,"
        " :number, :customer, :status, :subtotal, :subtotal, 'EUR', :address, :restocked,"
        " :created, :created)",
        orders,
    )
    out.counts["order_items"] = _insert(
        "INSERT INTO order_items (order_id, line, product_id, name, sku, unit_price_cents,"
        " quantity, line_total_cents) VALUES (:order_id, :line, :product_id, :name, :sku,"
        " :unit, :quantity, :total)",
        items,
    )
    _insert(
        "INSERT INTO payments (id, order_id, provider, amount_cents, status, reference,"
        " created_at, updated_at) VALUES (:id, :order_id, 'manual', :amount, :status,"
        " :reference, :created, :created)",
        payments,
    )
    _insert(
        "INSERT INTO order_status_history (id, order_id, status, note, at, by_kind, by_id,"
        " by_label) VALUES (:id, :order_id, :status, NULL, :at, 'customer', NULL, NULL)",
        history,
    )
    # Checkout numbers its orders after the seeded ones.
    _insert(
        "INSERT INTO counters (name, value) VALUES ('order_number', :value)",
        [{"value": count}],
    )
    if db.get_db().engine == "postgresql":  # checkout's numbers come from the sequence there
        # setval refuses 0 (no orders seeded): then the next number is 1, not 2.
        db.value(
            "SELECT setval('order_numbers', CAST(:value AS BIGINT), CAST(:called AS INTEGER) = 1)",
            {"value": max(count, 1), "called": int(count > 0)},
        )
