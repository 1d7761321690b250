"""Orders and their lifecycle (spec 3.3, 4.4).

A customer sees only their own orders (anybody else's is a 404); ``orders.read`` (or the
``read:order`` scope) sees all. Statuses move along ``NEXT`` only; any other move is a 409
naming the allowed next statuses. Cancelling or refunding puts the stock back exactly once
(``restocked_at``). Every change lands in the order's status history and the audit log, in
the transaction that makes it.
"""

import json

from flask import g
from flask.views import MethodView
from marshmallow import Schema, ValidationError, fields, post_load, validate

from shop import audit, db, mail, totals, webhooks
from shop.api.audit_log import ActorSchema
from shop.api.common import (
    WRITE_ONLY,
    Blueprint,
    PageQuerySchema,
    page_schema,
    paginate,
    readable,
)
from shop.auth.caller import require
from shop.auth.decorators import require_auth, require_permission
from shop.clock import iso, now_iso
from shop.countries import CODES
from shop.errors import abort
from shop.openapi import DateOrDateTime, enum_field, responds
from shop.services import payments
from shop.services.orders import record_history

blp = Blueprint("orders", __name__, url_prefix="/orders", description="Orders and their status.")

# The lifecycle: each status and the statuses it may move to. Empty means final.
NEXT = {
    "pending": ("paid", "cancelled"),
    "paid": ("shipped", "refunded"),
    "shipped": ("delivered",),
    "delivered": ("refunded",),
    "cancelled": (),
    "refunded": (),
}
STATUSES = tuple(NEXT)
RESTOCKING = frozenset({"cancelled", "refunded"})

_SELECT = """
    SELECT o.id, o.number, o.customer_id, o.status, o.subtotal_cents, o.total_cents,
           o.currency, o.shipping_address, o.created_at, o.updated_at,
           c.email AS customer_email, c.name AS customer_name,
           p.provider AS payment_provider, p.amount_cents AS payment_amount_cents,
           p.status AS payment_status, p.reference AS payment_reference
    FROM orders o
    JOIN customers c ON c.id = o.customer_id
    LEFT JOIN payments p ON p.order_id = o.id"""


def _not_blank(value: str) -> None:
    if not value.strip():
        raise ValidationError("Must not be blank.")


def text(maximum: int, **kwargs) -> fields.String:
    """A string field of 1 to ``maximum`` characters, not only spaces."""
    return fields.String(validate=[validate.Length(min=1, max=maximum), _not_blank], **kwargs)


class ShippingAddressSchema(Schema):
    name = text(200, required=True)
    line1 = text(200, required=True)
    line2 = fields.String(allow_none=True, load_default=None, validate=validate.Length(max=200))
    city = text(100, required=True)
    postal_code = text(20, required=True)
    country = enum_field(
        "CountryCode",
        sorted(CODES),
        validate_input=False,
        required=True,
        validate=validate.OneOf(
            sorted(CODES), error="Use an ISO 3166-1 alpha-2 code in capitals, such as DE or FR."
        ),
        metadata={"description": "ISO 3166-1 alpha-2 code, such as DE."},
    )

    @post_load
    def _tidy(self, data, **_kwargs):
        tidy = {k: v.strip() if isinstance(v, str) else v for k, v in data.items()}
        tidy["line2"] = tidy.get("line2") or None
        return tidy


class OrderAddressSchema(ShippingAddressSchema):
    """A shipping address as an order keeps it."""

    line2 = fields.String(required=True, allow_none=True)


class OrderCustomerSchema(Schema):
    id = fields.String(required=True)
    email = fields.String(
        required=True, allow_none=True, metadata={"description": "null once erased."}
    )
    name = fields.String(
        required=True, allow_none=True, metadata={"description": "null once erased."}
    )


class OrderItemSchema(Schema):
    product_id = fields.String(
        required=True, metadata={"description": "The product as it was; it may since be deleted."}
    )
    name = fields.String(required=True)
    sku = fields.String(required=True, allow_none=True)
    unit_price_cents = fields.Integer(required=True)
    quantity = fields.Integer(required=True)
    line_total_cents = fields.Integer(required=True)


