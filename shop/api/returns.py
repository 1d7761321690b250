"""Returns (issue 41): the HTTP side of ``shop/returns``.

The order's customer, a guest with the order's token (``?token=``, as ``GET /orders/{id}``)
or staff with ``returns.update`` ask for a return; staff with ``returns.read`` list and read
them, with ``returns.update`` approve, reject and receive them (a receive that refunds needs
``orders.refund`` too), and exchange a received one for a draft order (``draft_orders.create``
too). Someone else's order or return is a 404. docs/returns.md.
"""

from flask import g
from flask.views import MethodView
from marshmallow import Schema, fields, validate

from shop.api.common import Blueprint, ChangedSinceQuerySchema, page_schema
from shop.api.schemas import ActorSchema, CheckoutItemSchema
from shop.auth.caller import require
from shop.db.pages import Where, changed_since, paginate
from shop.errors import NotFound, Unauthenticated
from shop.http.context import current_actor
from shop.http.decorators import ADMIN_COOKIE, BEARER, CUSTOMER_COOKIE, require_permission
from shop.http.openapi import enum_field, responds
from shop.orders import guests
from shop.returns import exchange, flow, rules, store

ANYONE = [{}, ADMIN_COOKIE, CUSTOMER_COOKIE, BEARER]

blp = Blueprint("returns", __name__, description="Returns of shipped units.")


def return_status(**kwargs):
    return enum_field("ReturnStatusValue", rules.STATUSES, **kwargs)


class TokenQuerySchema(Schema):
    token = fields.String(
        validate=validate.Length(min=1, max=100),
        metadata={"description": "A guest's order: its token (as `GET /orders/{id}`)."},
    )


class ReturnLineRequestSchema(Schema):
    line = fields.Integer(strict=True, required=True, validate=validate.Range(min=1))
    quantity = fields.Integer(
        strict=True, required=True, validate=validate.Range(min=1, max=rules.MOST_UNITS)
    )
    reason = fields.String(validate=validate.Length(max=rules.REASON_LENGTH))


class ReturnRequestSchema(Schema):
    lines = fields.List(
        fields.Nested(ReturnLineRequestSchema),
        required=True,
        validate=validate.Length(min=1, max=rules.MOST_LINES),
    )
    note = fields.String(validate=validate.Length(max=rules.NOTE_LENGTH))


class ApproveSchema(Schema):
    instructions = fields.String(
        validate=validate.Length(max=flow.INSTRUCTIONS_LENGTH),
        metadata={"description": "How to send the units back: mailed to the customer."},
    )


class RejectSchema(Schema):
    reason = fields.String(required=True, validate=validate.Length(min=1, max=rules.REASON_LENGTH))


class ReceivedLineSchema(Schema):
    line = fields.Integer(strict=True, required=True, validate=validate.Range(min=1))
    quantity = fields.Integer(
        strict=True, required=True, validate=validate.Range(min=0, max=rules.MOST_UNITS)
    )


class ReceiveSchema(Schema):
    lines = fields.List(
        fields.Nested(ReceivedLineSchema),
        validate=validate.Length(min=1, max=rules.MOST_LINES),
        metadata={"description": "The units that arrived; default: every unit requested."},
    )
    restock = fields.Boolean(
        required=True, metadata={"description": "Put the units that arrived back on the shelf."}
    )
    refund = fields.Boolean(
        required=True,
        metadata={
            "description": "Refund their share through the refund path (needs"
            " `orders.refund`); false keeps their value (`refundable_value`, an exchange)."
        },
    )


class ExchangeSchema(Schema):
    lines = fields.List(
        fields.Nested(CheckoutItemSchema),
        required=True,
        validate=validate.Length(min=1, max=exchange.MOST_LINES),
        metadata={"description": "The replacement: `variant_id` (or `product_id`), `quantity`."},
    )
    shipping_method_id = fields.String(validate=validate.Length(min=1, max=64))
    note = fields.String(validate=validate.Length(max=exchange.NOTE_LENGTH))


class ReturnLineSchema(Schema):
    line = fields.Integer(required=True)
    name = fields.String(required=True)
    quantity = fields.Integer(required=True, metadata={"description": "Units asked for."})
    received = fields.Integer(
        required=True, allow_none=True, metadata={"description": "Units that arrived."}
    )
    reason = fields.String(required=True, allow_none=True)


