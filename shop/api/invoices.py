"""Invoices and credit notes (issue 40): the PDFs of an order's documents, and the
accountant's list and export. The rules are ``shop/invoices/``; docs/invoicing.md says how
a shop uses them."""

from datetime import UTC, datetime

from flask import Response, g
from flask.views import MethodView
from marshmallow import Schema, fields, validate

from shop.api.common import Blueprint, CreatedSinceQuerySchema, Where, page_schema, paginate
from shop.clock import iso
from shop.http.decorators import ADMIN_COOKIE, BEARER, CUSTOMER_COOKIE, require_permission
from shop.http.openapi import DateOrDateTime, responds
from shop.invoices import downloads, ledger

blp = Blueprint(
    "invoices", __name__, description="Invoices and credit notes: PDFs, the list and export."
)

_PDF = {
    "description": "The PDF, drawn once from the document as issued and kept (the same bytes"
    " every time).",
    "content": {"application/pdf": {"schema": {"type": "string", "format": "binary"}}},
}
# Staff, the order's customer, or a guest with the order's token (no sign-in).
_READERS = [ADMIN_COOKIE, CUSTOMER_COOKIE, BEARER, {}]


class DocumentQuerySchema(Schema):
    token = fields.String(
        validate=validate.Length(min=1, max=200),
        metadata={"description": "A guest order's token (a guest has no account to sign in)."},
    )


class InvoiceQuerySchema(CreatedSinceQuerySchema):
    issued_from = DateOrDateTime(
        metadata={"description": "Issued at or after this ISO 8601 date or date-time (UTC)."}
    )
    issued_before = DateOrDateTime(
        metadata={"description": "Issued before this ISO 8601 date or date-time (UTC)."}
    )


class InvoiceExportQuerySchema(Schema):
    issued_from = DateOrDateTime(
        metadata={"description": "Issued at or after this ISO 8601 date or date-time (UTC)."}
    )
    issued_before = DateOrDateTime(
        metadata={"description": "Issued before this ISO 8601 date or date-time (UTC)."}
    )


class InvoiceCustomerSchema(Schema):
    id = fields.String(required=True, allow_none=True)
    name = fields.String(required=True, allow_none=True)
    email = fields.String(required=True, allow_none=True)


class RateTotalSchema(Schema):
    rate = fields.String(required=True, allow_none=True, metadata={"description": "Percent."})
    name = fields.String(required=True, allow_none=True)
    net_cents = fields.Integer(required=True)
    tax_cents = fields.Integer(required=True)
    gross_cents = fields.Integer(required=True)


class InvoiceSchema(Schema):
    id = fields.String(required=True)
    number = fields.String(required=True)
    order_id = fields.String(required=True)
    order_number = fields.String(required=True)
    issued_at = fields.String(required=True)
    customer = fields.Nested(InvoiceCustomerSchema, required=True)
    currency = fields.String(required=True)
    net_cents = fields.Integer(required=True)
    tax_cents = fields.Integer(required=True)
    total_cents = fields.Integer(required=True)
    tax_by_rate = fields.List(fields.Nested(RateTotalSchema), required=True)


class OrderCreditNoteSchema(Schema):
    id = fields.String(required=True)
    number = fields.String(required=True)
    issued_at = fields.String(required=True)
    invoice_number = fields.String(
        required=True, metadata={"description": "The invoice it credits."}
    )
    currency = fields.String(required=True)
    net_cents = fields.Integer(required=True)
    tax_cents = fields.Integer(required=True)
    total_cents = fields.Integer(
        required=True, metadata={"description": "What it credits, tax included (positive)."}
    )
    refund_id = fields.String(
        required=True,
        allow_none=True,
        metadata={"description": "The refund that issued it, or null for an edit's."},
    )
    edit_id = fields.String(
        required=True,
        allow_none=True,
        metadata={
            "description": "The order edit that issued it (crediting the invoice in full), or"
            " null for a refund's."
        },
    )
    reason = fields.String(required=True, allow_none=True)


