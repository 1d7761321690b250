"""Checkout (spec 4.6, 8): a signed-in customer turns a basket into an order.

Prices and names come from the database, never from the request. The use case lives in
``shop/services/checkout.py``; the ways of paying in ``shop/services/payments.py``.
"""

from flask import g, request
from flask.views import MethodView
from marshmallow import Schema, ValidationError, fields, validate, validates_schema

from shop.api.common import Blueprint
from shop.api.schemas import OrderSchema, ShippingAddressSchema
from shop.auth.decorators import require_auth
from shop.extensions import limiter
from shop.openapi import responds
from shop.services import checkout, orders, payments

blp = Blueprint("payments", __name__, url_prefix="/payments", description="Checkout.")

MAX_LINES = 100
MAX_QUANTITY = 10_000


def _known_method(value: str) -> None:
    if payments.get(value) is None:
        raise ValidationError(f"Unknown payment method; use one of: {', '.join(payments.names())}.")


class CheckoutItemSchema(Schema):
    product_id = fields.String(required=True, validate=validate.Length(min=1, max=64))
    quantity = fields.Integer(
        strict=True, required=True, validate=validate.Range(min=1, max=MAX_QUANTITY)
    )


class CheckoutSchema(Schema):
    items = fields.List(
        fields.Nested(CheckoutItemSchema),
        required=True,
        validate=validate.Length(min=1, max=MAX_LINES),
    )
    shipping_address = fields.Nested(ShippingAddressSchema, required=True)
    payment_method = fields.String(
        required=True,
        validate=_known_method,
        metadata={
            "description": "`manual`: bank transfer or cash on delivery.",
            "enum": payments.names(),
        },
    )

    @validates_schema
    def _one_line_per_product(self, data, **_kwargs):
        seen = set()
        for item in data.get("items", []):
            if item["product_id"] in seen:
                raise ValidationError(
                    f"product {item['product_id']} is listed twice; give it one line.", "items"
                )
            seen.add(item["product_id"])


class IdempotencyHeadersSchema(Schema):
    idempotency_key = fields.String(
        data_key="Idempotency-Key",
        validate=validate.Length(min=1, max=255),
        metadata={
            "description": "Optional. A retry with the same key and body within 24 hours"
            " answers the same order with 200 and writes nothing."
        },
    )


@blp.route("/checkout")
class Checkout(MethodView):
    @blp.doc(operationId="checkout")
    @responds(409, e409="Too little stock, or the `Idempotency-Key` was used with another body.")
    @limiter.limit("10 per minute")
    @blp.arguments(IdempotencyHeadersSchema, location="headers")
    @blp.arguments(CheckoutSchema)
    @blp.response(201, OrderSchema)
    @blp.alt_response(
        200,
        schema=OrderSchema,
        description="A retry with the same Idempotency-Key and body: the order placed first.",
        success=True,
    )
    @require_auth("customer")
    def post(self, headers, data):
        """Place an order

        Takes the stock, numbers the order and records its payment in one transaction: an
        unknown or inactive product is a 400 and too little stock a 409, both naming the
        product, and nothing is written. With the `manual` payment method the order stays
        `pending` until an administrator marks it `paid`. Limited to 10 requests a minute
        per client address, invalid ones included.
        """
        key = headers.get("idempotency_key")
        order_id, created, order = checkout.place_order(
            g.caller,
            data["items"],
            data["shipping_address"],
            data["payment_method"],
            key,
            checkout.request_hash(request.get_json()) if key is not None else None,
        )
        # The webhook's payload when one was rendered: the same order, as the API shows it.
        order = order or orders.load(order_id, g.caller.id)
        return order, 201 if created else 200