class ReturnSchema(Schema):
    id = fields.String(required=True)
    order_id = fields.String(required=True)
    order_number = fields.String(required=True)
    status = return_status(required=True)
    note = fields.String(required=True, allow_none=True)
    instructions = fields.String(required=True, allow_none=True)
    reject_reason = fields.String(required=True, allow_none=True)
    restock = fields.Boolean(required=True)
    refund = fields.Boolean(required=True)
    refund_id = fields.String(
        required=True, allow_none=True, metadata={"description": "The refund it made."}
    )
    exchange_draft_id = fields.String(
        required=True,
        allow_none=True,
        metadata={"description": "The draft order it was exchanged for (its credit)."},
    )
    created_at = fields.String(required=True)
    updated_at = fields.String(required=True)
    decided_at = fields.String(required=True, allow_none=True)
    received_at = fields.String(required=True, allow_none=True)
    by = fields.Nested(ActorSchema, required=True, allow_none=True)
    lines = fields.List(fields.Nested(ReturnLineSchema), required=True)


class ReturnListSchema(Schema):
    items = fields.List(fields.Nested(ReturnSchema), required=True)


class ReturnQuerySchema(ChangedSinceQuerySchema):
    status = return_status()
    order_id = fields.String(validate=validate.Length(max=64))


def _reader(order_id: str, token: str | None, staff: str):
    """Who acts on ``order_id``'s returns: a guest holding its token, its own customer, or
    staff holding ``staff``; anybody else's order is a 404."""
    caller = g.caller
    if token is not None:
        if not guests.holds(order_id, token):
            raise NotFound("Order not found.")
        return current_actor().acting_as("anonymous", label="order token")
    if caller is None:
        raise Unauthenticated("Authentication required: sign in, or send the order's token.")
    if caller.kind == "customer":
        if not store.owned(order_id, caller.id):
            raise NotFound("Order not found.")
        return caller.actor
    require(caller, staff)
    return caller.actor


@blp.route("/orders/<id:order_id>/returns")
class OrderReturns(MethodView):
    @blp.doc(operationId="requestReturn", security=ANYONE)
    @responds(
        403,
        404,
        409,
        e409="Nothing of the order has shipped yet, its return window has closed, or it is"
        " refunded or cancelled.",
    )
    @blp.arguments(TokenQuerySchema, location="query")
    @blp.arguments(ReturnRequestSchema)
    @blp.response(201, ReturnSchema)
    def post(self, args, data, order_id):
        """Ask to return shipped units

        By the order's customer, or staff with `returns.update` (scope
        `write:return`); anybody else's order is a 404. Public. with `token`: a guest asks
        with their order's token and no sign-in. Only units shipped and neither returned nor
        asked for in an open return (400 naming `lines` for more), within
        `SHOP_RETURN_WINDOW_DAYS` of the delivery (or of the last shipment when the order is
        not marked delivered): 409 after it, and before anything shipped. The return is
        `requested`; `return.requested` is emitted and the customer mailed.
        """
        actor = _reader(order_id, args.get("token"), flow.UPDATE)
        return flow.request_return(order_id, data["lines"], data.get("note"), actor), 201

    @blp.doc(operationId="listOrderReturns", security=ANYONE)
    @responds(403, 404)
    @blp.arguments(TokenQuerySchema, location="query")
    @blp.response(200, ReturnListSchema)
    def get(self, args, order_id):
        """An order's returns, oldest first

        Its customer, or staff with `returns.read` (scope `read:return`); anybody else's
        order is a 404. Public. with `token`: a guest reads their order's returns with it and
        no sign-in; a wrong token is a 404.
        """
        _reader(order_id, args.get("token"), flow.READ)
        if not store.exists(order_id):
            raise NotFound("Order not found.")
        return {"items": store.of_order(order_id)}


@blp.route("/returns")
class Returns(MethodView):
    @blp.doc(operationId="listReturns")
    @blp.arguments(ReturnQuerySchema, location="query")
    @blp.response(200, page_schema(ReturnSchema))
    @require_permission(flow.READ)
    def get(self, args):
        """List returns, newest first (by `status`, `order_id`)"""
        where = Where()
        if args.get("status"):
            where.add("r.status = :status", status=args["status"])
        if args.get("order_id"):
            where.add("r.order_id = :order_id", order_id=args["order_id"])
        order = changed_since(where, args, "r.") or " ORDER BY r.created_at DESC, r.id DESC"
        page = paginate(store.SELECT, "returns r", where, order, args)
        page["items"] = store.present(page["items"])
        return page


