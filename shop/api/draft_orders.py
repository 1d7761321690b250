"""Draft orders (issue 41): staff create an order for a customer, priced like a quote and
taking no stock until it is completed. The rules are ``shop/drafts/``; the walk through is
docs/draft-orders.md.

``draft_orders.*`` permissions, scopes ``read:draft_order`` / ``write:draft_order``;
completing and sending need ``draft_orders.update``. A completed draft is read-only (409).
"""

from flask.views import MethodView
from marshmallow import Schema, fields

from shop.api.common import (
    Blueprint,
    ChangedSinceQuerySchema,
    Where,
    changed_since,
    page_schema,
    paginate,
)
from shop.api.schemas import (
    OrderAddressSchema,
    OrderSchema,
    PriceBreakdownSchema,
    payment_method_field,
)
from shop.api.store_input import DraftOrderCreateSchema, DraftOrderUpdateSchema
from shop.drafts import completing, sending, store
from shop.http.context import current_actor
from shop.http.decorators import require_permission
from shop.http.openapi import enum_field, responds

blp = Blueprint("draft_orders", __name__, url_prefix="/draft-orders", description="Draft orders.")

STATUSES = ("open", "completed")
READ_ONLY = "The draft order is completed: it is read-only."


class DraftLineSchema(Schema):
    line = fields.Integer(required=True)
    product_id = fields.String(required=True)
    variant_id = fields.String(required=True)
    name = fields.String(required=True)
    sku = fields.String(required=True, allow_none=True)
    options = fields.Dict(keys=fields.String(), values=fields.String(), required=True)
    unit_price_cents = fields.Integer(required=True, metadata={"description": "Today's price."})
    quantity = fields.Integer(required=True)
    for_sale = fields.Boolean(required=True)


class DraftOrderSchema(Schema):
    id = fields.String(required=True)
    status = enum_field("DraftOrderStatus", STATUSES, required=True)
    customer_id = fields.String(
        required=True,
        allow_none=True,
        metadata={"description": "null for a draft made for an e-mail without an account."},
    )
    email = fields.String(
        required=True, allow_none=True, metadata={"description": "Where `send` mails the link."}
    )
    customer_name = fields.String(required=True, allow_none=True)
    shipping_address = fields.Nested(OrderAddressSchema, required=True)
    shipping_method_id = fields.String(required=True, allow_none=True)
    discount_code = fields.String(required=True, allow_none=True)
    note = fields.String(required=True, allow_none=True)
    credit_cents = fields.Integer(
        required=True,
        metadata={
            "description": "Value the customer has already given (an exchange's returned"
            " goods): counted as paid when the order is made."
        },
    )
    credit_note = fields.String(required=True, allow_none=True)
    lines = fields.List(fields.Nested(DraftLineSchema), required=True)
    currency = fields.String(required=True)
    totals = fields.Nested(
        PriceBreakdownSchema,
        required=True,
        allow_none=True,
        metadata={
            "description": "`POST /payments/quote`'s answer for the same basket, address,"
            " method and code (the same function); null when the quote refuses it now (see"
            " `problems`), and once completed (the order has its own)."
        },
    )
    problems = fields.List(fields.String(), required=True)
    amount_due_cents = fields.Integer(
        required=True,
        allow_none=True,
        metadata={"description": "`totals.total_cents` less `credit_cents` (not below 0)."},
    )
    sent_at = fields.String(required=True, allow_none=True)
    order_id = fields.String(required=True, allow_none=True)
    created_at = fields.String(required=True)
    updated_at = fields.String(required=True)


class DraftCompleteSchema(Schema):
    payment_method = payment_method_field()


class CompletedDraftSchema(Schema):
    order = fields.Nested(OrderSchema, required=True)
    draft_order = fields.Nested(DraftOrderSchema, required=True)


class DraftListQuerySchema(ChangedSinceQuerySchema):
    status = enum_field("DraftOrderStatus", STATUSES)


