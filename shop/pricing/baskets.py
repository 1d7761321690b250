"""A basket priced from the database: what ``pricing.price`` needs, loaded once for the quote,
``GET /shipping-methods/available`` and the checkout (which calls ``price_basket`` inside its
transaction, after taking the stock, so the order is priced from the rows it holds).

A discount comes priced as the caller read it (``discounts/codes.py``); pricing refuses a
code whose basket misses its terms (``min_subtotal``, ``not_applicable``).
"""

import json

from shop import db
from shop.errors import Invalid
from shop.pricing.rules import Refusal, price
from shop.shipping import methods as shipping_methods
from shop.site import settings


def existing_variants(ids: list[str]) -> set[str]:
    """Which of ``ids`` are variants' ids."""
    if not ids:
        return set()
    marks, params = db.in_list("v", sorted(set(ids)))
    return {
        row["id"]
        for row in db.query(f"SELECT id FROM product_variants WHERE id IN {marks}", params)
    }


def with_variants(items: list[dict]) -> list[dict]:
    """The lines, each with its variant: the one named, or the lone variant of the product
    named (the checkout's and the quote's rule), one statement for all the lines naming a
    product."""
    named = sorted({item["product_id"] for item in items if "variant_id" not in item})
    found = {}
    if named:
        marks, params = db.in_list("p", named)
        for row in db.query(
            f"SELECT product_id, id FROM product_variants WHERE product_id IN {marks}"
            " ORDER BY position, id",
            params,
        ):
            found.setdefault(row["product_id"], []).append(row["id"])
    return [
        item if "variant_id" in item else {**item, "variant_id": _lone(item, found)}
        for item in items
    ]


def _lone(item: dict, found: dict) -> str:
    product_id = item["product_id"]
    ids = found.get(product_id, [])
    if not ids:
        raise Invalid(f"items: product {product_id} does not exist or is not for sale.")
    if len(ids) > 1:
        raise Invalid(
            f"items: product {product_id} has {len(ids)} variants ({', '.join(ids)});"
            " name one with variant_id.",
        )
    return ids[0]


def product_lines(items: list[dict]) -> list[dict]:
    """The pricing lines of basket items (``variant_id`` or ``product_id``, ``quantity``),
    read, not taken: a 400 names an unknown or inactive variant or product."""
    wanted = with_variants(items)
    ids, params = db.in_list("v", sorted({item["variant_id"] for item in wanted}))
    found = {
        row["variant_id"]: row
        for row in db.query(
            "SELECT v.id AS variant_id, v.product_id, v.sku, v.options, v.price_cents,"
            " v.weight_grams, p.name, p.tax_class, p.category_id FROM product_variants v"
            f" JOIN products p ON p.id = v.product_id WHERE v.id IN {ids} AND v.active = 1"
            " AND p.active = 1",
            params,
        )
    }
    lines = []
    for item in wanted:
        row = found.get(item["variant_id"])
        if row is None or item.get("product_id", row["product_id"]) != row["product_id"]:
            named = (
                f"product {item['product_id']}"
                if "product_id" in item
                else f"variant {item['variant_id']}"
            )
            raise Invalid(f"items: {named} does not exist or is not for sale.")
        lines.append(pricing_line(row, item["quantity"]))
    return lines


def pricing_line(row: dict, quantity: int) -> dict:
    """The pricing line of ``quantity`` units of a variant's ``row`` (its ``variant_id``,
    ``product_id``, ``sku``, ``options``, ``price_cents``, ``weight_grams`` and its
    product's ``name``, ``tax_class``, ``category_id``): what ``product_lines`` answers, for
    a caller that read the rows itself (a cart's lines)."""
    return {
        **{k: row[k] for k in ("product_id", "variant_id", "name", "sku", "tax_class")},
        "options": json.loads(row["options"]),
        "category_id": row["category_id"],
        "unit_price_cents": row["price_cents"],
        "quantity": quantity,
        "weight_grams": row["weight_grams"] or 0,
    }


# What pricing reads of the shop, in one statement: the settings, the tax rates and the
# active shipping methods (the one asked for, or all). The checkout reads it on every order,
# and adds its order number to it (``NUMBER``: a scalar SQL expression, in ``price_cents``).
_SHOP = """
    SELECT 'rate' AS kind, NULL AS id, name, country, region, tax_class, rate,
           NULL AS countries, NULL AS weight_bands, NULL AS price_cents, NULL AS free_over_cents
    FROM tax_rates
    UNION ALL
    SELECT 'method', id, name, NULL, NULL, tax_class, NULL, countries, weight_bands,
           price_cents, free_over_cents
    FROM shipping_methods WHERE active = 1 AND (:method_id = '' OR id = :method_id)
    UNION ALL
    SELECT 'setting', key, value, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
    FROM settings"""
