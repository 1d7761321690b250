"""The floor the service is measured against: bare Flask, one SELECT, the same data module.

Served by gunicorn with the same ``gunicorn.conf.py`` as the service (``bench.baseline:app``),
on the same database (``DATABASE_URL``). No auth, no schemas, no hooks: whatever the service
costs beyond these routes is the price of its stack. ``/fixed`` answers fixed JSON without
touching the database: the Flask ceiling (issue 29), what Flask and gunicorn alone cost.

The references of issue 42 do the same work as a service route with nothing else: the
service's own statements (their SQL imported from the shop, so it cannot drift), the same
JSON keys built by the shop's pure functions, answered by stock Flask (``jsonify``): the
keyed read (the key by its hash, then the product as the service reads it: the product with
its variants and images, and their recorded prices), the product list (the page, its kept
total, the prices), ``/auth/me`` (the session with its user, role and permissions), and
checkout's write (in one transaction the stock of two lines, the order, its lines and a
payment). No hooks, no schema, no guard: what the service costs beyond them is its stack.
``bench/references.py`` runs each beside its service route, taking turns.
"""

import base64
import hashlib
import json
import os
import secrets
from datetime import UTC, datetime, timedelta

from flask import Flask, jsonify, request

from shop.auth import sessions
from shop.catalogue import images, present, prices
from shop.clock import parse
from shop.db import Database

_COLUMNS = (
    "id, name, slug, description, sku, price_cents, stock, active, category_id, created_at,"
    " updated_at"
)

# A product as the keyed read answers it, so the ceiling encodes as much JSON as the service.
_FIXED = {
    "id": "0123456789abcdef01234567",
    "name": "Oak Lamp 000042",
    "slug": "product-000042",
    "description": "Oak Lamp 000042: made to last, shipped within two days.",
    "sku": "SKU-000042",
    "price_cents": 4200,
    "stock": 1000000,
    "active": True,
    "category_id": "0123456789abcdef76543210",
    "created_at": "2026-11-25T12:00:00Z",
    "updated_at": "2026-11-25T12:00:00Z",
}

app = Flask(__name__)
database = Database(os.environ["DATABASE_URL"])
app.extensions["shop.db"] = database  # for the shop's own price statement (shop.catalogue)


@app.get("/fixed")
def fixed():
    """Fixed JSON: no database, no hooks (the Flask ceiling)."""
    return _FIXED


@app.get("/products/<product_id>")
def product(product_id):
    """One active product by id."""
    row = database.one(
        f"SELECT {_COLUMNS} FROM products WHERE id = :id AND active = 1", {"id": product_id}
    )
    if row is None:
        return {"message": "Not found."}, 404
    return row


@app.get("/products")
def products():
    """A page of 20 active products by name."""
    page = max(1, request.args.get("page", 1, type=int))
    rows = database.query(
        f"SELECT {_COLUMNS} FROM products WHERE active = 1 ORDER BY name, id"
        " LIMIT 20 OFFSET :offset",
        {"offset": (page - 1) * 20},
    )
    return {"items": rows, "page": page, "page_size": 20}


@app.get("/keyed/products/<product_id>")
def keyed_product(product_id):
    """The keyed read's work: the key by the hash of its secret, then the product as the
    service reads it (its variants and images in the same statement, then their prices)."""
    secret = request.headers.get("Authorization", "").removeprefix("Bearer ")
    key = database.one(
        "SELECT id, scopes, revoked_at, expires_at FROM api_keys WHERE token_hash = :hash",
        {"hash": hashlib.sha256(secret.encode()).hexdigest()},
    )
    if key is None or key["revoked_at"]:
        return {"message": "Invalid API key."}, 401
    row = database.one(present.DETAIL[database.engine, 1], {"id": product_id})
    if row is None:
        return {"message": "Product not found."}, 404
    variants = prices.with_variant_priors(json.loads(row["variants"]))
    product = present.present(row)
    product["prior_price_cents"] = prices.product_prior(product["price_cents"], variants)
    product["variants"] = variants
    product["images"] = [images.present(image) for image in json.loads(row["images"])]
    return jsonify(product)


# The service's first page of GET /products (newest first) and the pages after it by number.
_PAGE = (
    "SELECT p.created_at AS _k0, p.id AS _k1, "
    + present.SELECT.lstrip().removeprefix("SELECT")
    + " WHERE p.id IN (SELECT p.id FROM products p WHERE p.active = 1"
    " ORDER BY p.created_at DESC, p.id DESC LIMIT 21{offset})"
    " ORDER BY p.created_at DESC, p.id DESC"
)


