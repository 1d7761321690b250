"""Checkout (spec 4.6, 8): a signed-in customer turns a basket into an order.

Prices and names come from the database, never from the request. The use cases live in
``shop/checkout/`` (``placing.place_order``, ``quoting.quote``); the ways of paying in
``shop/payments/providers.py``.
"""

import functools

from flask import g, request
from flask.views import MethodView
from marshmallow import Schema, ValidationError, fields, validate, validates_schema

from shop.api.common import Blueprint
from shop.api.schemas import (
    CheckoutItemSchema,
    OrderSchema,
    PriceBreakdownSchema,
    ShippingAddressSchema,
    ShippingQuoteAddressSchema,
    payment_method,
    payment_method_field,
)
from shop.checkout import placing as checkout
from shop.checkout import quoting
from shop.http.decorators import require_auth
from shop.http.extensions import limiter
from shop.http.openapi import responds

blp = Blueprint("payments", __name__, url_prefix="/payments", description="Checkout.")

MAX_LINES = 100


class BasketSchema(Schema):
    """What the quote and the checkout both take."""

    LOAD_COMPILED = True  # checkout's hot path: shop/api/load.py (issue 42)

    items = fields.List(
        fields.Nested(CheckoutItemSchema),
        required=True,
        validate=validate.Length(min=1, max=MAX_LINES),
    )
    shipping_method_id = fields.String(
        validate=validate.Length(min=1, max=64),
        metadata={
            "description": "One of `GET /shipping-methods/available`. Required when the shop"
            " has active shipping methods; without any, shipping is 0."
        },
    )
    discount_code = fields.String(
        validate=validate.Length(min=1, max=100),
        metadata={
            "description": "One code per order; case and surrounding spaces do not matter."
            " Codes are ASCII: anything else is `discount_code: unknown`."
        },
    )

    @validates_schema
    def _one_line_per_variant(self, data, **_kwargs):
        seen = set()
        for item in data.get("items", []):
            thing = (
                ("variant", item["variant_id"])
                if "variant_id" in item
                else ("product", item["product_id"])
            )
            if thing in seen:
                raise ValidationError(
                    f"{thing[0]} {thing[1]} is listed twice; give it one line.", "items"
                )
            seen.add(thing)


class SavedAddressSchema(Schema):
    """``shipping_address`` or a saved one's id: exactly one of them."""

    shipping_address_id = fields.String(
        validate=validate.Length(min=1, max=64),
        metadata={
            "description": "Instead of `shipping_address`: one of the signed-in customer's"
            " saved addresses (`GET /auth/me/addresses`), copied into the order."
        },
    )

    @validates_schema
    def _one_address(self, data, **_kwargs):
        given = [k for k in ("shipping_address", "shipping_address_id") if k in data]
        if not given:
            raise ValidationError(
                "Missing data for required field: give it, or shipping_address_id.",
                "shipping_address",
            )
        if len(given) == 2:
            raise ValidationError(
                "give shipping_address or shipping_address_id, not both.", "shipping_address_id"
            )


class QuoteRequestSchema(BasketSchema, SavedAddressSchema):
    shipping_address = fields.Nested(
        ShippingQuoteAddressSchema,
        metadata={"description": "Required unless `shipping_address_id` is given."},
    )
    payment_method = fields.String(
        validate=payment_method, metadata={"description": "Accepted and ignored."}
    )


class CheckoutSchema(BasketSchema, SavedAddressSchema):
    shipping_address = fields.Nested(
        ShippingAddressSchema,
        metadata={"description": "Required unless `shipping_address_id` is given."},
    )
    payment_method = payment_method_field()


class IdempotencyHeadersSchema(Schema):
    idempotency_key = fields.String(
        data_key="Idempotency-Key",
        validate=validate.Length(min=1, max=255),
        metadata={
            "description": "Optional. A retry with the same key and body within 24 hours"
            " answers the same order with 200 and writes nothing."
        },
    )


_IDEMPOTENCY_HEADERS = IdempotencyHeadersSchema()