_SHOP_AND_NUMBER = {
    engine: _SHOP
    + f"""
    UNION ALL
    SELECT 'number', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, {number}, NULL"""
    for engine, number in {
        # PostgreSQL: the sequence (never rolled back: a failed checkout skips a number).
        "postgresql": "nextval('order_numbers')",
        # SQLite: one writer at a time, so the highest plus one, or after the numbers given
        # before 0017 (the counters row, which nodes of the previous release still bump).
        "sqlite": "MAX(COALESCE((SELECT MAX(seq) FROM orders), 0),"
        " COALESCE((SELECT value FROM counters WHERE name = 'order_number'), 0)) + 1",
    }.items()
}


def shop_data(method_id: str | None, next_number: bool = False) -> dict:
    """The shop's settings (``shop``), every tax rate (``rates``) and the active methods
    (``methods``: only ``method_id`` when given), read in one statement; with
    ``next_number`` (the checkout, inside its transaction) also the next order number's
    integer (``seq``)."""
    sql = _SHOP_AND_NUMBER[db.get_db().engine] if next_number else _SHOP
    rates, methods, stored, seq = [], [], [], None
    for row in db.query(sql, {"method_id": method_id or ""}):
        if row["kind"] == "rate":
            rates.append({k: row[k] for k in ("name", "country", "tax_class", "rate")})
            rates[-1]["region"] = row["region"] or None
        elif row["kind"] == "method":
            methods.append(
                {
                    **{k: row[k] for k in ("id", "name", "tax_class", "price_cents")},
                    "free_over_cents": row["free_over_cents"],
                    "countries": json.loads(row["countries"]),
                    "weight_bands": json.loads(row["weight_bands"]),
                }
            )
        elif row["kind"] == "setting":
            stored.append({"key": row["id"], "value": row["name"]})
        else:
            seq = int(row["price_cents"])
    return {"shop": settings.from_rows(stored), "rates": rates, "methods": methods, "seq": seq}


def _serving(methods: list[dict], country: str) -> list[dict]:
    """The methods of ``methods`` that ship to ``country`` (no countries: everywhere); a 400
    saying so when none does, rather than asking the buyer to choose one that does not."""
    serving = [m for m in methods if not m["countries"] or country in m["countries"]]
    if not serving:
        raise Invalid(f"shipping_address.country: no shipping method ships to {country}.")
    return serving


def price_order(
    lines: list[dict], address: dict, method_id: str | None, discount: dict | None
) -> tuple[dict, dict, int]:
    """The checkout's pricing, inside its transaction: the breakdown of ``lines`` (a shipping
    method required when the shop has any), the shop's settings and the order number's
    integer, from one read of the shop's data (``shop_data``)."""
    data = shop_data(method_id, next_number=True)
    priced = price_basket(lines, address, method_id, discount, require_method=True, data=data)
    return priced, data["shop"], data["seq"]


def price_basket(
    lines: list[dict],
    address: dict,
    method_id: str | None,
    discount: dict | None,
    *,
    require_method: bool,
    data: dict | None = None,
) -> dict:
    """Price ``lines`` for ``address`` with the shop's data (``data``: ``shop_data``'s, when
    the caller has read it) and ``discount`` (``discounts.codes``' read of it); answer the
    breakdown. Every refusal is a 400 naming its field."""
    data = data or shop_data(method_id)
    shop, tax_rates, methods = data["shop"], data["rates"], data["methods"]
    method = None
    if method_id is not None:
        if not methods:
            raise Invalid(f"shipping_method_id: unknown: there is no active method {method_id}.")
        method = methods[0]
    elif require_method and methods:
        serving = _serving(methods, address["country"])
        names = ", ".join(f"{m['id']} ({m['name']})" for m in serving)
        raise Invalid(f"shipping_method_id: required: choose one of {names}.")
    try:
        result = price(
            lines,
            country=address["country"],
            region=address.get("region"),
            shipping=method,
            discount=discount,
            rates=tax_rates,
            prices_include_tax=bool(shop["prices_include_tax"]),
            currency=shop["currency"],
        )
    except Refusal as refusal:
        if refusal.reason == "not_served" and len(data["methods"]) == 1:  # the one asked for
            _serving(shipping_methods.active(), address["country"])
        raise Invalid(str(refusal)) from None
    for given, priced in zip(lines, result["lines"], strict=True):
        for key in ("product_id", "variant_id", "name", "sku", "options"):
            priced[key] = given.get(key)
    result["shipping_method"] = {"id": method["id"], "name": method["name"]} if method else None
    result["discount_code"] = discount["code"] if discount else None
    return result
