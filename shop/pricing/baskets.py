"""A basket priced from the database: what ``pricing.price`` needs, loaded once for the quote,
``GET /shipping-methods/available`` and the checkout (which calls ``price_basket`` inside its
transaction, after taking the stock, so the order is priced from the rows it holds).

Discount codes are checked here (``find_discount``): a code that cannot be used is a 400
whose message starts ``discount_code: <reason>:`` with a reason a storefront can map
(``unknown``, ``not_started``, ``expired``, ``usage_limit_reached``, ``already_used``,
``min_subtotal``, ``not_applicable``); it is never skipped silently. A code is ASCII only
and compared in one form (``code_key``), at creation, quote, checkout and claim.
"""

import json
import re

from shop import db
from shop.clock import now_iso
from shop.errors import Conflict, Invalid
from shop.pricing.rules import Refusal, price
from shop.site import settings

_METHOD_COLUMNS = (
    "id, name, countries, price_cents, free_over_cents, weight_bands, tax_class, active,"
    " position, created_at, updated_at"
)
_DISCOUNT_COLUMNS = (
    "id, code, kind, value, min_subtotal_cents, starts_at, ends_at, usage_limit,"
    " once_per_customer, product_ids, category_ids, active, times_used, created_at, updated_at"
)


def method_from_row(row: dict) -> dict:
    """A shipping method as the API shows it, from its row."""
    return {
        **row,
        "countries": json.loads(row["countries"]),
        "weight_bands": json.loads(row["weight_bands"]),
        "active": bool(row["active"]),
    }


def discount_from_row(row: dict) -> dict:
    """A discount as the API shows it, from its row."""
    return {
        **row,
        "once_per_customer": bool(row["once_per_customer"]),
        "product_ids": json.loads(row["product_ids"]),
        "category_ids": json.loads(row["category_ids"]),
        "active": bool(row["active"]),
    }


def load_method(method_id: str) -> dict | None:
    """One shipping method, active or not."""
    row = db.one(
        f"SELECT {_METHOD_COLUMNS} FROM shipping_methods WHERE id = :id", {"id": method_id}
    )
    return method_from_row(row) if row else None


def active_methods() -> list[dict]:
    """The active shipping methods, by position."""
    rows = db.query(
        f"SELECT {_METHOD_COLUMNS} FROM shipping_methods WHERE active = 1"
        " ORDER BY position, name, id"
    )
    return [method_from_row(row) for row in rows]


def load_discount(discount_id: str) -> dict | None:
    """One discount by id."""
    row = db.one(f"SELECT {_DISCOUNT_COLUMNS} FROM discounts WHERE id = :id", {"id": discount_id})
    return discount_from_row(row) if row else None


# A discount code: 1 to 64 ASCII letters, digits, '-' and '_'. ASCII only, so that no other
# string is read as a code: casefold() and Unicode lower-casing fold look-alikes onto letters
# ("ſ" onto "s", the Kelvin sign onto "k"), and "ſKATE" would apply SKATE.
CODE_PATTERN = "^[A-Za-z0-9_-]{1,64}$"  # as OpenAPI shows it; matched whole (no final newline)
CODE_RULE = "1 to 64 letters, digits, '-' or '_' (ASCII only)"
_CODE = re.compile(CODE_PATTERN[1:-1])


def is_code(text: str) -> bool:
    """Whether ``text``, exactly as given, is a discount code a shop may create."""
    return _CODE.fullmatch(text) is not None


def code_key(code: str) -> str | None:
    """The one form a code is unique and looked up in: the code without surrounding white
    space, its ASCII letters in lower case ("SAVE10" and " save10" are one code); None for
    a string that is no code (``is_code``), which then matches none."""
    code = code.strip()
    return code.lower() if is_code(code) else None


def _refuse(reason: str, message: str):
    raise Invalid(f"discount_code: {reason}: {message}")


def find_discount(code: str, customer_id: str | None) -> dict:
    """The usable discount of ``code`` now, or a 400 naming why not.

    ``already_used`` needs a customer; a guest's quote cannot know and the checkout (always
    signed in) decides.
    """
    key = code_key(code)
    if key is None:
        _refuse("unknown", f"there is no code {code.strip()!r}: a code is {CODE_RULE}.")
    row = db.one(f"SELECT {_DISCOUNT_COLUMNS} FROM discounts WHERE code_key = :key", {"key": key})
    if row is None or not row["active"]:
        _refuse("unknown", f"there is no code {code.strip()!r}.")
    discount = discount_from_row(row)
    moment = now_iso()
    if discount["starts_at"] and moment < discount["starts_at"]:
        _refuse("not_started", f"{discount['code']} starts at {discount['starts_at']}.")
    if discount["ends_at"] and moment >= discount["ends_at"]:
        _refuse("expired", f"{discount['code']} ended at {discount['ends_at']}.")
    limit = discount["usage_limit"]
    if limit is not None and discount["times_used"] >= limit:
        _refuse("usage_limit_reached", f"{discount['code']} has been used up.")
    if discount["once_per_customer"] and customer_id is not None and used_by(discount, customer_id):
        _refuse("already_used", f"you have already used {discount['code']}.")
    return discount


