"""Carts (issue 38): a basket kept on the server, filled and completed by any visitor, with
or without an account. The rules are ``shop/carts/``; the walk through is docs/orders.md.

A cart's id is its key: whoever holds it reaches a guest's cart. A signed-in customer's cart
(made while signed in, or claimed) is theirs alone; anybody else gets the 404 of an unknown
cart. A completed cart is read-only (409).
"""

from flask import g
from flask.views import MethodView
from marshmallow import Schema, fields, validate

from shop.api.common import Blueprint, StrictBoolean
from shop.api.schemas import (
    MAX_QUANTITY,
    CheckoutItemSchema,
    OrderAddressSchema,
    OrderSchema,
    PriceBreakdownSchema,
    ShippingAddressSchema,
    payment_method_field,
)
from shop.carts import claiming, completing, present, store
from shop.http.context import current_actor
from shop.http.decorators import require_auth
from shop.http.errors import abort
from shop.http.extensions import limiter
from shop.http.openapi import enum_field, responds

blp = Blueprint("carts", __name__, url_prefix="/carts", description="Carts and guest checkout.")

# A cart's id as the URL carries it (``store.new_cart_id``: 43 URL-safe characters; any
# other is the 404 of an unknown cart, ``store.find``).
CART = "<string:cart_id>"
AVAILABILITY = ("in_stock", "only_n_left", "unavailable")


class AvailabilitySchema(Schema):
    status = enum_field(
        "AvailabilityStatus",
        AVAILABILITY,
        required=True,
        metadata={
            "description": "`in_stock`; `only_n_left`: fewer units left than the line asks"
            " for; `unavailable`: out of stock or no longer for sale (left out of the totals"
            " when no longer for sale)."
        },
    )
    available_quantity = fields.Integer(
        required=True,
        allow_none=True,
        metadata={"description": "The units left, when fewer than the line asks for."},
    )


class CartLineSchema(Schema):
    id = fields.String(required=True)
    product_id = fields.String(required=True)
    variant_id = fields.String(required=True)
    name = fields.String(required=True)
    sku = fields.String(required=True, allow_none=True)
    options = fields.Dict(keys=fields.String(), values=fields.String(), required=True)
    unit_price_cents = fields.Integer(required=True)
    quantity = fields.Integer(required=True)
    line_total_cents = fields.Integer(required=True)
    availability = fields.Nested(AvailabilitySchema, required=True)


class CartSchema(Schema):
    id = fields.String(
        required=True,
        metadata={
            "description": "The cart's key: keep it (a guest's cart is anybody's who has it)."
        },
    )
    status = enum_field("CartStatus", ("open", "completed"), required=True)
    customer_id = fields.String(
        required=True, allow_none=True, metadata={"description": "null for a guest's cart."}
    )
    email = fields.String(required=True, allow_none=True)
    shipping_address = fields.Nested(OrderAddressSchema, required=True, allow_none=True)
    shipping_method_id = fields.String(required=True, allow_none=True)
    discount_code = fields.String(required=True, allow_none=True)
    note = fields.String(required=True, allow_none=True)
    reminders = fields.Boolean(
        required=True,
        metadata={"description": "The visitor agreed to one reminder e-mail if they leave it."},
    )
    lines = fields.List(fields.Nested(CartLineSchema), required=True)
    item_count = fields.Integer(required=True)
    subtotal_cents = fields.Integer(
        required=True, metadata={"description": "The lines for sale, before discount and tax."}
    )
    currency = fields.String(required=True)
    totals = fields.Nested(
        PriceBreakdownSchema,
        required=True,
        allow_none=True,
        metadata={
            "description": "The breakdown `POST /payments/quote` gives for the same basket,"
            " address, method and code (the same function); null without a shipping address"
            " or lines, or when the quote refuses the basket (see `problems`)."
        },
    )
    problems = fields.List(
        fields.String(),
        required=True,
        metadata={"description": "What stops pricing or completing the cart, field first."},
    )
    order_id = fields.String(required=True, allow_none=True)
    created_at = fields.String(required=True)
    updated_at = fields.String(required=True)


