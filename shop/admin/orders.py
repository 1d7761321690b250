"""The console's Orders pages (issue 27): the list (by status, searched by number or e-mail,
paged) and an order's page with its lines, totals, payment, shipments and history, and the
actions the viewer may take: mark paid (manual payment), ship with tracking, cancel, refund.

Reading needs ``orders.read``; every action needs ``orders.update_status``, as the JSON API's
``PATCH /orders/{id}/status`` and ``POST /orders/{id}/shipments`` do, and goes through the
same services (``orders/lifecycle.py``, ``orders/shipments.py``), so a page can never allow
what the API refuses. A refused action comes back as the order page with the API's message.

Refunds need ``orders.refund`` (as ``POST /orders/{id}/refunds``) and go through
``payments/refunds.py``. The refund form carries a random idempotency key rendered into the
page, so the same form posted twice (a double click, a resent POST) refunds once: the second
post answers the first refund. The form's amount is in the order's currency ("12.50").
"""

import secrets
from urllib.parse import urlencode

from flask import g, redirect, render_template, request, url_for
from werkzeug.exceptions import HTTPException

from shop.admin.views import NUMBER_RE, PAGE_SIZE, _require, bp, for_people
from shop.errors import ShopError
from shop.http.errors import abort, as_http, error_response
from shop.money import display, from_text
from shop.orders import lifecycle as orders
from shop.orders import order_list, shipments
from shop.orders.shipments import ShipmentRequest
from shop.payments import refunds
from shop.payments.refund_request import RefundRequest

_DONE = {
    "paid": "Marked paid.",
    "cancelled": "Order cancelled.",
    "shipped": "Shipment recorded; the customer has been e-mailed the tracking.",
    "refunded": "Refund recorded.",
}


