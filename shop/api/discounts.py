"""Discount codes (issue 26): one code per order, checked and counted by the checkout.

``discounts.*`` permissions, ``read:discount`` / ``write:discount``. A code is ASCII
letters, digits, '-' and '_', unique and looked up without regard to case ("SAVE10" is
"save10"; ``discounts.code_key``, the one form). ``times_used`` counts the orders
holding a use (a cancelled order gives its use back); the checkout takes it in its own
transaction (``discounts/codes.py``), so ``usage_limit`` and ``once_per_customer`` hold
under concurrency. The rules of writing a code are ``discounts/store.py``'s.
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
from shop.api.store_input import DiscountCreateSchema, DiscountUpdateSchema
from shop.discounts import codes as discounts
from shop.discounts import store as discount_store
from shop.http.context import current_actor
from shop.http.decorators import require_permission
from shop.http.openapi import enum_field, responds

blp = Blueprint("discounts", __name__, url_prefix="/discounts", description="Discount codes.")


class DiscountSchema(Schema):
    id = fields.String(required=True)
    code = fields.String(required=True)
    kind = enum_field("DiscountKind", discount_store.KINDS, required=True)
    value = fields.String(required=True)
    min_subtotal_cents = fields.Integer(required=True, allow_none=True)
    starts_at = fields.String(required=True, allow_none=True)
    ends_at = fields.String(required=True, allow_none=True)
    usage_limit = fields.Integer(required=True, allow_none=True)
    once_per_customer = fields.Boolean(required=True)
    product_ids = fields.List(fields.String(), required=True)
    category_ids = fields.List(fields.String(), required=True)
    active = fields.Boolean(required=True)
    times_used = fields.Integer(required=True, metadata={"description": "Read-only."})
    created_at = fields.String(required=True)
    updated_at = fields.String(required=True)


@blp.route("")
class Discounts(MethodView):
    @blp.doc(operationId="listDiscounts")
    @blp.arguments(ChangedSinceQuerySchema, location="query")
    @blp.response(200, page_schema(DiscountSchema))
    @require_permission("discounts.read")
    def get(self, args):
        """List discount codes, newest first"""
        where = Where()
        order = changed_since(where, args) or " ORDER BY created_at DESC, id DESC"
        sql = f"SELECT {discounts.COLUMNS} FROM discounts"
        page = paginate(sql, "discounts", where, order, args)
        page["items"] = [discounts.from_row(row) for row in page["items"]]
        return page

    @blp.doc(operationId="createDiscount")
    @responds(409, e409=discount_store.TAKEN)
    @blp.arguments(DiscountCreateSchema)
    @blp.response(201, DiscountSchema)
    @require_permission("discounts.create")
    def post(self, data):
        """Create a discount code"""
        return discount_store.create(data, current_actor())


@blp.route("/<id:discount_id>")
class DiscountById(MethodView):
    @blp.doc(operationId="getDiscount")
    @blp.response(200, DiscountSchema)
    @require_permission("discounts.read")
    def get(self, discount_id):
        """One discount code"""
        return discount_store.get(discount_id)

    @blp.doc(operationId="updateDiscount")
    @responds(409, e409=discount_store.TAKEN)
    @blp.arguments(DiscountUpdateSchema)
    @blp.response(200, DiscountSchema)
    @require_permission("discounts.update")
    def patch(self, data, discount_id):
        """Change a discount code

        Only the fields given change; `null` clears an optional one. `times_used` is the
        shop's count and cannot be set. Orders placed keep the discount they got.
        """
        return discount_store.update(discount_id, data, current_actor())

    @blp.doc(operationId="deleteDiscount")
    @blp.response(204)
    @require_permission("discounts.delete")
    def delete(self, discount_id):
        """Delete a discount code

        Orders that used it keep the code and the amount they got.
        """
        discount_store.delete(discount_id, current_actor())
