"""Shipping method writes for every caller (the API, the console): create, change and
delete a method, each in its own transaction with its audit entry.

Each takes the fields as the API reads them (``countries`` codes, ``weight_bands`` a list of
``{"up_to_grams", "price_cents"}``) and the ``actor`` who acts; ``NotFound`` for a method
that does not exist. Bands are stored by weight; countries once each, sorted.
"""

import json

from shop import audit, db
from shop.actor import Actor
from shop.clock import now_iso
from shop.errors import NotFound
from shop.shipping import methods


def get(method_id: str) -> dict:
    """One shipping method as the API shows it, or ``NotFound``."""
    method = methods.load(method_id)
    if method is None:
        raise NotFound("Shipping method not found.")
    return method


def _values(data: dict) -> dict:
    return {
        "name": data["name"],
        "countries": json.dumps(sorted(set(data.get("countries") or []))),
        "price_cents": data["price_cents"],
        "free_over_cents": data.get("free_over_cents"),
        "weight_bands": json.dumps(
            sorted(data.get("weight_bands") or [], key=lambda band: band["up_to_grams"])
        ),
        "tax_class": data.get("tax_class", "standard"),
        "active": int(data.get("active", True)),
        "position": data.get("position", 0),
    }


def create(data: dict, actor: Actor) -> dict:
    """Create a shipping method from ``data`` (audited as ``actor``'s); answer it."""
    method_id, moment = db.new_id(), now_iso()
    with db.transaction():
        db.execute(
            f"INSERT INTO shipping_methods ({methods.COLUMNS}) VALUES (:id, :name, :countries,"
            " :price_cents, :free_over_cents, :weight_bands, :tax_class, :active,"
            " :position, :now, :now)",
            {**_values(data), "id": method_id, "now": moment},
        )
        audit.record("shipping_method.created", {"shipping_method_id": method_id}, actor=actor)
    return get(method_id)


def update(method_id: str, data: dict, actor: Actor) -> dict:
    """Change the fields given in ``data`` (the others stay), audited as ``actor``'s."""
    with db.transaction():
        merged = {**get(method_id), **data}
        db.execute(
            "UPDATE shipping_methods SET name = :name, countries = :countries,"
            " price_cents = :price_cents, free_over_cents = :free_over_cents,"
            " weight_bands = :weight_bands, tax_class = :tax_class, active = :active,"
            " position = :position, updated_at = :now WHERE id = :id",
            {**_values(merged), "id": method_id, "now": now_iso()},
        )
        audit.record("shipping_method.updated", {"shipping_method_id": method_id}, actor=actor)
    return get(method_id)


def delete(method_id: str, actor: Actor) -> None:
    """Delete a method; orders placed with it keep its name and what they were charged."""
    with db.transaction():
        get(method_id)
        db.execute("DELETE FROM shipping_methods WHERE id = :id", {"id": method_id})
        audit.record("shipping_method.deleted", {"shipping_method_id": method_id}, actor=actor)
