"""Card payment retries, refunds and their preview (issue 27): the HTTP side.

The use cases are ``shop/payments/providers.py`` (``resume``) and ``shop/payments/refunds.py``;
docs/payments.md says how a shop uses them.
"""

from flask import g
from flask.views import MethodView
from marshmallow import Schema, ValidationError, fields, validate, validates_schema

from shop.api.common import WRITE_ONLY, Blueprint, readable
from shop.api.schemas import PaymentSchema
from shop.http.decorators import require_auth, require_permission
from shop.http.openapi import responds
from shop.payments import providers, refunds
from shop.payments.refund_request import RefundRequest

blp = Blueprint("refunds", __name__, url_prefix="/orders", description="Card payments and refunds.")


class RefundLineSchema(Schema):
    line = fields.Integer(strict=True, required=True, validate=validate.Range(min=1))
    quantity = fields.Integer(
        strict=True, required=True, validate=validate.Range(min=1, max=1_000_000)
    )


def _lines(**kwargs):
    return fields.List(
        fields.Nested(RefundLineSchema), validate=validate.Length(max=1000), **kwargs
    )


class RefundRequestSchema(Schema):
    amount_cents = fields.Integer(
        strict=True,
        validate=validate.Range(min=1),
        metadata={"description": "An amount in minor units; or `lines` and/or `shipping`."},
    )
    lines = _lines(metadata={"description": "Units to refund, priced from the order's own lines."})
    shipping = fields.Boolean(metadata={"description": "Refund the shipping too (what is left)."})
    reason = fields.String(validate=validate.Length(max=500))
    restock = _lines(
        metadata={"description": "Units to put back on the shelf, independent of the money."}
    )

    @validates_schema
    def _one_line_each(self, data, **_kwargs):
        for name in ("lines", "restock"):
            numbers = [item["line"] for item in data.get(name) or []]
            if len(numbers) != len(set(numbers)):
                raise ValidationError("name each line once.", name)


class RefundHeadersSchema(Schema):
    idempotency_key = fields.String(
        data_key="Idempotency-Key",
        validate=validate.Length(min=1, max=255),
        metadata={
            "description": "Optional. A retry with the same key and body answers the"
            " same refund with 200 (and retries one Stripe could not be reached for)."
        },
    )


class RefundActorSchema(Schema):
    kind = fields.String(required=True)
    id = fields.String(required=True, allow_none=True)
    label = fields.String(required=True, allow_none=True)


class RefundSchema(Schema):
    id = fields.String(required=True)
    order_id = fields.String(required=True)
    amount_cents = fields.Integer(required=True)
    currency = fields.String(required=True)
    lines = fields.List(fields.Nested(RefundLineSchema), required=True)
    shipping = fields.Boolean(required=True)
    restock = fields.List(fields.Nested(RefundLineSchema), required=True)
    reason = fields.String(required=True, allow_none=True)
    provider = fields.String(
        required=True, metadata={"description": "`stripe`, `manual` or `credit` (an exchange)."}
    )
    reference = fields.String(
        required=True, allow_none=True, metadata={"description": "Stripe's refund id."}
    )
    status = fields.String(
        required=True,
        metadata={
            "description": "`pending` (sent to Stripe, no answer yet), `succeeded`, or"
            " `failed` (Stripe refused it: nothing was refunded)."
        },
    )
    failure_reason = fields.String(
        required=True,
        allow_none=True,
        metadata={"description": "Why Stripe refused a `failed` refund: its code and message."},
    )
    created_at = fields.String(required=True)
    by = fields.Nested(RefundActorSchema, required=True, allow_none=True)
    edit_id = fields.String(
        required=True,
        allow_none=True,
        metadata={"description": "The edit whose lower total this refund gave back, or null."},
    )


class RefundListSchema(Schema):
    items = fields.List(fields.Nested(RefundSchema), required=True)


class PreviewLineSchema(Schema):
    line = fields.Integer(required=True)
    name = fields.String(required=True)
    quantity = fields.Integer(required=True)
    total_cents = fields.Integer(required=True)
    refunded_quantity = fields.Integer(required=True)
    refundable_quantity = fields.Integer(required=True)
    refundable_cents = fields.Integer(required=True)
    restocked_quantity = fields.Integer(required=True)


