"""How a cart reads: its details, its lines with their availability, and its totals from the
quote's own function (``checkout.quoting.quote``), so a cart's totals always equal
``POST /payments/quote`` for the same basket, address, method and code.

Availability of a line: ``in_stock``; ``only_n_left`` (``available_quantity``: fewer than
the line asks for); ``unavailable`` (out of stock, or no longer for sale). Lines no longer
for sale are left out of the subtotal and totals. Until the cart has a shipping address,
``totals`` is null (tax and shipping depend on it); a basket the quote refuses (a code
whose minimum the cart no longer reaches, a method that does not ship there) has null
``totals`` and the refusal in ``problems``, which completing would answer as a 400.
"""

import json

from shop import db
from shop.carts import store
from shop.checkout import quoting
from shop.errors import Invalid
from shop.pricing import baskets
from shop.site import settings


def availability(line: dict) -> dict:
    """A line's availability: ``{"status", "available_quantity"}`` (the number only when
    fewer units are left than the line asks for)."""
    if not line["active"] or line["stock"] <= 0:
        return {"status": "unavailable", "available_quantity": 0}
    if line["stock"] < line["quantity"]:
        return {"status": "only_n_left", "available_quantity": line["stock"]}
    return {"status": "in_stock", "available_quantity": None}


def basket(rows: list[dict], products: bool = False) -> list[dict]:
    """The lines a cart would order (those for sale), as the quote and checkout take them;
    with ``products``, each with its product's id too (``of_product``: the checkout's lock
    order needs it, ``placing._with_products``, and need not read it again)."""
    return [
        {"variant_id": r["variant_id"], "quantity": r["quantity"]}
        | ({"of_product": r["product_id"]} if products else {})
        for r in rows
        if r["active"]
    ]


def priced(row: dict, rows: list[dict], caller=None) -> dict:
    """The quote of the cart ``row`` with its ``rows`` (``store.lines``), for ``caller`` (a
    customer's Caller: their once-per-customer codes; None for a guest)."""
    address = json.loads(row["shipping_address"]) if row["shipping_address"] else None
    items = basket(rows)
    if not items or address is None:
        return {"totals": None, "problems": []}
    try:
        totals = _quote(row, rows, items, address, caller)
    except Invalid as refusal:
        return {"totals": None, "problems": [str(refusal)]}
    return {"totals": totals, "problems": []}


def _quote(row: dict, rows: list[dict], items: list[dict], address: dict, caller) -> dict:
    """The quote of the cart ``row``'s ``items`` (``basket(rows)``) to ``address``, priced
    from the variants its ``rows`` already read (not read again)."""
    lines = [baskets.pricing_line(r, r["quantity"]) for r in rows if r["active"]]
    return quoting.quote(
        items, address, row["shipping_method_id"], row["discount_code"], caller, lines=lines
    )


def currency(row: dict) -> str:
    """The shop's currency: read with the cart (``store.find``'s ``shop_currency``), or now."""
    if "shop_currency" in row:
        return settings.currency_of(row["shop_currency"])
    return settings.current()["currency"]


def check(caller=None):
    """A check for ``store.update``: the cart priced as it now stands, its refusal raised
    (a 400 naming the field)."""

    def priced_or_refused(cart_id: str) -> None:
        row = db.one("SELECT * FROM carts WHERE id = :id", {"id": cart_id})
        address = json.loads(row["shipping_address"]) if row["shipping_address"] else None
        rows = store.lines(cart_id)
        items = basket(rows)
        if items and address is not None:
            _quote(row, rows, items, address, caller)

    return priced_or_refused


def present(row: dict, caller=None, with_id: bool = True, rows: list[dict] | None = None) -> dict:
    """The cart as the API shows it (``CartSchema``); without ``with_id`` (an event's
    payload), its id, the guest's capability, is null. ``rows``: its ``store.lines``, when
    the caller has read them (``store.find_with_lines``)."""
    rows = store.lines(row["id"]) if rows is None else rows
    lines = [
        {
            "id": r["id"],
            "product_id": r["product_id"],
            "variant_id": r["variant_id"],
            "name": r["name"],
            "sku": r["sku"],
            "options": json.loads(r["options"] or "{}"),
            "unit_price_cents": r["price_cents"],
            "quantity": r["quantity"],
            "line_total_cents": r["price_cents"] * r["quantity"],
            "availability": availability(r),
        }
        for r in rows
    ]
    open_ = row["status"] == "open"
    pricing = priced(row, rows, caller) if open_ else {"totals": None, "problems": []}
    if open_ and row["shipping_address"] is None and basket(rows):
        pricing["problems"].append(
            "shipping_address: needed to price shipping and tax (totals are null until then)."
        )
    return {
        "id": row["id"] if with_id else None,
        "status": row["status"],
        "customer_id": row["customer_id"],
        "email": row["email"],
        "shipping_address": (
            {"line2": None, "region": None, **json.loads(row["shipping_address"])}
            if row["shipping_address"]
            else None
        ),
        "shipping_method_id": row["shipping_method_id"],
        "discount_code": row["discount_code"],
        "note": row["note"],
        "reminders": bool(row["reminders"]),
        "lines": lines,
        "item_count": sum(line["quantity"] for line in lines),
        "subtotal_cents": sum(r["price_cents"] * r["quantity"] for r in rows if r["active"]),
        "currency": currency(row),
        **pricing,
        "order_id": row["order_id"],
        "created_at": row["created_at"],
        "updated_at": row["updated_at"],
    }
