"""Order edits before fulfilment (issue 41): the HTTP side of ``shop/checkout/editing.py``.

The rules (what may be edited, the pricing, the stock, the money, the invoices) are there and
in docs/orders.md, "Editing an order".
"""

from flask import g
from flask.views import MethodView
from marshmallow import Schema, ValidationError, fields, validate, validates_schema

from shop.api.common import WRITE_ONLY, Blueprint, readable
from shop.api.schemas import ActorSchema, OrderSchema
from shop.checkout import editing
from shop.http.decorators import require_permission
from shop.http.openapi import responds
from shop.orders import balance_link, edits

blp = Blueprint(
    "order_edits", __name__, url_prefix="/orders", description="Edits of an order before it ships."
)


class EditAddSchema(Schema):
    variant_id = fields.String(required=True, validate=validate.Length(min=1, max=64))
    quantity = fields.Integer(
        strict=True, required=True, validate=validate.Range(min=1, max=edits.MOST_UNITS)
    )


class EditRemoveSchema(Schema):
    line = fields.Integer(strict=True, required=True, validate=validate.Range(min=1))


class EditQuantitySchema(EditRemoveSchema):
    quantity = fields.Integer(
        strict=True, required=True, validate=validate.Range(min=1, max=edits.MOST_UNITS)
    )


def _list(schema, description: str):
    return fields.List(
        fields.Nested(schema),
        validate=validate.Length(max=edits.MOST_LINES),
        metadata={"description": description},
    )


class OrderEditRequestSchema(Schema):
    add = _list(EditAddSchema, "New lines: variants the order does not have yet.")
    remove = _list(EditRemoveSchema, "Lines to remove, by number (`items[].line`).")
    set_quantity = _list(EditQuantitySchema, "Lines whose quantity changes, by number.")
    note = fields.String(validate=validate.Length(max=edits.NOTE_LENGTH))
    discount_code = fields.String(
        allow_none=True,
        validate=validate.Length(max=64),
        metadata={
            "description": "Give `null` to remove the order's discount code (its use goes"
            " back); leave it out to keep the code. An edit cannot add or change a code."
        },
    )

    @validates_schema
    def _one_line_each(self, data, **_kwargs):
        numbers = [
            item["line"] for name in ("remove", "set_quantity") for item in data.get(name) or []
        ]
        if len(numbers) != len(set(numbers)):
            raise ValidationError("name each line once.", "set_quantity")


class EditHeadersSchema(Schema):
    idempotency_key = fields.String(
        data_key="Idempotency-Key",
        validate=validate.Length(min=1, max=255),
        metadata={
            "description": "Optional. A retry with the same key and body answers the same"
            " edit with 200 (and retries its card refund if Stripe could not be reached)."
        },
    )


class EditChangeSchema(Schema):
    kind = fields.String(
        required=True, metadata={"description": "`add`, `remove`, `set_quantity`."}
    )
    line = fields.Integer(required=True)
    variant_id = fields.String(required=True)
    from_ = fields.Integer(required=True, data_key="from")
    to = fields.Integer(required=True)


class EditTotalsSchema(Schema):
    subtotal_cents = fields.Integer(required=True)
    discount_cents = fields.Integer(required=True)
    shipping_cents = fields.Integer(required=True)
    tax_cents = fields.Integer(required=True)
    total_cents = fields.Integer(required=True)
    discount_code = fields.String(required=True, allow_none=True)


class EditRefundSchema(Schema):
    id = fields.String(required=True)
    amount_cents = fields.Integer(required=True)
    status = fields.String(required=True, metadata={"description": "As the refund's."})
    provider = fields.String(required=True)


class OrderEditSchema(Schema):
    id = fields.String(required=True)
    order_id = fields.String(required=True)
    changes = fields.List(fields.Nested(EditChangeSchema), required=True)
    note = fields.String(required=True, allow_none=True)
    before = fields.Nested(EditTotalsSchema, required=True)
    after = fields.Nested(EditTotalsSchema, required=True)
    refund = fields.Nested(
        EditRefundSchema,
        required=True,
        allow_none=True,
        metadata={"description": "The refund of the difference (a paid order edited down)."},
    )
    balance_due_cents = fields.Integer(
        required=True, metadata={"description": "What the order owed after this edit."}
    )
    created_at = fields.String(required=True)
    by = fields.Nested(ActorSchema, required=True, allow_none=True)


class OrderEditAnswerSchema(OrderEditSchema):
    order = fields.Nested(OrderSchema, required=True, metadata={"description": "As edited."})


class OrderEditListSchema(Schema):
    items = fields.List(fields.Nested(OrderEditSchema), required=True)


class EditPreviewSchema(EditTotalsSchema):
    refund_cents = fields.Integer(required=True)
    balance_due_cents = fields.Integer(required=True)
    changes = fields.List(fields.Nested(EditChangeSchema), required=True)


class BalanceSchema(Schema):
    note = fields.String(validate=validate.Length(max=500))


