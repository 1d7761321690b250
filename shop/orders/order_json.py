"""An order as the API shows it, built by the database as one JSON text: one correlated
expression per order (``json_object``/``json_group_array`` on SQLite,
``json_build_object``/``json_agg`` on PostgreSQL) in the shape and field order of
``shop/orders/shape.py`` (it refuses to build from any other), so a list copies texts into
its answer and a detail parses one (``load``). Why, and what it saves: docs/performance.md
and issue 29. tests/orders/test_order_json.py checks it against ``OrderSchema``'s dump.

Kept breakdowns (``orders.pricing``) and addresses are JSON texts: their values are read with
``->`` (a JSON value, its type kept, SQL NULL when absent) on both engines and their objects
rebuilt in the schema's field order (checkout stores some with sorted keys). An order placed
before pricing (migration 0010) has no breakdown: no tax, no shipping, as ``_UNPRICED`` in
``orders/lifecycle.py`` says.
"""

import json

from shop import db
from shop.orders import shape

# Each dialect's spelling of the few things that differ.
_SQLITE, _POSTGRES = "sqlite", "postgresql"


def _object(engine: str, pairs: list[tuple[str, str]]) -> str:
    """A JSON object of ``(key, SQL expression)`` pairs, keys in this order."""
    name = "json_object" if engine == _SQLITE else "json_build_object"
    return name + "(" + ", ".join(f"'{key}', {expr}" for key, expr in pairs) + ")"


def _shaped(engine: str, fields: tuple[str, ...], values: dict[str, str]) -> str:
    """A JSON object of one of the order's shapes (``shape``): ``values`` holds each
    field's SQL expression."""
    return _object(engine, shape.ordered(fields, values))


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


def _elements(engine: str, source: str, fields: tuple[str, ...]) -> str:
    """A JSON array rebuilt from the array ``source`` (a stored JSON value): each element an
    object of ``fields``, each read from the stored element's key of that name."""
    element = _shaped(engine, fields, {key: f"e.value -> '{key}'" for key in fields})
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
        _shaped(engine, shape.ITEM, {name: computed.get(name, f"i.{name}") for name in shape.ITEM}),
        "order_items",
        "order_id = o.id",
        "line",
        "i",
    )
    lines = _array(
        engine,
        _shaped(engine, shape.SHIPMENT_LINE, {"line": "l.line", "quantity": "l.quantity"}),
        "shipment_lines",
        "shipment_id = s.id",
        "line",
        "l",
    )
    shipments = _array(
        engine,
        _shaped(
            engine,
            shape.SHIPMENT,
            {
                "id": "s.id",
                "carrier": "s.carrier",
                "tracking_number": "s.tracking_number",
                "tracking_url": "s.tracking_url",
                "lines": lines,
                "created_at": "s.created_at",
            },
        ),
        "shipments",
        "order_id = o.id",
        "created_at, id",
        "s",
    )
    actor = _shaped(
        engine, shape.ACTOR, {"kind": "h.by_kind", "id": "h.by_id", "label": "h.by_label"}
    )
    history = _array(
        engine,
        _shaped(
            engine,
            shape.STATUS_CHANGE,
            {
                "status": "h.status",
                "at": "h.at",
                "by": f"CASE WHEN COALESCE(h.by_kind, '') = '' THEN NULL ELSE {actor} END",
                "note": "h.note",
            },
        ),
        "order_status_history",
        "order_id = o.id",
        "at, id",
        "h",
    )
    method = f"{pricing} -> 'shipping_method'"
    shipping_method = (
        f"CASE WHEN {method} -> 'id' IS NULL THEN NULL ELSE "
        + _shaped(engine, shape.SHIPPING_METHOD, {k: f"{method} -> '{k}'" for k in ("id", "name")})
        + " END"
    )
    shipping_address = (
        "CASE WHEN COALESCE(o.shipping_address, '') = '' THEN NULL ELSE "
        + _shaped(engine, shape.ADDRESS, {key: f"{address} -> '{key}'" for key in shape.ADDRESS})
        + " END"
    )
    payment = (
        "CASE WHEN p.provider IS NULL THEN NULL ELSE "
        + _shaped(
            engine,
            shape.PAYMENT,
            {
                "provider": "p.provider",
                "amount_cents": "p.amount_cents",
                "status": "p.status",
                "reference": "p.reference",
                "client_secret": "NULL",  # only in the answers that start a card payment
            },
        )
        + " END"
    )
    # A guest's order (``orders/guests.py``) has no customer row: its e-mail is its own.
    customer = {
        "id": "o.customer_id",
        "email": "COALESCE(c.email, o.guest_email)",
        "name": "c.name",
    }
    return _shaped(
        engine,
        shape.ORDER,
        {
            "items": items,
            "subtotal_cents": "o.subtotal_cents",
            "discount_cents": "o.discount_cents",
            "shipping_cents": "o.shipping_cents",
            "shipping_tax_cents": (
                f"COALESCE({pricing} -> 'shipping_tax_cents', {_literal(engine, '0')})"
            ),
            "tax_cents": "o.tax_cents",
            "total_cents": "o.total_cents",
            "currency": "o.currency",
            "tax_lines": _elements(engine, f"{pricing} -> 'tax_lines'", shape.TAX_LINE),
            "prices_include_tax": (
                f"COALESCE({pricing} -> 'prices_include_tax', {_literal(engine, 'false')})"
            ),
            "shipping_method": shipping_method,
            "discount_code": f"{pricing} -> 'discount_code'",
            "applied": _elements(engine, f"{pricing} -> 'applied'", shape.APPLIED),
            "shipments": shipments,
            "id": "o.id",
            "number": "o.number",
            # The invoice (issue 40): null until issued.
            # The current one: an edit supersedes it (migration 0034).
            "invoice_number": f"(SELECT n.number {_CURRENT_INVOICE})",
            "invoiced_at": f"(SELECT n.issued_at {_CURRENT_INVOICE})",
            "customer": _shaped(engine, shape.CUSTOMER, customer),
            "status": "o.status",
            "payment_status": "o.payment_status",
            "fulfillment_status": "o.fulfillment_status",
            "shipping_address": shipping_address,
            "payment": payment,
            "balance_due_cents": "o.balance_due_cents",  # order edits (migration 0034)
            "status_history": history,
            "created_at": "o.created_at",
            "updated_at": "o.updated_at",
        },
    )


# The order's current invoice (an edit supersedes it, ``invoices/issuing.py``).
_CURRENT_INVOICE = "FROM invoices n WHERE n.order_id = o.id AND n.superseded_at IS NULL"

# What the order's filters and sort name; the customer and payment are one row each.
FROM = (
    "orders o LEFT JOIN customers c ON c.id = o.customer_id"
    " LEFT JOIN payments p ON p.order_id = o.id"
)
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