@bp.route("/orders")
def orders_list():
    """Orders, newest first: filter by status, search by number or e-mail."""
    _require("orders.read")
    status = request.args.get("status")
    if status not in orders.STATUSES:
        status = None
    q = request.args.get("q", "")[:200]
    page = request.args.get("page", "1")
    page = int(page) if NUMBER_RE.fullmatch(page) and 0 < int(page) < 10**6 else 1
    result = order_list.find(page, PAGE_SIZE, status=status, q=q)
    pages = max(1, -(-result["total"] // PAGE_SIZE))

    def page_url(number=None, **changes):
        query = {"status": status, "q": q, "page": number, **changes}
        return url_for("admin.orders_list") + "?" + urlencode({k: v for k, v in query.items() if v})

    return render_template(
        "admin/orders.html",
        result=result,
        status=status,
        statuses=orders.STATUSES,
        q=q,
        pages=pages,
        page_url=page_url,
        money=display,
    )


def _order_page(order_id: str, error: str | None = None, status: int = 200):
    order = orders.load(order_id)
    if order is None:
        abort(404, "Order not found.")
    shipped = {}
    for shipment in order["shipments"]:
        for line in shipment["lines"]:
            shipped[line["line"]] = shipped.get(line["line"], 0) + line["quantity"]
    page = render_template(
        "admin/order.html",
        order=order,
        shipped=shipped,
        names={item["line"]: item["name"] for item in order["items"]},
        next_statuses=orders.hand_moves(order),
        shippable=order["status"] in shipments.SHIPPABLE,
        money=lambda cents: display(cents, order["currency"]),
        refunds=refunds.list_refunds(order_id),
        preview=refunds.preview(order_id) if g.caller.can("orders.refund") else None,
        refundable=order["status"] in refunds.REFUNDABLE,
        # A refused refund keeps its key: resending it (Stripe was unreachable) retries that
        # refund instead of starting a second one.
        refund_key=(error and request.form.get("idempotency_key", "")[:255])
        or secrets.token_urlsafe(24),
        done=_DONE.get(request.args.get("done", "")),
        error=error,
    )
    return page, status


@bp.route("/orders/<id:order_id>")
def order_page(order_id):
    """One order: lines, totals, payment, shipments, history, and the viewer's actions."""
    _require("orders.read")
    return _order_page(order_id)


def _act(order_id: str, done: str, action, permission: str = "orders.update_status"):
    """Run a console action; back to the order page, saying what happened or why not."""
    _require(permission)
    try:
        action()
    except (HTTPException, ShopError) as caught:
        error = as_http(caught)
        if error.code == 404:
            raise
        body, code, headers = error_response(error)  # a 503 keeps its Retry-After
        _require("orders.read")
        page, code = _order_page(order_id, for_people(body["message"], _FORM_LABELS), code)
        return page, code, headers
    return redirect(url_for("admin.order_page", order_id=order_id, done=done), 303)


@bp.route("/orders/<id:order_id>/paid", methods=["POST"])
def mark_paid(order_id):
    """Mark a pending order paid: a bank transfer or cash arrived (manual payment)."""
    note = request.form.get("note", "")[:500].strip() or "Marked paid in the console"
    return _act(
        order_id, "paid", lambda: orders.change_status(order_id, "paid", note, g.caller.actor)
    )


@bp.route("/orders/<id:order_id>/cancel", methods=["POST"])
def cancel_order(order_id):
    """Cancel an order (pending only, as the lifecycle says); the stock goes back."""
    note = request.form.get("note", "")[:500].strip() or "Cancelled in the console"
    return _act(
        order_id,
        "cancelled",
        lambda: orders.change_status(order_id, "cancelled", note, g.caller.actor),
    )


# The ship form's labels, for what the API says of a field.
_LABELS = {
    "carrier": "Carrier",
    "tracking_number": "Tracking number",
    "tracking_url": "Tracking link",
}
# Every form's labels (the refund form's too), for the messages ``_act`` shows.
_FORM_LABELS = {**_LABELS, "amount_cents": "Amount", "reason": "Reason"}


@bp.route("/orders/<id:order_id>/shipments", methods=["POST"])
def ship_order(order_id):
    """Record a shipment: the units of each line given (all that remain when none are)."""
    return _act(
        order_id, "shipped", lambda: shipments.create(order_id, _shipment_form(), g.caller.actor)
    )


def _shipment_form() -> ShipmentRequest:
    """The ship form as the API's body: the command the service checks."""
    form = {field: request.form.get(field, "").strip()[:2000] for field in _LABELS}
    form["tracking_url"] = form["tracking_url"] or None
    lines = _quantities("line-")
    if request.form.get("partial") and not lines:
        abort(400, "Give the quantity of at least one line, or ship everything left.")
    if lines:
        form["lines"] = lines
    return ShipmentRequest(**form)


@bp.route("/orders/<id:order_id>/refunds", methods=["POST"])
def refund_order(order_id):
    """Refund lines or an amount (and/or the shipping), restocking what the form says."""
    key = request.form.get("idempotency_key", "")[:255] or None
    return _act(
        order_id,
        "refunded",
        lambda: refunds.create_refund(order_id, _refund_form(order_id), g.caller, key),
        "orders.refund",
    )


def _quantities(prefix: str) -> list[dict]:
    """The form's ``<prefix>-<line>`` quantities as ``[{"line", "quantity"}]`` (zeros left out)."""
    lines = []
    for key, value in list(request.form.items())[:500]:
        line, value = key[len(prefix) :], value.strip()
        if key.startswith(prefix) and NUMBER_RE.fullmatch(line) and value:
            if not NUMBER_RE.fullmatch(value):
                abort(400, f"Line {line}: the quantity must be a whole number.")
            if int(value):
                lines.append({"line": int(line), "quantity": int(value)})
    return lines


def _refund_form(order_id: str) -> RefundRequest:
    """The refund form as the API's command (the service checks it): an amount, or lines
    and/or the shipping; the amount is read in the order's currency."""
    amount_cents = None
    amount = request.form.get("amount", "").strip()[:30]
    if amount:
        order = orders.load(order_id)
        try:
            amount_cents = from_text(amount, order["currency"] if order else "EUR")
        except ValueError as error:
            abort(400, f"Amount: {error}")
    return RefundRequest(
        amount_cents=amount_cents,
        lines=_quantities("refund-"),
        shipping=True if request.form.get("shipping") else None,
        reason=request.form.get("reason", "").strip() or None,
        restock=_quantities("restock-"),
    )