@app.get("/listed/products")
def listed_products():
    """The product list's work: a page of 20 active products newest first, as the service
    reads it (its collections and currency as columns), the kept total, their prices."""
    page = max(1, request.args.get("page", 1, type=int))
    offset = (page - 1) * 20
    rows = database.query(
        _PAGE.format(offset=" OFFSET :offset" if offset else ""), {"offset": offset}
    )
    more, rows = len(rows) > 20, rows[:20]
    last = [rows[-1]["_k0"], rows[-1]["_k1"]] if rows else None
    for row in rows:
        del row["_k0"], row["_k1"]
    total = database.value("SELECT value FROM counters WHERE name = 'products_active'")
    items = prices.with_product_priors([present.present(row) for row in rows])
    cursor = json.dumps([offset + len(rows), last])
    return jsonify(
        items=items,
        page=page,
        page_size=20,
        total=total,
        total_is_exact=True,
        next_cursor=base64.urlsafe_b64encode(cursor.encode()).decode() if more else None,
    )


@app.get("/auth/me")
def me():
    """/auth/me's work: the administrator's session by the hash of its cookie, as the service
    reads it (the user, the role, its permissions, two-factor), checked as the service checks
    it (expired, past its longest life, user deactivated, another browser)."""
    token = request.cookies.get("shop_admin_session", "")
    row = database.one(
        sessions._RESOLVE["admin"],  # noqa: SLF001 - the service's own statement, not a copy
        {"token_hash": hashlib.sha256(token.encode()).hexdigest()},
    )
    moment = datetime.now(UTC)
    if (
        row is None
        or parse(row["expires_at"]) <= moment
        or parse(row["created_at"]) + _MAX_LIFETIME <= moment
        or not row["active"]
        or row["user_agent"] != request.headers.get("User-Agent", "")[:512]
    ):
        return {"message": "Sign in."}, 401
    permissions = f"{row['role_permissions'] or ''} {row['extra_permissions'] or ''}".split()
    return jsonify(
        id=row["id"],
        email=row["email"],
        name=row["name"],
        kind="admin",
        role=row["role"],
        permissions=sorted(set(permissions)),
    )


_MAX_LIFETIME = timedelta(days=30)
_customer = []


@app.post("/checkout")
def checkout():
    """Checkout's write, bare: in one transaction the stock of two lines, an order, its two
    lines and its payment (the body's first product twice when it names one)."""
    body = request.get_json()
    ids = [item["product_id"] for item in body["items"]]
    lines = (ids * 2)[:2]
    moment = _now()
    order_id = secrets.token_hex(12)
    with database.transaction():
        if not _customer:
            _customer.append(database.value("SELECT id FROM customers ORDER BY id LIMIT 1"))
        products = []
        for pid in lines:
            taken = database.one(
                "UPDATE products SET stock = stock - 1 WHERE id = :id AND stock >= 1"
                " RETURNING name, sku, price_cents",
                {"id": pid},
            )
            if taken is None:
                raise LookupError(f"product {pid} is out of stock")
            products.append(taken)
        total = sum(p["price_cents"] for p in products)
        database.execute(
            "INSERT INTO orders (id, number, customer_id, status, subtotal_cents, total_cents,"
            " currency, created_at, updated_at) VALUES (:id, :number, :customer, 'pending',"
            " :total, :total, 'GBP', :now, :now)",
            {"id": order_id, "number": f"B-{order_id}", "customer": _customer[0],
             "total": total, "now": moment},
        )  # fmt: skip
        database.execute_many(
            "INSERT INTO order_items (order_id, line, product_id, name, sku, unit_price_cents,"
            " quantity, line_total_cents) VALUES (:order, :line, :product, :name, :sku, :price,"
            " 1, :price)",
            [
                {"order": order_id, "line": n + 1, "product": pid, "name": p["name"],
                 "sku": p["sku"], "price": p["price_cents"]}
                for n, (pid, p) in enumerate(zip(lines, products, strict=True))
            ],
        )  # fmt: skip
        database.execute(
            "INSERT INTO payments (id, order_id, provider, amount_cents, status, reference,"
            " created_at, updated_at) VALUES (:id, :order, 'manual', :total, 'pending', :ref,"
            " :now, :now)",
            {"id": secrets.token_hex(12), "order": order_id, "total": total,
             "ref": f"B-{order_id}", "now": moment},
        )  # fmt: skip
    return {"id": order_id, "total_cents": total}, 201


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
