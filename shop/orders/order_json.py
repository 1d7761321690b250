"""An order as the API shows it, built by the database as one JSON text (issue 29).

``GET /orders`` showed 20 whole orders a page: their lines, status histories, payments,
pricing breakdowns and shipments. Read as rows, that was five statements, a dict per line and
per history entry, a ``json.loads`` per address and breakdown, a compiled dump over ~1,500
fields and a ``json.dumps`` of the page: ~2.3 ms of worker CPU on SQLite, ~8 ms on PostgreSQL.
Here one correlated expression per order (``json_object``/``json_group_array`` on SQLite,
``json_build_object``/``json_agg`` on PostgreSQL, both in C) writes the order's JSON in
``OrderSchema``'s shape and field order, so the list copies 20 texts into its answer and the
detail parses one (``load``). ``tests/test_order_json.py`` checks that every field, its
type and its order is what marshmallow's dump of ``OrderSchema`` gives, for orders with
every part (lines with options, a priced breakdown, shipments, histories with actors, an
erased customer, no payment), and checkout's answer (``orders.present_new``, from what it
wrote) is checked equal to ``GET /orders/{id}``.

Kept breakdowns (``orders.pricing``) and addresses are JSON texts: their values are read with
``->`` (a JSON value, its type kept, SQL NULL when absent) on both engines and their objects
rebuilt in the schema's field order (checkout stores some with sorted keys). An order placed
before pricing (migration 0010) has no breakdown: no tax, no shipping, as ``_UNPRICED`` in
``orders/lifecycle.py`` says.
"""

import json

from shop import db

# Each dialect's spelling of the few things that differ.
_SQLITE, _POSTGRES = "sqlite", "postgresql"


def _object(engine: str, pairs: list[tuple[str, str]]) -> str:
    """A JSON object of ``(key, SQL expression)`` pairs, keys in this order."""
    name = "json_object" if engine == _SQLITE else "json_build_object"
    return name + "(" + ", ".join(f"'{key}', {expr}" for key, expr in pairs) + ")"


def _array(engine: str, element: str, table: str, where: str, order: str, alias: str) -> str:
    """A JSON array (``[]`` when empty) of ``element`` (an expression over ``alias``) for
    each row of ``table`` matching ``where``, in ``order`` (columns of ``alias``)."""
    if engine == _SQLITE:  # an aggregate follows its ordered subquery's rows (not flattened)
        return (
            f"(SELECT json_group_array({element})"
            f" FROM (SELECT * FROM {table} WHERE {where} ORDER BY {order}) {alias})"
        )
    return (
        f"(SELECT COALESCE(json_agg({element} ORDER BY {order}), '[]')"
        f" FROM {table} {alias} WHERE {where})"
    )


def _elements(engine: str, source: str, element_pairs: list[tuple[str, str]]) -> str:
    """A JSON array rebuilt from the array ``source`` (a stored JSON value): each element an
    object of ``(key, key in the stored element)`` pairs in this order."""
    element = _object(engine, [(key, f"e.value -> '{stored}'") for key, stored in element_pairs])
    if engine == _SQLITE:  # json_each walks an array in its order
        return f"(SELECT json_group_array({element}) FROM json_each({source}) e)"
    return (
        f"(SELECT COALESCE(json_agg({element} ORDER BY e.n), '[]')"
        f" FROM json_array_elements({source}) WITH ORDINALITY AS e(value, n))"
    )


def _stored(engine: str, column: str) -> str:
    """A stored JSON text column, as a JSON value ``->`` reads."""
    return column if engine == _SQLITE else f"{column}::json"


def _literal(engine: str, text: str) -> str:
    """A JSON literal (``false``, ``0``, ``{}``)."""
    return f"json('{text}')" if engine == _SQLITE else f"'{text}'::json"


def _stored_or(engine: str, column: str, empty: str) -> str:
    """A stored JSON text column, ``empty`` (a JSON literal) when it is NULL or ''."""
    value = f"json({column})" if engine == _SQLITE else f"{column}::json"
    return f"CASE WHEN COALESCE({column}, '') = '' THEN {_literal(engine, empty)} ELSE {value} END"


_CUSTOMER = (("id", "o.customer_id"), ("email", "c.email"), ("name", "c.name"))


# An order line's fields as an order shows them, in the schema's order: each the
# ``order_items`` column of its name but the two ``_order`` computes. ``orders.present_new``
# shows the same fields of the lines a checkout just wrote: one list, two presentations.
ITEM_FIELDS = (
    "product_id",
    "variant_id",
    "name",
    "sku",
    "options",
    "unit_price_cents",
    "quantity",
    "line_total_cents",
    "discount_cents",
    "tax_cents",
    "tax_rate",
    "total_cents",
    "line",
)


