"""The floor the service is measured against: bare Flask, one SELECT, the same data module.

Served by gunicorn with the same ``gunicorn.conf.py`` as the service (``bench.baseline:app``),
on the same database (``DATABASE_URL``). No auth, no schemas, no hooks: whatever the service
costs beyond these routes is the price of its stack. ``/fixed`` answers fixed JSON without
touching the database: the Flask ceiling (issue 29), what Flask and gunicorn alone cost.
"""

import os

from flask import Flask, request

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
