"""The console's invoices (issue 40): the list by issue date with a period filter and its CSV
export, and the PDFs of an order's invoice and credit notes (linked from the order page's
Documents block, ``admin/_documents.html``: every invoice, superseded ones too, and every
credit note, a refund's or an edit's). Reading needs ``orders.read``, as the API's
``GET /invoices``; the documents go through the same check and renderer
(``shop/invoices/downloads.py``)."""

from datetime import date, timedelta
from urllib.parse import urlencode

from flask import Response, g, render_template, request, url_for

from shop.admin.views import PAGE_SIZE, _require, bp, page_number
from shop.db.pages import Where, paginate
from shop.invoices import credit_notes, downloads, issuing, ledger
from shop.money import display


def _day(name: str) -> date | None:
    """A ``YYYY-MM-DD`` query value, or None when absent or not a date."""
    text = request.args.get(name, "")[:10]
    try:
        return date.fromisoformat(text) if text else None
    except ValueError:
        return None


def _period() -> tuple:
    """The stored bounds of the form's period: from its first day to the end of its last."""
    start, end = _day("from"), _day("to")
    return (
        f"{start.isoformat()}T00:00:00.000000Z" if start else None,
        f"{(end + timedelta(days=1)).isoformat()}T00:00:00.000000Z" if end else None,
    )


@bp.app_template_global("documents_of")
def _documents_of(order_id: str) -> dict:
    """An order's invoices (superseded ones too) and credit notes (a refund's or an
    edit's), oldest first (the order page's Documents block)."""
    return {
        "invoices": issuing.all_of_order(order_id),
        "credit_notes": credit_notes.of_order(order_id),
    }


@bp.route("/invoices")
def invoices_list():
    """Invoices, oldest first, within a period; with a link to the CSV of the same period."""
    _require("orders.read")
    start, end = _period()
    where = Where()
    if start:
        where.add("issued_at >= :start", start=start)
    if end:
        where.add("issued_at < :end", end=end)
    page = page_number()
    args = {"page": page, "page_size": PAGE_SIZE}
    result = paginate(
        ledger.SELECT, "invoices", where, " ORDER BY issued_at, number", args, ledger.present
    )
    pages = max(1, -(-result["total"] // PAGE_SIZE))
    period = {key: request.args.get(key, "")[:10] for key in ("from", "to")}

    def page_url(number=None):
        query = {**period, "page": number}
        return (
            url_for("admin.invoices_list") + "?" + urlencode({k: v for k, v in query.items() if v})
        )

    export = (
        url_for("admin.invoices_export") + "?" + urlencode({k: v for k, v in period.items() if v})
    )
    return render_template(
        "admin/invoices.html",
        result=result,
        pages=pages,
        page_url=page_url,
        period=period,
        export_url=export,
        money=display,
    )


@bp.route("/invoices/export")
def invoices_export():
    """The CSV of invoices and credit notes of the period (``GET /invoices/export``'s)."""
    _require("orders.read")
    return Response(
        ledger.csv_text(ledger.documents(*_period())),
        mimetype="text/csv",
        headers={
            "Content-Disposition": 'attachment; filename="invoices.csv"',
            "Cache-Control": "no-store",
        },
    )


def _pdf(number: str, body: bytes) -> Response:
    return Response(
        body,
        mimetype="application/pdf",
        headers={
            "Content-Disposition": f'attachment; filename="{number}.pdf"',
            "Cache-Control": "private, no-store",
        },
    )


@bp.route("/orders/<id:order_id>/invoice.pdf")
def order_invoice(order_id):
    """The order's invoice as a PDF (409 page when it has none yet)."""
    return _pdf(*downloads.invoice_pdf(order_id, g.caller))


@bp.route("/orders/<id:order_id>/refunds/<id:refund_id>/credit-note.pdf")
def refund_credit_note(order_id, refund_id):
    """A refund's credit note as a PDF."""
    return _pdf(*downloads.credit_note_pdf(order_id, refund_id, g.caller))


@bp.route("/orders/<id:order_id>/invoices/<id:invoice_id>.pdf")
def order_invoice_by_id(order_id, invoice_id):
    """One of the order's invoices, current or superseded by an edit, as a PDF."""
    return _pdf(*downloads.invoice_by(order_id, invoice_id, g.caller))


@bp.route("/orders/<id:order_id>/credit-notes/<id:note_id>.pdf")
def order_credit_note(order_id, note_id):
    """One of the order's credit notes (a refund's or an edit's) as a PDF."""
    return _pdf(*downloads.credit_note_by(order_id, note_id, g.caller))
