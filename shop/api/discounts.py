"""Discount codes (issue 26): one code per order, checked and counted by the checkout.

``discounts.*`` permissions, ``read:discount`` / ``write:discount``. A code is ASCII
letters, digits, '-' and '_', unique and looked up without regard to case ("SAVE10" is
"save10"; ``discounts.code_key``, the one form). ``times_used`` counts the orders
holding a use (a cancelled order gives its use back); the checkout takes it in its own
transaction (``discounts/codes.py``), so ``usage_limit`` and ``once_per_customer`` hold
under concurrency.
"""

import json
from decimal import Decimal, InvalidOperation

from flask.views import MethodView
from marshmallow import Schema, ValidationError, fields, validate

from shop import audit, db
from shop.api.common import (
    Blueprint,
    ChangedSinceQuerySchema,
    StrictBoolean,
    Where,
    changed_since,
    page_schema,
    paginate,
)
from shop.clock import iso, now_iso
from shop.discounts import codes as discounts
from shop.http.context import current_actor
from shop.http.decorators import require_permission
from shop.http.errors import abort
from shop.http.openapi import DateOrDateTime, enum_field, responds

blp = Blueprint("discounts", __name__, url_prefix="/discounts", description="Discount codes.")

KINDS = ("percent", "fixed", "free_shipping")
_TAKEN = "This code exists (codes ignore case)."
_IDS = fields.List(
    fields.String(validate=validate.Length(min=1, max=64)), validate=validate.Length(max=500)
)


class ValueField(fields.String):
    """``value``: a decimal string (percent) or whole minor units (fixed); a JSON number of
    minor units is taken too."""

    def _deserialize(self, value, attr, data, **kwargs):
        if isinstance(value, int) and not isinstance(value, bool):
            value = str(value)
        return super()._deserialize(value, attr, data, **kwargs)


class DiscountSchema(Schema):
    id = fields.String(required=True)
    code = fields.String(required=True)
    kind = enum_field("DiscountKind", KINDS, required=True)
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


def _code(text: str) -> None:
    if not discounts.is_code(text):
        raise ValidationError(f"Use {discounts.CODE_RULE}.")


_CODE = {"validate": _code, "metadata": {"pattern": discounts.CODE_PATTERN}}


class DiscountUpdateSchema(Schema):
    code = fields.String(**_CODE)
    kind = enum_field("DiscountKind", KINDS)
    value = ValueField(
        metadata={
            "description": "`percent`: a decimal string from 0 to 100 (`12.5`); `fixed`: whole"
            " minor units (`500` is 5.00 EUR); `free_shipping`: ignored (`0`)."
        }
    )
    min_subtotal_cents = fields.Integer(
        strict=True, allow_none=True, validate=validate.Range(min=0, max=10**12)
    )
    starts_at = DateOrDateTime(allow_none=True)
    ends_at = DateOrDateTime(allow_none=True)
    usage_limit = fields.Integer(
        strict=True, allow_none=True, validate=validate.Range(min=1, max=10**12)
    )
    once_per_customer = StrictBoolean()
    product_ids = _IDS
    category_ids = _IDS
    active = StrictBoolean()


class DiscountCreateSchema(DiscountUpdateSchema):
    code = fields.String(required=True, **_CODE)
    kind = enum_field("DiscountKind", KINDS, required=True)


def _check_value(kind: str, value: str | None) -> str:
    """The stored value for ``kind``, or a 400."""
    if kind == "free_shipping":
        return "0"
    try:
        number = Decimal(value) if value is not None else None
    except InvalidOperation:
        number = None
    if number is not None and not number.is_finite():  # NaN, sNaN, Infinity
        number = None
    if kind == "percent":
        if number is None or not 0 < number <= 100:
            abort(400, "value: a percent discount takes a decimal string above 0, up to 100.")
        return format(number.normalize(), "f")
    if number is None or number != number.to_integral_value() or not 0 < number <= 10**12:
        abort(400, "value: a fixed discount takes whole minor units above 0 (500 is 5.00).")
    return str(int(number))