@blp.route("/returns/<id:return_id>")
class ReturnById(MethodView):
    @blp.doc(operationId="getReturn", security=ANYONE)
    @responds(403, 404)
    @blp.arguments(TokenQuerySchema, location="query")
    @blp.response(200, ReturnSchema)
    def get(self, args, return_id):
        """One return

        Staff with `returns.read` (scope `read:return`), or the order's customer; anybody
        else's is a 404. Public. with `token`: a guest reads it with their order's token.
        """
        shown = store.load(return_id)
        if shown is None:
            raise NotFound("Return not found.")
        try:
            _reader(shown["order_id"], args.get("token"), flow.READ)
        except NotFound:
            raise NotFound("Return not found.") from None
        return shown


@blp.route("/returns/<id:return_id>/approve")
class ReturnApprove(MethodView):
    @blp.doc(operationId="approveReturn")
    @responds(409, e409="The return is not `requested`.")
    @blp.arguments(ApproveSchema)
    @blp.response(200, ReturnSchema)
    @require_permission(flow.UPDATE)
    def post(self, data, return_id):
        """Approve a requested return

        Its `instructions` (how to send the units back) are mailed to the customer;
        `return.approved` is emitted.
        """
        return flow.approve(return_id, data.get("instructions"), g.caller.actor)


@blp.route("/returns/<id:return_id>/reject")
class ReturnReject(MethodView):
    @blp.doc(operationId="rejectReturn")
    @responds(409, e409="The return is not `requested`.")
    @blp.arguments(RejectSchema)
    @blp.response(200, ReturnSchema)
    @require_permission(flow.UPDATE)
    def post(self, data, return_id):
        """Reject a requested return, saying why

        The reason is mailed to the customer; `return.rejected` is emitted. Its units may be
        asked for again.
        """
        return flow.reject(return_id, data["reason"], g.caller.actor)


@blp.route("/returns/<id:return_id>/receive")
class ReturnReceive(MethodView):
    @blp.doc(operationId="receiveReturn")
    @responds(
        409,
        502,
        503,
        e409="The return is not `approved` (already received: its refund is made), or the"
        " payment provider refused the refund.",
        e502="Stripe refused the shop's own API key.",
        e503="The payment provider cannot be reached: the return is received and a retry of"
        " this call makes its refund, once.",
    )
    @blp.arguments(ReceiveSchema)
    @blp.response(200, ReturnSchema)
    @require_permission(flow.UPDATE)
    def post(self, data, return_id):
        """Receive an approved return

        `lines`: the units that arrived (default: every unit requested). `restock` puts them
        back on the shelf and `refund` refunds their share (needs `orders.refund` too: 403
        otherwise), once, through the refund path (`POST /orders/{id}/refunds`, keyed by the
        return): priced as the refund preview prices those units. `return.received` is
        emitted and the customer mailed (the refund mails its own). Concurrent receives
        restock and refund once; the others answer 409, or the same return while its refund
        is being made.
        """
        return flow.receive(return_id, data.get("lines"), data["restock"], data["refund"], g.caller)


class ExchangedSchema(Schema):
    return_ = fields.Nested(ReturnSchema, required=True, data_key="return")
    # By name (marshmallow's class registry): a blueprint imports no other blueprint.
    draft_order = fields.Nested("DraftOrderSchema", required=True)


@blp.route("/returns/<id:return_id>/exchange")
class ReturnExchange(MethodView):
    @blp.doc(operationId="exchangeReturn")
    @responds(
        409,
        e409="The return is not `received`, or its value was refunded (received with"
        " `refund: true`, or its units refunded from the order).",
    )
    @blp.arguments(ExchangeSchema)
    @blp.response(201, ExchangedSchema)
    @blp.alt_response(
        200, schema=ExchangedSchema, description="Exchanged before: its draft.", success=True
    )
    @require_permission(flow.UPDATE)
    def post(self, data, return_id):
        """Exchange a received return for a draft order

        Needs `draft_orders.create` too (403 otherwise). For a return received with `refund:
        false`: the units that arrived are refunded **to credit** on the order (a refund with
        provider `credit`: no money moves, a credit note if invoiced; they cannot be refunded
        again), and a draft order of `lines` is made for the order's customer to its shipping
        address, priced as the quote prices it, with that refund's amount as its
        `credit_cents`. Complete it (`POST /draft-orders/{id}/complete`) or send its pay link
        as any draft. Once: concurrent calls make one refund and one draft; a replay answers
        that draft (200). Lines the quote refuses: 400 naming them, nothing written.
        """
        draft, created = exchange.exchange(
            return_id, data["lines"], data.get("shipping_method_id"), data.get("note"), g.caller
        )
        shown = {"return_": store.load(return_id), "draft_order": draft}
        return shown, 201 if created else 200
