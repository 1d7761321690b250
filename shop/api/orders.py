"""Orders and their status (spec 3.3, 4.4): the HTTP side.

A customer sees only their own orders (anybody else's is a 404); ``orders.read`` (or the
``read:order`` scope) sees all. The lifecycle itself (``NEXT``, the restock, the payment that
follows, the history) is ``shop/orders/lifecycle.py``.
"""

from operator import itemgetter

from flask import g
from flask.views import MethodView
from marshmallow import Schema, fields, validate

from shop.api.common import (
    WRITE_ONLY,
    Blueprint,
    ChangedSinceQuerySchema,
    Where,
    changed_since,
    page_schema,
    paginate,
    readable,
)
from shop.api.dump import json_page, json_text
from shop.api.schemas import (
    OrderSchema,
    ShipmentCreateSchema,
    order_fulfillment_status,
    order_payment_status,
    order_status,
)
from shop.auth.caller import require
from shop.clock import iso
from shop.db import totals
from shop.errors import NotFound, Unauthenticated
from shop.http.context import current_actor
from shop.http.decorators import (
    ADMIN_COOKIE,
    BEARER,
    CUSTOMER_COOKIE,
    require_auth,
    require_permission,
)
from shop.http.errors import abort
from shop.http.openapi import DateOrDateTime, responds
from shop.orders import guests, order_json, order_list, shipments
from shop.orders.lifecycle import change_status
from shop.orders.shipments import ShipmentRequest

# Routes a guest reaches with an order's token and others signed in: either way.
ANYONE = [{}, ADMIN_COOKIE, CUSTOMER_COOKIE, BEARER]

blp = Blueprint("orders", __name__, url_prefix="/orders", description="Orders and their status.")


class OrderQuerySchema(ChangedSinceQuerySchema):
    status = order_status()
    payment_status = order_payment_status(
        metadata={"description": "Only orders whose money stands so (`payment_status`)."}
    )
    fulfillment_status = order_fulfillment_status(
        metadata={"description": "Only orders whose parcel stands so (`fulfillment_status`)."}
    )
    q = fields.String(
        validate=validate.Length(max=200),
        metadata={
            "description": "Part of the order number, of the customer's e-mail or of the"
            " customer's name (case-insensitive)."
        },
    )
    customer_id = fields.String(validate=validate.Length(max=64))
    created_before = DateOrDateTime(
        metadata={"description": "ISO 8601 date or date-time (UTC unless given), exclusive."}
    )


class OrderTokenQuerySchema(Schema):
    token = fields.String(
        validate=validate.Length(min=1, max=100),
        metadata={
            "description": "A guest's order: the `order_token` its cart's completion answered"
            " (the confirmation mail's link carries it). No sign-in needed with it."
        },
    )


class OrderStatusChangeSchema(Schema):
    status = order_status(required=True)
    note = fields.String(validate=validate.Length(max=500))


def _visible(order_id: str, token: str | None = None) -> str:
    """The order's JSON if the caller may read it: 404 to a customer for anybody else's,
    and for a guest's order to anyone without its token."""
    caller = g.caller
    if token is not None:
        order = order_json.body(order_id) if guests.holds(order_id, token) else None
    elif caller is None:
        raise Unauthenticated("Authentication required: sign in, or send the order's token.")
    elif caller.kind == "customer":
        order = order_json.body(order_id, caller.id)
    else:
        _require_orders_read()
        order = order_json.body(order_id)
    if order is None:
        abort(404, "Order not found.")
    return order


def _require_orders_read() -> None:
    require(g.caller, "orders.read")


def _utc(moment) -> str:
    """A query-string date-time (already in UTC, ``DateOrDateTime``) as stored."""
    return iso(moment)


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
        where = Where()
        if caller.kind == "customer":
            where.add("o.customer_id = :own", own=caller.id)
        else:
            _require_orders_read()
        before = args.get("created_before")
        order_list.narrow(
            where,
            status=args.get("status"),
            payment_status=args.get("payment_status"),
            fulfillment_status=args.get("fulfillment_status"),
            customer_id=args.get("customer_id"),
            q=args.get("q", ""),
            created_before=_utc(before) if before else None,
        )
        order = changed_since(where, args, "o.") or " ORDER BY o.created_at DESC, o.id DESC"
        kept = None if where.conditions else totals.SQL[totals.ORDERS]
        page = paginate(
            order_json.select(),
            "orders o",
            where,
            order,
            args,
            itemgetter("body"),
            exact_total=kept,
            count_in_order=True,  # every filter's index ends in the sort's columns
            total_in_page=True,  # the kept total rides with the page: one round trip less
        )
        return json_page(page)  # the orders' JSON as the database wrote it