def used_by(discount: dict, customer_id: str, other_than: str = "") -> bool:
    """Whether a customer holds a use of ``discount``: an order with it (``other_than`` this
    one), not cancelled (a cancelled order gave its use back)."""
    return bool(
        db.value(
            "SELECT 1 FROM orders WHERE discount_id = :id AND customer_id = :customer_id"
            " AND status <> 'cancelled' AND id <> :other_than",
            {"id": discount["id"], "customer_id": customer_id, "other_than": other_than},
        )
    )


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
        lines.append(
            {
                **{k: row[k] for k in ("product_id", "variant_id", "name", "sku", "tax_class")},
                "options": json.loads(row["options"]),
                "category_id": row["category_id"],
                "unit_price_cents": row["price_cents"],
                "quantity": item["quantity"],
                "weight_grams": row["weight_grams"] or 0,
            }
        )
    return lines


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
    the caller has read it) and ``discount`` (``find_discount``'s); answer the
    breakdown. Every refusal is a 400 naming its field."""
    data = data or shop_data(method_id)
    shop, tax_rates, methods = data["shop"], data["rates"], data["methods"]
    method = None
    if method_id is not None:
        if not methods:
            raise Invalid(f"shipping_method_id: unknown: there is no active method {method_id}.")
        method = methods[0]
    elif require_method and methods:
        names = ", ".join(f"{m['id']} ({m['name']})" for m in methods)
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
        raise Invalid(str(refusal)) from None
    for given, priced in zip(lines, result["lines"], strict=True):
        for key in ("product_id", "variant_id", "name", "sku", "options"):
            priced[key] = given.get(key)
    result["shipping_method"] = {"id": method["id"], "name": method["name"]} if method else None
    result["discount_code"] = discount["code"] if discount else None
    return result


# The checkout's claim of a code: the use counted in the same statement that reads it, only
# while the code is active, started, not ended and under its limit.
_CLAIM = f"""
    UPDATE discounts SET times_used = times_used + 1
    WHERE code_key = :key AND active = 1
      AND (starts_at IS NULL OR starts_at <= :now) AND (ends_at IS NULL OR ends_at > :now)
      AND (usage_limit IS NULL OR times_used < usage_limit)
    RETURNING {_DISCOUNT_COLUMNS}"""


def claim(code: str, discount: dict, customer_id: str, order_id: str) -> None:
    """Take one use of ``code`` for the order ``order_id``, which the checkout priced with
    ``discount`` (``find_discount``'s, read before its transaction); a 400 naming why the
    code can no longer be used, a 409 when its terms changed since.

    The checkout's last statement: the guarded ``UPDATE`` holds the usage limit under
    concurrency by a row lock on PostgreSQL that every checkout with the code waits for, so
    it is held only until the commit (the one writer on SQLite). The once-per-customer check
    runs after it: behind that lock it sees any other order with the code that another
    checkout of the customer committed. The order stores ``discount_id``.
    """
    row = db.one(_CLAIM, {"key": code_key(code), "now": now_iso()})
    if row is None:
        find_discount(code, None)  # says why
        _refuse("usage_limit_reached", f"{code.strip()} has been used up.")  # a race just now
    now = discount_from_row(row)
    if _terms(now) != _terms(discount):
        raise Conflict(
            f"discount_code: {discount['code']} changed during checkout; check out again."
        )
    if now["once_per_customer"] and used_by(now, customer_id, other_than=order_id):
        _refuse("already_used", f"you have already used {now['code']}.")


# What an order priced with a discount relied on (pricing/rules.py, the order's columns).
# Its limits (active, dates, usage limit, once per customer) are not among them: the claim
# applies them as they are when it takes the use, so a limit changed meanwhile is no 409.
_TERMS = ("id", "code", "kind", "value", "min_subtotal_cents", "product_ids", "category_ids")


def _terms(discount: dict) -> dict:
    """The terms an order priced with ``discount`` relied on (``_TERMS``)."""
    return {key: discount[key] for key in _TERMS}


def give_back_use(order_id: str) -> None:
    """A cancelled order's code use back to its discount (cancelled is final: once)."""
    db.execute(
        "UPDATE discounts SET times_used = times_used - 1 WHERE times_used > 0"
        " AND id = (SELECT discount_id FROM orders WHERE id = :id)",
        {"id": order_id},
    )