@blp.route("")
class DraftOrders(MethodView):
    @blp.doc(operationId="listDraftOrders")
    @blp.arguments(DraftListQuerySchema, location="query")
    @blp.response(200, page_schema(DraftOrderSchema))
    @require_permission("draft_orders.read")
    def get(self, args):
        """List draft orders, newest first"""
        where = Where()
        if "status" in args:
            where.add("d.status = :status", status=args["status"])
        order = changed_since(where, args, "d.") or " ORDER BY d.created_at DESC, d.id DESC"
        page = paginate(store.SELECT, "draft_orders d", where, order, args)
        page["items"] = [store.present(row) for row in page["items"]]
        return page

    @blp.doc(operationId="createDraftOrder")
    @blp.arguments(DraftOrderCreateSchema)
    @blp.response(201, DraftOrderSchema)
    @require_permission("draft_orders.create")
    def post(self, data):
        """Create a draft order

        For an existing customer (`customer_id`) or an e-mail without an account (`email`).
        Priced as `POST /payments/quote` prices the same basket (the same function); a
        refusal is a 400 naming the field and nothing is written. Takes no stock: the stock
        is taken when the draft is completed.
        """
        return store.create(data, current_actor()), 201


@blp.route("/<id:draft_id>")
class DraftOrderById(MethodView):
    @blp.doc(operationId="getDraftOrder")
    @blp.response(200, DraftOrderSchema)
    @require_permission("draft_orders.read")
    def get(self, draft_id):
        """One draft order, priced as it stands"""
        return store.get(draft_id)

    @blp.doc(operationId="updateDraftOrder")
    @responds(409, e409=READ_ONLY)
    @blp.arguments(DraftOrderUpdateSchema)
    @blp.response(200, DraftOrderSchema)
    @require_permission("draft_orders.update")
    def patch(self, data, draft_id):
        """Change a draft order

        Only the fields sent change (`null` clears an optional one); `items` replaces every
        line. Priced as it then stands: a refusal is a 400 naming the field, nothing changes.
        """
        if not data:
            return store.get(draft_id)
        return store.update(draft_id, data, current_actor())

    @blp.doc(operationId="deleteDraftOrder")
    @responds(409, e409=READ_ONLY)
    @blp.response(204)
    @require_permission("draft_orders.delete")
    def delete(self, draft_id):
        """Delete a draft order (a completed one is kept: 409)"""
        store.delete(draft_id, current_actor())


@blp.route("/<id:draft_id>/complete")
class DraftOrderComplete(MethodView):
    @blp.doc(operationId="completeDraftOrder")
    @responds(
        409,
        503,
        e409="Too little stock (the message names the variant), or the draft changed meanwhile.",
        e503="(`stripe`) Stripe cannot be reached now; the order stays `pending`.",
    )
    @blp.arguments(DraftCompleteSchema)
    @blp.response(201, CompletedDraftSchema)
    @blp.alt_response(
        200,
        schema=CompletedDraftSchema,
        description="Completed before: the order it made.",
        success=True,
    )
    @require_permission("draft_orders.update")
    def post(self, data, draft_id):
        """Make the draft's order

        Through the checkout's own placing: the stock is taken now (too little is a 409
        naming it, nothing written), the order priced by the quote's function, the draft
        marked completed in the same transaction. Completing again answers the same order
        (200). The draft's credit counts as paid: the payment asks for the total less it,
        and an order the credit covers is `paid` at once.
        """
        order, draft, created = completing.complete(
            draft_id, data["payment_method"], current_actor()
        )
        return {"order": order, "draft_order": draft}, 201 if created else 200


@blp.route("/<id:draft_id>/send")
class DraftOrderSend(MethodView):
    @blp.doc(operationId="sendDraftOrder")
    @responds(409, e409="Completed, not priceable now, or the shop's storefront is off.")
    @blp.response(200, DraftOrderSchema)
    @require_permission("draft_orders.update")
    def post(self, draft_id):
        """Mail the customer a link to pay it

        The link opens the storefront's page of the draft (`/store/drafts/{token}`), where
        the customer pays it by card, which completes it. Each send makes a new link; the
        ones sent before stop working. The token is in the mail only.
        """
        return sending.send(draft_id, current_actor())