def _order(engine: str) -> str:
    """The order ``o`` (with its customer ``c`` and payment ``p``) as a JSON object."""
    pricing = _stored(engine, "o.pricing")
    address = _stored(engine, "o.shipping_address")
    computed = {
        "options": _stored_or(engine, "i.options", "{}"),
        "total_cents": "COALESCE(i.total_cents, i.line_total_cents)",  # lines before 0010
    }
    items = _array(
        engine,
        _object(engine, [(name, computed.get(name, f"i.{name}")) for name in ITEM_FIELDS]),
        "order_items",
        "order_id = o.id",
        "line",
        "i",
    )
    lines = _array(
        engine,
        _object(engine, [("line", "l.line"), ("quantity", "l.quantity")]),
        "shipment_lines",
        "shipment_id = s.id",
        "line",
        "l",
    )
    shipments = _array(
        engine,
        _object(
            engine,
            [
                ("id", "s.id"),
                ("carrier", "s.carrier"),
                ("tracking_number", "s.tracking_number"),
                ("tracking_url", "s.tracking_url"),
                ("lines", lines),
                ("created_at", "s.created_at"),
            ],
        ),
        "shipments",
        "order_id = o.id",
        "created_at, id",
        "s",
    )
    actor = _object(engine, [("kind", "h.by_kind"), ("id", "h.by_id"), ("label", "h.by_label")])
    history = _array(
        engine,
        _object(
            engine,
            [
                ("status", "h.status"),
                ("at", "h.at"),
                ("by", f"CASE WHEN COALESCE(h.by_kind, '') = '' THEN NULL ELSE {actor} END"),
                ("note", "h.note"),
            ],
        ),
        "order_status_history",
        "order_id = o.id",
        "at, id",
        "h",
    )
    method = f"{pricing} -> 'shipping_method'"
    shipping_method = (
        f"CASE WHEN {method} -> 'id' IS NULL THEN NULL ELSE "
        + _object(engine, [("id", f"{method} -> 'id'"), ("name", f"{method} -> 'name'")])
        + " END"
    )
    address_fields = ("name", "line1", "line2", "city", "postal_code", "country", "region")
    shipping_address = (
        "CASE WHEN COALESCE(o.shipping_address, '') = '' THEN NULL ELSE "
        + _object(engine, [(key, f"{address} -> '{key}'") for key in address_fields])
        + " END"
    )
    payment = (
        "CASE WHEN p.provider IS NULL THEN NULL ELSE "
        + _object(
            engine,
            [
                ("provider", "p.provider"),
                ("amount_cents", "p.amount_cents"),
                ("status", "p.status"),
                ("reference", "p.reference"),
                ("client_secret", "NULL"),  # only in the answers that start a card payment
            ],
        )
        + " END"
    )
    return _object(
        engine,
        [
            ("items", items),
            ("subtotal_cents", "o.subtotal_cents"),
            ("discount_cents", "o.discount_cents"),
            ("shipping_cents", "o.shipping_cents"),
            (
                "shipping_tax_cents",
                f"COALESCE({pricing} -> 'shipping_tax_cents', {_literal(engine, '0')})",
            ),
            ("tax_cents", "o.tax_cents"),
            ("total_cents", "o.total_cents"),
            ("currency", "o.currency"),
            (
                "tax_lines",
                _elements(
                    engine,
                    f"{pricing} -> 'tax_lines'",
                    [("name", "name"), ("rate", "rate"), ("amount_cents", "amount_cents")],
                ),
            ),
            (
                "prices_include_tax",
                f"COALESCE({pricing} -> 'prices_include_tax', {_literal(engine, 'false')})",
            ),
            ("shipping_method", shipping_method),
            ("discount_code", f"{pricing} -> 'discount_code'"),
            (
                "applied",
                _elements(
                    engine, f"{pricing} -> 'applied'", [("rule", "rule"), ("detail", "detail")]
                ),
            ),
            ("shipments", shipments),
            ("id", "o.id"),
            ("number", "o.number"),
            ("customer", _object(engine, list(_CUSTOMER))),
            ("status", "o.status"),
            ("shipping_address", shipping_address),
            ("payment", payment),
            ("status_history", history),
            ("created_at", "o.created_at"),
            ("updated_at", "o.updated_at"),
        ],
    )


# What the order's filters and sort name; the customer and payment are one row each.
FROM = "orders o JOIN customers c ON c.id = o.customer_id LEFT JOIN payments p ON p.order_id = o.id"
# ``SELECT`` of each engine: one column, ``body``, the order's JSON text.
SELECT = {
    _SQLITE: f"SELECT {_order(_SQLITE)} AS body FROM {FROM}",
    _POSTGRES: f"SELECT {_order(_POSTGRES)}::text AS body FROM {FROM}",
}


def select() -> str:
    """``SELECT`` of the current database's engine."""
    return SELECT[db.get_db().engine]


def body(order_id: str, customer_id: str | None = None) -> str | None:
    """One order's JSON text; with ``customer_id``, only if it is that customer's."""
    if customer_id is None:
        return db.value(select() + " WHERE o.id = :id", {"id": order_id})
    return db.value(
        select() + " WHERE o.id = :id AND o.customer_id = :customer_id",
        {"id": order_id, "customer_id": customer_id},
    )


def load(order_id: str, customer_id: str | None = None) -> dict | None:
    """One whole order as a dict (the API's, the events' and the mails' order)."""
    text = body(order_id, customer_id)
    return None if text is None else json.loads(text)