class BalanceLinkSchema(Schema):
    url = fields.String(
        required=True,
        metadata={
            "description": "The storefront's pay page of the balance (its token inside: give"
            " it to the customer only). A new link replaces the ones made before."
        },
    )
    balance_due_cents = fields.Integer(required=True)
    currency = fields.String(required=True)
    mailed = fields.Boolean(
        required=True,
        metadata={"description": "Whether it was mailed (false: the customer has no e-mail)."},
    )


def _request(data: dict) -> edits.EditRequest:
    values = {k: data[k] for k in ("add", "remove", "set_quantity", "note") if k in data}
    if "discount_code" in data:
        values["discount_code"] = data["discount_code"]
    return edits.EditRequest(**values)


@blp.route("/<id:order_id>/edits")
class OrderEdits(MethodView):
    @blp.doc(operationId="editOrder")
    @responds(
        409,
        503,
        e409="The order has shipped (in part), is cancelled or refunded, has refunds, waits"
        " for its card payment, a variant has too little stock (named), or the"
        " `Idempotency-Key` has another body.",
        e503="The edit is recorded but Stripe cannot be reached for its refund, which stays"
        " `pending`: retry with the same `Idempotency-Key`.",
    )
    @blp.arguments(EditHeadersSchema, location="headers")
    @blp.arguments(OrderEditRequestSchema)
    @blp.response(201, OrderEditAnswerSchema)
    @blp.alt_response(
        200, schema=OrderEditAnswerSchema, description="A replay: the first edit.", success=True
    )
    @blp.alt_response(204, description=WRITE_ONLY, success=True)
    @require_permission("orders.edit")
    def post(self, headers, data, order_id):
        """Edit an order before it ships

        `add` variants, `remove` lines and `set_quantity` of lines (by `items[].line`), and
        `discount_code: null` to remove the code. The new basket is priced as
        `POST /payments/quote` prices it (the order's address, shipping method and code: a code
        that no longer applies is a 400 naming it), the stock moves both ways at once (409
        naming a variant with too little). A paid order edited down is refunded the
        difference (Stripe or manual, once); edited up, it shows `balance_due_cents`. An
        invoiced order gets a credit note and a new invoice. `order.edited` is emitted. A
        caller without `orders.read` gets 204 and no body.
        """
        edit, created = editing.edit_order(
            order_id, _request(data), g.caller, headers.get("idempotency_key")
        )
        shown = readable("orders.read", edit)
        return shown if shown is not edit else (edit, 201 if created else 200)

    @blp.doc(operationId="listOrderEdits")
    @blp.response(200, OrderEditListSchema)
    @require_permission("orders.read")
    def get(self, order_id):
        """An order's edits, oldest first, each with its totals before and after"""
        editing.exists(order_id)
        return {"items": edits.of_order(order_id)}


@blp.route("/<id:order_id>/edits/preview")
class OrderEditPreview(MethodView):
    @blp.doc(operationId="previewOrderEdit")
    @responds(409, e409="The order cannot be edited now (as for the edit itself).")
    @blp.arguments(OrderEditRequestSchema)
    @blp.response(200, EditPreviewSchema)
    @require_permission("orders.edit")
    def post(self, data, order_id):
        """What an edit would make of the order's totals, writing nothing"""
        shown = editing.preview(order_id, _request(data))
        return readable("orders.read", shown)


@blp.route("/<id:order_id>/balance")
class OrderBalance(MethodView):
    @blp.doc(operationId="recordOrderBalance")
    @responds(409, e409="No balance is due, or the order is paid by card (its pay link).")
    @blp.arguments(BalanceSchema)
    @blp.response(200, OrderSchema)
    @blp.alt_response(204, description=WRITE_ONLY, success=True)
    @require_permission("orders.update_status")
    def post(self, data, order_id):
        """Record the balance an edit left due as received (manual payments)

        For an order paid by bank transfer or cash: the balance a person saw arrive. An
        order paid by card is a 409: its balance is paid by card with the pay link
        (`POST /orders/{id}/balance/link`).
        """
        return readable(
            "orders.read", editing.record_balance(order_id, data.get("note"), g.caller.actor)
        )


@blp.route("/<id:order_id>/balance/link")
class OrderBalanceLink(MethodView):
    @blp.doc(operationId="sendOrderBalanceLink")
    @responds(
        409,
        e409="No balance is due, the order's balance is recorded by hand (not a card order),"
        " or the shop's storefront is off.",
    )
    @blp.response(200, BalanceLinkSchema)
    @blp.alt_response(204, description=WRITE_ONLY, success=True)
    @require_permission("orders.update_status")
    def post(self, order_id):
        """Mail the customer a new pay link of a card order's balance

        The storefront's page of the link shows the order and its balance and takes the card
        (a PaymentIntent for the balance); once paid the balance is 0. Each call makes a new
        link (the ones before stop working) and mails it to the customer; the answer carries
        it for staff to pass on another way.
        """
        return readable("orders.read", balance_link.send(order_id, g.caller.actor))