class PaymentSchema(Schema):
    provider = fields.String(required=True)
    amount_cents = fields.Integer(required=True)
    status = enum_field(
        "PaymentStatusValue", ["pending", "paid", "cancelled", "refunded"], required=True
    )
    reference = fields.String(required=True)


def order_status(**kwargs) -> fields.String:
    """An order status: the ``OrderStatusValue`` enum."""
    return enum_field("OrderStatusValue", STATUSES, **kwargs)


class StatusChangeSchema(Schema):
    status = order_status(required=True)
    at = fields.String(required=True)
    by = fields.Nested(ActorSchema, required=True, allow_none=True)
    note = fields.String(required=True, allow_none=True)


class OrderSchema(Schema):
    id = fields.String(required=True)
    number = fields.String(required=True)
    customer = fields.Nested(OrderCustomerSchema, required=True)
    status = order_status(required=True)
    items = fields.List(fields.Nested(OrderItemSchema), required=True)
    subtotal_cents = fields.Integer(required=True)
    total_cents = fields.Integer(required=True)
    currency = fields.String(required=True)
    shipping_address = fields.Nested(
        OrderAddressSchema,
        required=True,
        allow_none=True,
        metadata={"description": "null once erased."},
    )
    payment = fields.Nested(PaymentSchema, required=True, allow_none=True)
    status_history = fields.List(fields.Nested(StatusChangeSchema), required=True)
    created_at = fields.String(required=True)
    updated_at = fields.String(required=True)


class OrderQuerySchema(PageQuerySchema):
    status = order_status()
    customer_id = fields.String(validate=validate.Length(max=64))
    created_after = DateOrDateTime(
        metadata={"description": "ISO 8601 date or date-time (UTC unless given), inclusive."}
    )
    created_before = DateOrDateTime(
        metadata={"description": "ISO 8601 date or date-time (UTC unless given), exclusive."}
    )


class OrderStatusChangeSchema(Schema):
    status = order_status(required=True)
    note = fields.String(validate=validate.Length(max=500))


def _present(row: dict, items: list[dict], history: list[dict]) -> dict:
    payment = None
    if row["payment_provider"] is not None:
        payment = {
            "provider": row["payment_provider"],
            "amount_cents": row["payment_amount_cents"],
            "status": row["payment_status"],
            "reference": row["payment_reference"],
        }
    address = row["shipping_address"]
    return {
        "id": row["id"],
        "number": row["number"],
        "customer": {
            "id": row["customer_id"],
            "email": row["customer_email"],
            "name": row["customer_name"],
        },
        "status": row["status"],
        "items": items,
        "subtotal_cents": row["subtotal_cents"],
        "total_cents": row["total_cents"],
        "currency": row["currency"],
        "shipping_address": json.loads(address) if address else None,
        "payment": payment,
        "status_history": [
            {
                "status": h["status"],
                "at": h["at"],
                "by": {"kind": h["by_kind"], "id": h["by_id"], "label": h["by_label"]}
                if h["by_kind"]
                else None,
                "note": h["note"],
            }
            for h in history
        ],
        "created_at": row["created_at"],
        "updated_at": row["updated_at"],
    }


def present_all(rows: list[dict]) -> list[dict]:
    """Whole orders from their rows: items and histories in one query each."""
    if not rows:
        return []
    ids, params = db.in_list("o", [row["id"] for row in rows])
    items, history = {}, {}
    for item in db.query(
        "SELECT order_id, product_id, name, sku, unit_price_cents, quantity, line_total_cents"
        f" FROM order_items WHERE order_id IN {ids} ORDER BY order_id, line",
        params,
    ):
        items.setdefault(item.pop("order_id"), []).append(item)
    for entry in db.query(
        "SELECT order_id, status, note, at, by_kind, by_id, by_label FROM order_status_history"
        f" WHERE order_id IN {ids} ORDER BY order_id, at, id",
        params,
    ):
        history.setdefault(entry["order_id"], []).append(entry)
    return [_present(row, items.get(row["id"], []), history.get(row["id"], [])) for row in rows]