class CartLineCreateSchema(CheckoutItemSchema):
    """A variant (or a one-variant product) and how many to add."""


class CartLineUpdateSchema(Schema):
    quantity = fields.Integer(
        strict=True, required=True, validate=validate.Range(min=1, max=MAX_QUANTITY)
    )


class CartUpdateSchema(Schema):
    email = fields.Email(allow_none=True, validate=validate.Length(max=320))
    shipping_address = fields.Nested(ShippingAddressSchema, allow_none=True)
    shipping_address_id = fields.String(
        validate=validate.Length(min=1, max=64),
        metadata={
            "description": "One of the signed-in customer's saved addresses"
            " (`/auth/me/addresses`), instead of `shipping_address`: the cart keeps a copy."
        },
    )
    shipping_method_id = fields.String(allow_none=True, validate=validate.Length(min=1, max=64))
    discount_code = fields.String(allow_none=True, validate=validate.Length(min=1, max=100))
    note = fields.String(allow_none=True, validate=validate.Length(max=1000))
    reminders = StrictBoolean(
        metadata={
            "description": "The visitor agrees to one reminder e-mail if they leave the cart"
            " (sent only when the shop's `cart_reminders` setting is on)."
        }
    )


class CartCompleteSchema(Schema):
    payment_method = payment_method_field()


class CompletedCartSchema(Schema):
    order = fields.Nested(OrderSchema, required=True)
    order_token = fields.String(
        required=True,
        allow_none=True,
        metadata={
            "description": "A guest's order only, in the first answer only: read the order"
            " with `GET /orders/{id}?token=...` (and cancel it while pending). Shown once;"
            " only its hash is kept."
        },
    )


def _holder() -> store.Holder:
    """Who reaches carts in this request: the signed-in customer, or anyone with the id."""
    caller = g.caller
    return store.Holder(caller.id if caller is not None and caller.kind == "customer" else None)


def _customer():
    """The signed-in customer's Caller, or None."""
    caller = g.caller
    return caller if caller is not None and caller.kind == "customer" else None


def _shown(cart_id: str) -> dict:
    row, lines = store.find_with_lines(cart_id, _holder())
    return present.present(row, _customer(), rows=lines)


def _present(row: dict) -> dict:
    """The cart ``row`` (``store.find``'s, or a change's answer) as this caller sees it."""
    return present.present(row, _customer())


@blp.route("")
class Carts(MethodView):
    @blp.doc(operationId="createCart")
    @limiter.limit("20 per minute")
    @blp.response(201, CartSchema)
    def post(self):
        """Start a cart

        Anybody may: a guest's cart is reached by its `id` alone (256 random bits: keep it
        as you would a password); a signed-in customer's cart is theirs, a 404 to anybody
        else. Limited to 20 carts a minute per client address.
        """
        return _shown(store.create(_holder()))


@blp.route(f"/{CART}")
class CartById(MethodView):
    @blp.doc(operationId="getCart")
    @blp.response(200, CartSchema)
    def get(self, cart_id):
        """One cart

        Its lines with their availability, and its totals from the quote's function.
        """
        return _shown(cart_id)

    @blp.doc(operationId="updateCart")
    @responds(409, e409="The cart is completed.")
    @blp.arguments(CartUpdateSchema)
    @blp.response(200, CartSchema)
    def patch(self, data, cart_id):
        """Change a cart's details

        Only the fields sent change; `null` clears one. The cart is priced as it then
        stands, as `POST /payments/quote` would: a code that cannot be used or a method
        that does not ship to the address is a 400 naming the field, and nothing changes.
        A guest cannot use a once-per-customer code (sign in to use it).
        `shipping_address_id` takes one of the signed-in customer's saved addresses (a 400
        naming it for a guest or another's address); give it or `shipping_address`, not both.
        """
        if "shipping_address" in data and "shipping_address_id" in data:
            abort(400, "shipping_address, shipping_address_id: give one of them, not both.")
        if not data:
            abort(400, "Send at least one of: " + ", ".join(store.DETAILS) + ".")
        store.update(cart_id, _holder(), data, present.check(_customer()))
        return _shown(cart_id)