class RefundPreviewSchema(Schema):
    order_id = fields.String(required=True)
    currency = fields.String(required=True)
    paid_cents = fields.Integer(
        required=True, metadata={"description": "What was paid with money (not the credit)."}
    )
    credit_cents = fields.Integer(
        required=True,
        metadata={
            "description": "What a credit paid (a draft's: an exchange): never refunded as"
            " money; the lines' and shipping's shares count the money only."
        },
    )
    refunded_cents = fields.Integer(required=True)
    refundable_cents = fields.Integer(required=True)
    shipping_refundable_cents = fields.Integer(required=True)
    lines = fields.List(fields.Nested(PreviewLineSchema), required=True)


@blp.route("/<id:order_id>/payment")
class OrderPayment(MethodView):
    @blp.doc(operationId="startOrderPayment")
    @responds(
        409,
        502,
        503,
        e409="The order is not paid by card, it is cancelled, or Stripe refused the"
        " PaymentIntent (the message names its code and message).",
        e502="Stripe refused the shop's own API key.",
        e503="Stripe cannot be reached now: retry after `Retry-After` s.",
    )
    @blp.response(200, PaymentSchema)
    @require_auth("customer")
    def post(self, order_id):
        """Start or confirm the card payment of your own order

        Idempotent: creates the order's Stripe PaymentIntent if the checkout could not
        (Stripe was unreachable: 503 with `Retry-After`), or finds the one made; answers
        the payment with its `client_secret` for Stripe.js. When the storefront calls it
        after Stripe.js confirmed the payment, a succeeded intent marks the order `paid`
        (once, whatever the webhook does meanwhile). Only a `pending` order gets a
        `client_secret`: a cancelled one (by its customer, staff, or unpaid past
        `SHOP_UNPAID_ORDER_TTL`) is a 409, and a paid one answers its payment with
        `client_secret: null`. Stripe refusing the intent is a 409 naming Stripe's code and
        message (502 for the shop's own key); Stripe unreachable, a 503 with `Retry-After`.
        """
        return providers.resume(order_id, g.caller.actor, g.caller.id)


@blp.route("/<id:order_id>/refunds")
class OrderRefunds(MethodView):
    @blp.doc(operationId="createRefund")
    @responds(
        409,
        502,
        503,
        e409="The order is not paid, the `Idempotency-Key` has another body, or Stripe refused"
        " the refund (the message names its code and message; the refund is `failed`).",
        e502="Stripe refused the shop's own API key; the refund is `failed`.",
        e503="Stripe cannot be reached now; the refund stays `pending`: retry with the same"
        " `Idempotency-Key` after `Retry-After` s.",
    )
    @blp.arguments(RefundHeadersSchema, location="headers")
    @blp.arguments(RefundRequestSchema)
    @blp.response(201, RefundSchema)
    @blp.alt_response(
        200, schema=RefundSchema, description="A replay: the first refund.", success=True
    )
    @blp.alt_response(204, description=WRITE_ONLY, success=True)
    @require_permission("orders.refund")
    def post(self, headers, data, order_id):
        """Refund an order, and/or put units back on the shelf

        Money: `amount_cents`, or `lines` (priced from the order's own lines, their discount
        and tax included) and `shipping`. At most what was paid minus what was refunded: more
        is a 400 that says the maximum (to a caller who may read the order). `restock` puts
        units back, independent of the money.
        A Stripe order is refunded through Stripe (503 with `Retry-After` if it cannot be
        reached: retry with the same `Idempotency-Key`). If Stripe refuses it, the answer is a
        409 naming Stripe's code and message (`amount_too_large: ...`; 502 when Stripe refuses
        the shop's own key): the refund is `failed` with that `failure_reason`, its amount can
        be refunded again, with a new key. A manual one is recorded. The order
        becomes `partially_refunded` or `refunded`; `order.refunded` is emitted and the
        customer mailed. A caller without `orders.read` gets 204 and no body.
        """
        refund, created = refunds.create_refund(
            order_id, RefundRequest(**data), g.caller, headers.get("idempotency_key")
        )
        shown = readable("orders.read", refund)
        return shown if shown is not refund else (refund, 201 if created else 200)

    @blp.doc(operationId="listRefunds")
    @blp.response(200, RefundListSchema)
    @require_permission("orders.read")
    def get(self, order_id):
        """An order's refunds, oldest first"""
        return {"items": refunds.list_refunds(order_id)}


@blp.route("/<id:order_id>/refunds/preview")
class RefundPreview(MethodView):
    @blp.doc(operationId="previewRefund")
    @blp.response(200, RefundPreviewSchema)
    @require_permission("orders.read")
    def get(self, order_id):
        """The most that can be refunded, per line and in total"""
        return refunds.preview(order_id)