def load(order_id: str, customer_id: str | None = None) -> dict | None:
    """One whole order; with ``customer_id``, only if it is that customer's."""
    if customer_id is None:
        row = db.one(_SELECT + " WHERE o.id = :id", {"id": order_id})
    else:
        row = db.one(
            _SELECT + " WHERE o.id = :id AND o.customer_id = :customer_id",
            {"id": order_id, "customer_id": customer_id},
        )
    return present_all([row])[0] if row else None


webhooks.renders("order", load)


def _visible(order_id: str) -> dict:
    """The order if the caller may read it: 404 to a customer for anybody else's."""
    caller = g.caller
    if caller.kind == "customer":
        order = load(order_id, caller.id)
    else:
        _require_orders_read()
        order = load(order_id)
    if order is None:
        abort(404, "Order not found.")
    return order


def _require_orders_read() -> None:
    require(g.caller, "orders.read")


def _utc(moment) -> str:
    """A query-string date-time (already in UTC, ``DateOrDateTime``) as stored."""
    return iso(moment)


def change_status(order_id: str, status: str, note: str | None, customer_id=None) -> dict:
    """Move an order to ``status`` along ``NEXT``; answer the whole order.

    With ``customer_id`` the order must be that customer's (404 otherwise). The move, its
    history entry, the payment's status, the restock and the audit entry are one transaction.
    """
    with db.transaction():
        if customer_id is None:
            row = db.one("SELECT id, number, status FROM orders WHERE id = :id", {"id": order_id})
        else:
            row = db.one(
                "SELECT id, number, status FROM orders WHERE id = :id AND customer_id = :cid",
                {"id": order_id, "cid": customer_id},
            )
        if row is None:
            abort(404, "Order not found.")
        _check_move(row, status)
        moment = now_iso()
        moved = db.execute(
            "UPDATE orders SET status = :status, updated_at = :now"
            " WHERE id = :id AND status = :current",
            {"status": status, "now": moment, "id": order_id, "current": row["status"]},
        )
        if not moved:  # another request moved it since we read it (PostgreSQL)
            abort(409, f"Order {row['number']} changed meanwhile; reload it and try again.")
        record_history(order_id, status, note, moment)
        _follow_payment(order_id, status, moment)
        restocked = status in RESTOCKING and _restock(order_id, moment)
        details = {"order_id": order_id, "number": row["number"], "from": row["status"]}
        details.update(to=status, restocked=restocked)
        if note:
            details["note"] = note
        audit.record("order.status_changed", details)
        webhooks.emit("order.status_changed", order_id, load)
        if status == "cancelled":
            webhooks.emit("order.cancelled", order_id, load)
        order = load(order_id)
        mail.queue_order_mail(order, placed=False)
    return order


def _check_move(row: dict, status: str) -> None:
    """409 unless ``NEXT`` allows moving ``row`` to ``status``."""
    allowed = NEXT[row["status"]]
    if status in allowed:
        return
    where = f"Order {row['number']} is {row['status']}"
    if not allowed:
        abort(409, f"{where}, a final status: it cannot move to {status}.")
    abort(409, f"{where}: it cannot move to {status}; allowed next: {', '.join(allowed)}.")


def _follow_payment(order_id: str, status: str, moment: str) -> None:
    """Let the payment's provider say where the payment stands now."""
    payment = db.one(
        "SELECT id, provider, status FROM payments WHERE order_id = :id", {"id": order_id}
    )
    if payment is None:
        return
    provider = payments.get(payment["provider"]) or payments.Provider()
    new_status = provider.follow(payment, status)
    if new_status != payment["status"]:
        db.execute(
            "UPDATE payments SET status = :status, updated_at = :now WHERE id = :id",
            {"status": new_status, "now": moment, "id": payment["id"]},
        )


