"""Shipping methods: their rows and the reads of them (one, the active ones).

What a method charges for a basket is pricing's (``pricing/rules.py``); the checkout and the
quote read the active methods with the shop's other pricing data (``pricing/baskets.py``).
"""

import json

from shop import db

COLUMNS = (
    "id, name, countries, price_cents, free_over_cents, weight_bands, tax_class, active,"
    " position, created_at, updated_at"
)


def from_row(row: dict) -> dict:
    """A shipping method as the API shows it, from its row."""
    return {
        **row,
        "countries": json.loads(row["countries"]),
        "weight_bands": json.loads(row["weight_bands"]),
        "active": bool(row["active"]),
    }


def load(method_id: str) -> dict | None:
    """One shipping method, active or not."""
    row = db.one(f"SELECT {COLUMNS} FROM shipping_methods WHERE id = :id", {"id": method_id})
    return from_row(row) if row else None


def active() -> list[dict]:
    """The active shipping methods, by position."""
    rows = db.query(
        f"SELECT {COLUMNS} FROM shipping_methods WHERE active = 1 ORDER BY position, name, id"
    )
    return [from_row(row) for row in rows]