def _values(data: dict) -> dict:
    starts, ends = data.get("starts_at"), data.get("ends_at")
    starts = iso(starts) if starts is not None and not isinstance(starts, str) else starts
    ends = iso(ends) if ends is not None and not isinstance(ends, str) else ends
    if starts and ends and ends <= starts:
        abort(400, "ends_at: must be after starts_at.")
    key = discounts.code_key(data["code"])
    if key is None:  # a code stored by hand, outside the API: it must change to be kept
        abort(400, f"code: use {discounts.CODE_RULE}.")
    return {
        "code": data["code"],
        "code_key": key,
        "kind": data["kind"],
        "value": _check_value(data["kind"], data.get("value")),
        "min_subtotal_cents": data.get("min_subtotal_cents"),
        "starts_at": starts,
        "ends_at": ends,
        "usage_limit": data.get("usage_limit"),
        "once_per_customer": int(bool(data.get("once_per_customer", False))),
        "product_ids": json.dumps(data.get("product_ids") or []),
        "category_ids": json.dumps(data.get("category_ids") or []),
        "active": int(data.get("active", True)),
    }


def _get(discount_id: str) -> dict:
    discount = discounts.load(discount_id)
    if discount is None:
        abort(404, "Discount not found.")
    return discount


def _check_code_free(values: dict, discount_id: str) -> None:
    taken = db.value(
        "SELECT id FROM discounts WHERE code_key = :code_key AND id <> :id",
        {"code_key": values["code_key"], "id": discount_id},
    )
    if taken:
        abort(409, _TAKEN)


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
    @responds(409, e409=_TAKEN)
    @blp.arguments(DiscountCreateSchema)
    @blp.response(201, DiscountSchema)
    @require_permission("discounts.create")
    def post(self, data):
        """Create a discount code"""
        discount_id, moment = db.new_id(), now_iso()
        values = _values(data)
        with db.transaction():
            db.lock("discounts")
            _check_code_free(values, discount_id)
            db.execute(
                "INSERT INTO discounts (id, code, code_key, kind, value, min_subtotal_cents,"
                " starts_at, ends_at, usage_limit, once_per_customer, product_ids,"
                " category_ids, active, times_used, created_at, updated_at) VALUES (:id, :code,"
                " :code_key, :kind, :value, :min_subtotal_cents, :starts_at, :ends_at,"
                " :usage_limit, :once_per_customer, :product_ids, :category_ids, :active, 0,"
                " :now, :now)",
                {**values, "id": discount_id, "now": moment},
            )
            audit.record(
                "discount.created",
                {"discount_id": discount_id, "code": data["code"]},
                actor=current_actor(),
            )
        return _get(discount_id)


@blp.route("/<id:discount_id>")
class DiscountById(MethodView):
    @blp.doc(operationId="getDiscount")
    @blp.response(200, DiscountSchema)
    @require_permission("discounts.read")
    def get(self, discount_id):
        """One discount code"""
        return _get(discount_id)

    @blp.doc(operationId="updateDiscount")
    @responds(409, e409=_TAKEN)
    @blp.arguments(DiscountUpdateSchema)
    @blp.response(200, DiscountSchema)
    @require_permission("discounts.update")
    def patch(self, data, discount_id):
        """Change a discount code

        Only the fields given change; `null` clears an optional one. `times_used` is the
        shop's count and cannot be set. Orders placed keep the discount they got.
        """
        with db.transaction():
            db.lock("discounts")
            values = _values({**_get(discount_id), **data})
            _check_code_free(values, discount_id)
            db.execute(
                "UPDATE discounts SET code = :code, code_key = :code_key, kind = :kind,"
                " value = :value, min_subtotal_cents = :min_subtotal_cents,"
                " starts_at = :starts_at, ends_at = :ends_at, usage_limit = :usage_limit,"
                " once_per_customer = :once_per_customer, product_ids = :product_ids,"
                " category_ids = :category_ids, active = :active, updated_at = :now"
                " WHERE id = :id",
                {**values, "id": discount_id, "now": now_iso()},
            )
            audit.record(
                "discount.updated",
                {"discount_id": discount_id, "code": values["code"]},
                actor=current_actor(),
            )
        return _get(discount_id)

    @blp.doc(operationId="deleteDiscount")
    @blp.response(204)
    @require_permission("discounts.delete")
    def delete(self, discount_id):
        """Delete a discount code

        Orders that used it keep the code and the amount they got.
        """
        with db.transaction():
            row = _get(discount_id)
            db.execute("DELETE FROM discounts WHERE id = :id", {"id": discount_id})
            audit.record(
                "discount.deleted",
                {"discount_id": discount_id, "code": row["code"]},
                actor=current_actor(),
            )