def _restock(order_id: str, moment: str) -> bool:
    """Put an order's units back on the shelf, once ever; answer whether it happened now."""
    first_time = db.execute(
        "UPDATE orders SET restocked_at = :now WHERE id = :id AND restocked_at IS NULL",
        {"now": moment, "id": order_id},
    )
    if not first_time:
        return False
    # Product order as in checkout, so concurrent transactions lock rows in one order.
    lines = db.query(
        "SELECT product_id, SUM(quantity) AS quantity FROM order_items"
        " WHERE order_id = :id AND product_id IS NOT NULL GROUP BY product_id"
        " ORDER BY product_id",
        {"id": order_id},
    )
    # A product deleted since simply matches no row.
    db.execute_many("UPDATE products SET stock = stock + :quantity WHERE id = :product_id", lines)
    return True


@blp.route("")
class Orders(MethodView):
    @blp.doc(operationId="listOrders")
    @blp.arguments(OrderQuerySchema, location="query")
    @blp.response(200, page_schema(OrderSchema))
    @require_auth()
    def get(self, args):
        """List orders, newest first

        A customer sees only their own orders. Administrators and API keys need
        `orders.read` (scope `read:order`) and see all of them.
        """
        caller = g.caller
        where, params = [], {}
        if caller.kind == "customer":
            where.append("o.customer_id = :own")
            params["own"] = caller.id
        else:
            _require_orders_read()
        if args.get("status"):
            where.append("o.status = :status")
            params["status"] = args["status"]
        if args.get("customer_id"):
            where.append("o.customer_id = :customer_id")
            params["customer_id"] = args["customer_id"]
        if args.get("created_after"):
            where.append("o.created_at >= :after")
            params["after"] = _utc(args["created_after"])
        if args.get("created_before"):
            where.append("o.created_at < :before")
            params["before"] = _utc(args["created_before"])
        clause = (" WHERE " + " AND ".join(where)) if where else ""
        page = paginate(
            _SELECT + clause + " ORDER BY o.created_at DESC, o.id DESC",
            "SELECT COUNT(*) FROM orders o" + clause if where else totals.SQL[totals.ORDERS],
            params,
            args,
        )
        page["items"] = present_all(page["items"])
        return page


@blp.route("/<id:order_id>")
class OrderById(MethodView):
    @blp.doc(operationId="getOrder")
    @blp.response(200, OrderSchema)
    @require_auth()
    def get(self, order_id):
        """One order

        A customer may read their own orders only; anybody else's is a 404.
        Administrators and API keys need `orders.read` (scope `read:order`).
        """
        return _visible(order_id)


@blp.route("/<id:order_id>/status")
class OrderStatus(MethodView):
    @blp.doc(operationId="changeOrderStatus")
    @responds(409, e409="Not a move allowed from the current status; the message says which are.")
    @blp.arguments(OrderStatusChangeSchema)
    @blp.response(200, OrderSchema)
    @blp.alt_response(204, description=WRITE_ONLY, success=True)
    @require_permission("orders.update_status")
    def patch(self, data, order_id):
        """Move an order to its next status

        Moves: `pending` -> `paid` | `cancelled`, `paid` -> `shipped` | `refunded`,
        `shipped` -> `delivered`, `delivered` -> `refunded`; `cancelled` and `refunded` are
        final. Any other move is a 409 naming the allowed next statuses. Cancelling or
        refunding puts the stock back, once. A caller without `orders.read` gets 204 and no
        body.
        """
        return readable("orders.read", change_status(order_id, data["status"], data.get("note")))


@blp.route("/<id:order_id>/cancel")
class OrderCancel(MethodView):
    @blp.doc(operationId="cancelOrder")
    @responds(409, e409="The order is no longer `pending`.")
    @blp.response(200, OrderSchema)
    @require_auth("customer")
    def post(self, order_id):
        """Cancel your own pending order

        The stock goes back on the shelf. An order that is no longer `pending` is a 409.
        """
        return change_status(order_id, "cancelled", None, customer_id=g.caller.id)