def _idempotency_header(view):
    """``@blp.arguments(IdempotencyHeadersSchema, location="headers")``, with the header's
    schema loaded only when the header is sent: without it the answer is ``{}`` either way,
    and marshmallow's load of a missing optional header was ~2 % of a checkout (issue 42).
    The parameter is documented by ``@blp.doc`` above it."""

    @functools.wraps(view)
    def wrapper(*args, **kwargs):
        headers = {}
        if "Idempotency-Key" in request.headers:
            headers = Blueprint.ARGUMENTS_PARSER.parse(_IDEMPOTENCY_HEADERS, location="headers")
        return view(*args, headers, **kwargs)

    return wrapper


@blp.route("/checkout")
class Checkout(MethodView):
    @blp.doc(operationId="checkout")
    @responds(
        409,
        502,
        503,
        e409="Too little stock, the `Idempotency-Key` was used with another body, or (`stripe`)"
        " Stripe refused the PaymentIntent: the message names its code and message.",
        e502="(`stripe`) Stripe refused the shop's own API key; the order stays `pending`.",
        e503="(`stripe`) Stripe cannot be reached now; the order stays `pending`: retry after"
        " `Retry-After` s with `POST /orders/{id}/payment`.",
    )
    @limiter.limit("10 per minute")
    @blp.doc(parameters=[{"in": "header", "schema": IdempotencyHeadersSchema}])
    @_idempotency_header
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

        The address is `shipping_address`, or `shipping_address_id`: one of your saved
        addresses (`GET /auth/me/addresses`), copied into the order (a 400 naming the field
        when it is not yours). Prices the basket as `POST /payments/quote` does (the same
        function), then takes the
        stock and the discount code's use, numbers the order and records its payment, all in
        one transaction: an unknown or inactive product or variant is a 400 and too little
        stock a 409, both naming it, and nothing is written. A line names a `variant_id`, or
        a `product_id` when the product has one variant (with several, a 400 lists them). A
        shipping method that does not serve the address or the weight, or a code that cannot
        be used, is a 400 whose message starts with the field and a reason
        (`discount_code: expired: ...`). With the
        `manual` payment method the order stays `pending` until an administrator marks it
        `paid`. With `stripe`, the PaymentIntent is created once the order is written, and
        `payment.client_secret` is for Stripe.js; if Stripe cannot be reached (or this node
        already has its most calls to Stripe in flight) the order stays `pending` and the
        answer is a 503 with `Retry-After` (`POST /orders/{id}/payment` starts it again); if
        Stripe refuses the intent, a 409 naming Stripe's code and message (502 when it
        refuses the shop's own key), the order staying `pending`. Limited to 10 requests a
        minute per client address, invalid ones included.
        """
        key = headers.get("idempotency_key")
        command = checkout.PlaceOrder(
            items=data["items"],
            shipping_address=data.get("shipping_address"),
            shipping_address_id=data.get("shipping_address_id"),
            payment_method=data["payment_method"],
            shipping_method_id=data.get("shipping_method_id"),
            discount_code=data.get("discount_code"),
            idempotency_key=key,
            body=request.get_json() if key is not None else None,  # hashed for a replay only
        )
        order, created = checkout.place_order(command, g.caller)
        return order, 201 if created else 200


@blp.route("/quote")
class Quote(MethodView):
    @blp.doc(operationId="quoteBasket")
    @limiter.limit("60 per minute")
    @blp.arguments(QuoteRequestSchema)
    @blp.response(200, PriceBreakdownSchema)
    def post(self, data):
        """Price a basket

        Takes the checkout's body (the address needs only its `country`, and `region` where
        tax rates differ by region; no payment method) and answers the breakdown the order
        would get, computed by the same function: per line discount, tax and total, the
        totals, the tax by rate and the rules applied. Writes nothing. Public, for guests'
        baskets; a signed-in customer's once-per-customer codes are checked against their
        orders, and `shipping_address_id` names one of their saved addresses. Limited to 60
        requests a minute per client address.
        """
        return quoting.quote(
            data["items"],
            data.get("shipping_address"),
            data.get("shipping_method_id"),
            data.get("discount_code"),
            g.caller,
            shipping_address_id=data.get("shipping_address_id"),
        )