class OrderCreditNoteListSchema(Schema):
    items = fields.List(fields.Nested(OrderCreditNoteSchema), required=True)


class OrderInvoiceSchema(Schema):
    id = fields.String(required=True)
    number = fields.String(required=True)
    issued_at = fields.String(required=True)
    current = fields.Boolean(
        required=True,
        metadata={"description": "The order's invoice now (`GET /orders/{id}/invoice`)."},
    )
    superseded_at = fields.String(
        required=True,
        allow_none=True,
        metadata={"description": "When an edit credited it and issued the next, or null."},
    )
    currency = fields.String(required=True)
    net_cents = fields.Integer(required=True)
    tax_cents = fields.Integer(required=True)
    total_cents = fields.Integer(required=True)


class OrderInvoiceListSchema(Schema):
    items = fields.List(fields.Nested(OrderInvoiceSchema), required=True)


def _pdf(number: str, body: bytes) -> Response:
    return Response(
        body,
        mimetype="application/pdf",
        headers={
            "Content-Disposition": f'attachment; filename="{number}.pdf"',
            "Cache-Control": "private, no-store",
        },
    )


def _period(args: dict) -> tuple:
    start, end = args.get("issued_from"), args.get("issued_before")
    return (iso(start) if start else None), (iso(end) if end else None)


@blp.route("/orders/<id:order_id>/invoice")
class OrderInvoice(MethodView):
    @blp.doc(operationId="getOrderInvoice", security=_READERS, responses={"200": _PDF})
    @responds(
        401,
        404,
        409,
        e404="No such order, or not yours.",
        e409="The order has no invoice yet (not paid, or not shipped when the shop invoices"
        " at the first shipment).",
    )
    @blp.arguments(DocumentQuerySchema, location="query")
    def get(self, args, order_id):
        """An order's invoice (PDF)

        Public. A guest gives the order's `token`; staff need `orders.read` (scope
        `read:order`); a customer reads their own orders only. Drawn once from the invoice
        as issued and kept: changes of the shop's settings or products since do not change it.
        """
        return _pdf(*downloads.invoice_pdf(order_id, g.caller, args.get("token")))


@blp.route("/orders/<id:order_id>/refunds/<id:refund_id>/credit-note")
class RefundCreditNote(MethodView):
    @blp.doc(operationId="getRefundCreditNote", security=_READERS, responses={"200": _PDF})
    @responds(
        401,
        404,
        409,
        e404="No such order or refund, or not yours.",
        e409="The refund has no credit note: it has not succeeded, or gave no money back.",
    )
    @blp.arguments(DocumentQuerySchema, location="query")
    def get(self, args, order_id, refund_id):
        """A refund's credit note (PDF)

        Public. A guest gives the order's `token`; staff need `orders.read` (scope
        `read:order`); a customer reads their own orders only. Each refund that gives money
        back issues one, referring to the order's invoice, with the refunded amount's tax by
        rate.
        """
        pdf = downloads.credit_note_pdf(order_id, refund_id, g.caller, args.get("token"))
        return _pdf(*pdf)


@blp.route("/orders/<id:order_id>/invoices")
class OrderInvoices(MethodView):
    @blp.doc(operationId="listOrderInvoices", security=_READERS)
    @responds(401, 404, e404="No such order, or not yours.")
    @blp.arguments(DocumentQuerySchema, location="query")
    @blp.response(200, OrderInvoiceListSchema)
    def get(self, args, order_id):
        """An order's invoices, superseded ones included

        Public. A guest gives the order's `token`; staff need `orders.read` (scope
        `read:order`); a customer reads their own orders only. Oldest first: an order has one
        current invoice; each edit of an invoiced order supersedes it (crediting it in full)
        and issues the next. Empty before the order is invoiced.
        """
        return {"items": downloads.invoices_of(order_id, g.caller, args.get("token"))}