@blp.route(f"/{CART}/lines")
class CartLines(MethodView):
    @blp.doc(operationId="addCartLine")
    @responds(
        409,
        e409="Fewer units left than asked (the message says how many), or the cart is completed.",
    )
    @blp.arguments(CartLineCreateSchema)
    @blp.response(201, CartSchema)
    def post(self, data, cart_id):
        """Add a line to a cart

        A `variant_id`, or a `product_id` with one variant. The same variant again adds to
        its line. Answers the whole cart.
        """
        return _present(store.add_line(cart_id, _holder(), data))


@blp.route(f"/{CART}/lines/<id:line_id>")
class CartLine(MethodView):
    @blp.doc(operationId="updateCartLine")
    @responds(409, e409="Fewer units left than asked, or the cart is completed.")
    @blp.arguments(CartLineUpdateSchema)
    @blp.response(200, CartSchema)
    def patch(self, data, cart_id, line_id):
        """Change a line's quantity"""
        return _present(store.change_line(cart_id, _holder(), line_id, data["quantity"]))

    @blp.doc(operationId="deleteCartLine")
    @responds(409, e409="The cart is completed.")
    @blp.response(200, CartSchema)
    def delete(self, cart_id, line_id):
        """Remove a line

        Answers the cart as it now stands.
        """
        return _present(store.remove_line(cart_id, _holder(), line_id))


@blp.route(f"/{CART}/claim")
class CartClaim(MethodView):
    @blp.doc(operationId="claimCart")
    @responds(409, e409="The cart is completed.")
    @blp.response(200, CartSchema)
    @require_auth("customer")
    def post(self, cart_id):
        """Take a guest cart after signing in

        The cart becomes the signed-in customer's (a 404 to anybody else from then on), and
        their other open carts are merged into it and deleted: a variant in both gets one
        line, the quantities summed and capped at its stock. Details the cart lacks come
        from the merged carts. Call it right after `POST /auth/login` or `/auth/register`.
        """
        claiming.claim(cart_id, g.caller.id)
        return _shown(cart_id)


@blp.route(f"/{CART}/complete")
class CartComplete(MethodView):
    @blp.doc(operationId="completeCart")
    @responds(
        409,
        503,
        e409="Too little stock (the message names the product), the cart changed while it"
        " was being completed, or (`stripe`) Stripe refused the PaymentIntent.",
        e503="(`stripe`) Stripe cannot be reached now; the order stays `pending`.",
    )
    @limiter.limit("10 per minute")
    @blp.arguments(CartCompleteSchema)
    @blp.response(201, CompletedCartSchema)
    @blp.alt_response(
        200,
        schema=CompletedCartSchema,
        description="The cart was completed before: the same order, and `order_token` null.",
        success=True,
    )
    def post(self, data, cart_id):
        """Complete a cart: place its order

        Places the order as `POST /payments/checkout` does (the same use case): the stock
        is taken (never oversold), the order priced by the quote's function, all in one
        transaction, and the cart becomes read-only. A guest's order belongs to the cart's
        `email` (required) and comes with an `order_token`, shown once, which reads it
        (`GET /orders/{id}?token=...`); the confirmation mail carries the link. A signed-in
        customer's order is theirs. Completing again answers 200 with the same order and
        `order_token` null. Limited to 10 requests a minute per client address.
        """
        command = completing.CompleteCart(cart_id, data["payment_method"])
        order, token, created = completing.complete(
            command, _holder(), _customer(), current_actor()
        )
        return {"order": order, "order_token": token}, 201 if created else 200