@blp.route("/<id:order_id>")
class OrderById(MethodView):
    @blp.doc(operationId="getOrder", security=ANYONE)
    @blp.arguments(OrderTokenQuerySchema, location="query")
    @blp.response(200, OrderSchema)
    def get(self, args, order_id):
        """One order

        A customer may read their own orders only; anybody else's is a 404.
        Administrators and API keys need `orders.read` (scope `read:order`). Public. with
        `token`: a guest's order is read with it and no sign-in; a wrong token is a 404.
        """
        return json_text(_visible(order_id, args.get("token")))


@blp.route("/<id:order_id>/status")
class OrderStatus(MethodView):
    @blp.doc(operationId="changeOrderStatus")
    @responds(
        409,
        e409="Not a move allowed from the current status (the message says which are), or"
        " `paid` for an order paid by card.",
    )
    @blp.arguments(OrderStatusChangeSchema)
    @blp.response(200, OrderSchema)
    @blp.alt_response(204, description=WRITE_ONLY, success=True)
    @require_permission("orders.update_status")
    def patch(self, data, order_id):
        """Move an order to its next status

        Moves: `pending` -> `paid` | `cancelled`, `paid` -> `partially_shipped` | `shipped` |
        `refunded`, `partially_shipped` -> `shipped` | `refunded`, `shipped` -> `delivered`,
        `delivered` -> `refunded`; `cancelled` and `refunded` are final. Record a shipment
        with `POST /orders/{id}/shipments` to keep its tracking and lines. Any other move is a
        409 naming the allowed next statuses. `paid` by hand is for manual payments: an order
        paid by card is moved to `paid` by its provider only (409 otherwise). Cancelling or
        refunding puts back the units still out, once (at most the units sold, refunds'
        restocks counted). A caller without `orders.read` gets 204 and no body.
        """
        return readable(
            "orders.read", change_status(order_id, data["status"], data.get("note"), g.caller.actor)
        )


@blp.route("/<id:order_id>/cancel")
class OrderCancel(MethodView):
    @blp.doc(operationId="cancelOrder", security=ANYONE)
    @responds(409, e409="The order is no longer `pending`.")
    @blp.arguments(OrderTokenQuerySchema, location="query")
    @blp.response(200, OrderSchema)
    def post(self, args, order_id):
        """Cancel your own pending order

        The stock goes back on the shelf; a card order's PaymentIntent is cancelled at
        Stripe once the cancel is recorded (retried by the worker if Stripe cannot be reached:
        the order is cancelled either way). An order that is no longer `pending` is a 409.
        A signed-in customer cancels their own orders. Public. with `token`: a guest's order
        is cancelled with it (a wrong one is a 404).
        """
        token, caller = args.get("token"), g.caller
        if token is not None:
            if not guests.holds(order_id, token):
                raise NotFound("Order not found.")
            actor = current_actor().acting_as("anonymous", label="order token")
            return change_status(order_id, "cancelled", None, actor, reader=None)
        if caller is None or caller.kind != "customer":
            raise Unauthenticated("Sign in as the customer, or send the order's token.")
        return change_status(order_id, "cancelled", None, caller.actor, customer_id=caller.id)


@blp.route("/<id:order_id>/shipments")
class OrderShipments(MethodView):
    @blp.doc(operationId="createShipment")
    @responds(
        409,
        e409="The order is not paid or partially shipped, or a line has fewer units left to"
        " ship than asked.",
    )
    @blp.arguments(ShipmentCreateSchema)
    @blp.response(201, OrderSchema)
    @blp.alt_response(204, description=WRITE_ONLY, success=True)
    @require_permission("orders.update_status")
    def post(self, data, order_id):
        """Ship some or all of an order

        Records the carrier, tracking number and optional tracking page (http or https) and
        the units of each line shipped (default: every unit not yet shipped). The order
        becomes `partially_shipped` while units remain, else `shipped`; the customer gets an
        e-mail with the tracking link and `order.shipped` carries the order with this
        shipment under `shipment`. Only a `paid` or `partially_shipped` order ships; more
        units than ordered minus shipped is a 409. A caller without `orders.read` gets 204.
        """
        order = shipments.create(order_id, ShipmentRequest(**data), g.caller.actor)
        return readable("orders.read", order)
