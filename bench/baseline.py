"""The floor the service is measured against: bare Flask, one SELECT, the same data module.

Served by gunicorn with the same ``gunicorn.conf.py`` as the service (``bench.baseline:app``),
on the same database (``DATABASE_URL``). No auth, no schemas, no hooks: whatever the service
costs beyond these routes is the price of its stack. ``/ceiling`` answers fixed JSON without
touching the database: the most a Flask view can do under these gunicorn settings.
"""

import os

from flask import Flask, request

from shop.db import Database

_COLUMNS = (
    "id, name, slug, description, sku, price_cents, stock, active, category_id, created_at,"
    " updated_at"
)

app = Flask(__name__)
database = Database(os.environ["DATABASE_URL"])


_FIXED = {"id": "0" * 24, "name": "Ceiling", "price_cents": 1000, "active": True}


@app.get("/ceiling")
def ceiling():
    """Fixed JSON: Flask's and gunicorn's own cost per request, and nothing else."""
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