@blp.route("/orders/<id:order_id>/invoices/<string:key>")
class OrderInvoiceByKey(MethodView):
    @blp.doc(operationId="getOrderInvoiceByNumber", security=_READERS, responses={"200": _PDF})
    @responds(401, 404, e404="No such order or invoice of it, or not yours.")
    @blp.arguments(DocumentQuerySchema, location="query")
    def get(self, args, order_id, key):
        """One of an order's invoices (PDF), current or superseded

        Public. A guest gives the order's `token`; staff need `orders.read` (scope
        `read:order`); a customer reads their own orders only. `key` is the invoice's
        number (`INV-2026-000001`) or id.
        """
        return _pdf(*downloads.invoice_by(order_id, key, g.caller, args.get("token")))


@blp.route("/orders/<id:order_id>/credit-notes")
class OrderCreditNotes(MethodView):
    @blp.doc(operationId="listOrderCreditNotes", security=_READERS)
    @responds(401, 404, e404="No such order, or not yours.")
    @blp.arguments(DocumentQuerySchema, location="query")
    @blp.response(200, OrderCreditNoteListSchema)
    def get(self, args, order_id):
        """An order's credit notes

        Public. A guest gives the order's `token`; staff need `orders.read` (scope
        `read:order`); a customer reads their own orders only. Oldest first: one per refund
        that gave money back (`refund_id`) and one per edit of an invoiced order (`edit_id`),
        each naming the invoice it credits.
        """
        return {"items": downloads.credit_notes_of(order_id, g.caller, args.get("token"))}


@blp.route("/orders/<id:order_id>/credit-notes/<string:key>")
class OrderCreditNote(MethodView):
    @blp.doc(operationId="getOrderCreditNote", security=_READERS, responses={"200": _PDF})
    @responds(401, 404, e404="No such order or credit note of it, or not yours.")
    @blp.arguments(DocumentQuerySchema, location="query")
    def get(self, args, order_id, key):
        """One of an order's credit notes (PDF)

        Public. A guest gives the order's `token`; staff need `orders.read` (scope
        `read:order`); a customer reads their own orders only. `key` is the credit note's
        number (`CN-2026-000001`) or id: a refund's or an edit's.
        """
        return _pdf(*downloads.credit_note_by(order_id, key, g.caller, args.get("token")))


@blp.route("/invoices")
class Invoices(MethodView):
    @blp.doc(operationId="listInvoices")
    @blp.arguments(InvoiceQuerySchema, location="query")
    @blp.response(200, page_schema(InvoiceSchema))
    @require_permission("orders.read")
    def get(self, args):
        """List invoices, oldest first

        By issue date then number, optionally within `issued_from` (inclusive) and
        `issued_before` (exclusive). Page with `next_cursor`.
        """
        start, end = _period(args)
        where = Where()
        if start:
            where.add("issued_at >= :start", start=start)
        if end:
            where.add("issued_at < :end", end=end)
        if args.get("created_after"):  # an invoice is created when issued, never changed
            where.add("issued_at >= :after", after=iso(args["created_after"]))
        return paginate(
            ledger.SELECT, "invoices", where, " ORDER BY issued_at, number", args, ledger.present
        )


@blp.route("/invoices/export")
class InvoiceExport(MethodView):
    @blp.doc(
        operationId="exportInvoices",
        responses={
            "200": {
                "description": "CSV, one row per invoice and credit note, by date: type,"
                " number, date, invoice (a credit note's), order, customer, email, currency,"
                " `net_<rate>` and `tax_<rate>` for each rate met, net, tax, gross. Credit"
                " notes are negative; amounts are decimal text.",
                "content": {"text/csv": {"schema": {"type": "string"}}},
            }
        },
    )
    @blp.arguments(InvoiceExportQuerySchema, location="query")
    @require_permission("orders.read")
    def get(self, args):
        """Export invoices and credit notes (CSV)

        Everything issued within `issued_from` (inclusive) and `issued_before` (exclusive),
        for the accountant.
        """
        day = datetime.now(UTC).strftime("%Y-%m-%d")
        return Response(
            ledger.csv_text(ledger.documents(*_period(args))),
            mimetype="text/csv",
            headers={
                "Content-Disposition": f'attachment; filename="invoices-{day}.csv"',
                "Cache-Control": "no-store",
            },
        )
