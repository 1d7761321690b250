"""The console's Orders pages (issues 27, 37): the list (by payment status, fulfilment
status, status and date placed, searched by number, e-mail or customer name, paged) and an
order's page with its lines, totals, payment, shipments, refunds, internal notes and
history, and the actions the viewer may take, in the order of a day's work: mark paid
(manual payment), ship with tracking, mark delivered; then refund; resend the order's
e-mail, print a packing slip; cancel (after a page that asks first).

Reading needs ``orders.read``; every action needs ``orders.update_status``, as the JSON API's
``PATCH /orders/{id}/status`` and ``POST /orders/{id}/shipments`` do, and goes through the
same services (``orders/lifecycle.py``, ``orders/shipments.py``), so a page can never allow
what the API refuses. A refused action comes back as the order page with the API's message.

Refunds need ``orders.refund`` (as ``POST /orders/{id}/refunds``) and go through
``payments/refunds.py``. The refund form carries a random idempotency key rendered into the
page, so the same form posted twice (a double click, a resent POST) refunds once: the second
post answers the first refund. The form's amount is in the order's currency ("12.50").
"""

import re
import secrets
from datetime import UTC, date, datetime, time, timedelta
from urllib.parse import urlencode

from flask import g, redirect, render_template, request, url_for
from werkzeug.exceptions import HTTPException

from shop.admin.views import NUMBER_RE, PAGE_SIZE, _require, bp, for_people, page_number
from shop.clock import iso, now
from shop.errors import ShopError
from shop.http.errors import abort, as_http, error_response
from shop.money import display, from_text
from shop.orders import balance_link, order_list, progress, shipments, staff
from shop.orders import lifecycle as orders
from shop.orders.shipments import ShipmentRequest
from shop.payments import refunds
from shop.payments.refund_request import RefundRequest

_DONE = {
    "paid": "Marked paid.",
    "cancelled": "Order cancelled.",
    "delivered": "Marked delivered.",
    "noted": "Note added.",
    "mailed": "The order's e-mail is on its way to the customer again.",
    "shipped": "Shipment recorded; the customer has been e-mailed the tracking.",
    "refunded": "Refund recorded.",
    "edited": "Order edited.",  # admin/order_edits.py
    "balance_link": "A new pay link of the balance is on its way to the customer.",
}


# The list's fulfilment filter: the stored values, and two the console adds. ``shipped``
# means every unit has left, delivered or not (a delivered order was shipped; a shipped one
# refunded in part stays shipped); ``to_ship`` is what waits for the warehouse.
_FULFILLMENT_FILTERS = {
    **{value: value for value in progress.FULFILLMENT},
    "shipped": ("shipped", "delivered"),
}
_PLACED = {"": "Any time", "today": "Today", "7d": "Last 7 days", "range": "Between dates"}
_DATE_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def _day(text: str, label: str, errors: list[str]):
    """A form's date (``2027-01-31``) as a date, or None (noting why when one was given)."""
    if not text:
        return None
    try:
        if _DATE_RE.fullmatch(text):
            return date.fromisoformat(text)
    except ValueError:
        pass
    errors.append(f"{label}: give a date as YYYY-MM-DD.")
    return None


def _placed_between(placed: str, start: str, end: str, errors: list[str]) -> tuple:
    """The list's time filter as stored times (from, before), UTC days: today, the last
    7 days (today and the 6 before), or the days from ``start`` to ``end`` included."""
    today = datetime.combine(now().date(), time(), UTC)
    if placed == "today":
        return iso(today), None
    if placed == "7d":
        return iso(today - timedelta(days=6)), None
    first, last = _day(start, "From", errors), _day(end, "To", errors)
    if first and last and last < first:
        errors.append("To: the last day comes after the first.")
        return None, None
    after = iso(datetime.combine(first, time(), UTC)) if first else None
    before = iso(datetime.combine(last + timedelta(days=1), time(), UTC)) if last else None
    return after, before


@bp.route("/orders")
def orders_list():
    """Orders, newest first: filter by payment, fulfilment, status and date, search by
    number, e-mail or customer name."""
    _require("orders.read")
    args = request.args
    status = args.get("status") if args.get("status") in orders.STATUSES else None
    payment = args.get("payment") if args.get("payment") in progress.PAYMENT else None
    fulfillment = args.get("fulfillment", "")
    fulfillment = fulfillment if fulfillment in (*_FULFILLMENT_FILTERS, "to_ship") else None
    placed = args.get("placed", "")
    placed = placed if placed in _PLACED else ""
    start, end = args.get("from", "")[:10], args.get("to", "")[:10]
    if (start or end) and not placed:
        placed = "range"
    errors: list[str] = []
    after, before = _placed_between(placed, start, end, errors)
    q = args.get("q", "")[:200]
    page = page_number()
    filters = {"payment_status": payment, "fulfillment_status": None}
    if fulfillment == "to_ship":  # a payment asked for narrows it further
        filters = {**progress.TO_SHIP, **({"payment_status": payment} if payment else {})}
    elif fulfillment:
        filters["fulfillment_status"] = _FULFILLMENT_FILTERS[fulfillment]
    result = order_list.find(
        page, PAGE_SIZE, status=status, q=q, created_from=after, created_before=before, **filters
    )
    pages = max(1, -(-result["total"] // PAGE_SIZE))
    asked = {"status": status, "payment": payment, "fulfillment": fulfillment, "q": q}
    asked |= {"placed": placed, "from": start if placed == "range" else "", "to": end}
    if placed != "range":
        asked["to"] = ""

    def page_url(number=None, **changes):
        query = {**asked, "page": number, **changes}
        return url_for("admin.orders_list") + "?" + urlencode({k: v for k, v in query.items() if v})

    return render_template(
        "admin/orders.html",
        result=result,
        asked=asked,
        filtered=any(asked.values()),
        status=status,
        payments=progress.PAYMENT,
        fulfillments=(*progress.FULFILLMENT, "to_ship"),
        placed_choices=_PLACED,
        errors=errors,
        q=q,
        pages=pages,
        page_url=page_url,
        money=display,
    )


def _loaded(order_id: str) -> tuple[dict, dict]:
    """The order (404 if none) and each line's units shipped so far."""
    order = orders.load(order_id)
    if order is None:
        abort(404, "Order not found.")
    shipped = {}
    for shipment in order["shipments"]:
        for line in shipment["lines"]:
            shipped[line["line"]] = shipped.get(line["line"], 0) + line["quantity"]
    return order, shipped


def _order_page(order_id: str, error: str | None = None, status: int = 200):
    order, shipped = _loaded(order_id)
    next_statuses = orders.hand_moves(order)
    left = sum(item["quantity"] - shipped.get(item["line"], 0) for item in order["items"])
    page = render_template(
        "admin/order.html",
        order=order,
        shipped=shipped,
        names={item["line"]: item["name"] for item in order["items"]},
        next_statuses=next_statuses,
        # Only what still has units to send: a shipped order refunded in part offers no form.
        shippable=order["status"] in shipments.SHIPPABLE
        and order["fulfillment_status"] in progress.TO_SHIP["fulfillment_status"]
        and left > 0,
        deliverable="delivered" in next_statuses and order["fulfillment_status"] == "shipped",
        notes=staff.notes(order_id),
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
        balance_link=balance_link.collected_online(
            {**order, "provider": (order["payment"] or {}).get("provider")}
        ),
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
    return _move(order_id, "paid", "Marked paid in the console")


@bp.route("/orders/<id:order_id>/cancel", methods=["GET", "POST"])
def cancel_order(order_id):
    """Cancel an order (pending only, as the lifecycle says); the stock goes back. The
    order page links here: this page asks first, and only its own form (``confirm``)
    cancels, so one click never does."""
    _require("orders.update_status")
    if request.method == "GET" or request.form.get("confirm") != "yes":
        _require("orders.read")
        order, _shipped = _loaded(order_id)
        cancellable = "cancelled" in orders.hand_moves(order)
        page = render_template(
            "admin/cancel.html",
            order=order,
            cancellable=cancellable,
            money=lambda cents: display(cents, order["currency"]),
        )
        return page, 200 if cancellable else 409
    return _move(order_id, "cancelled", "Cancelled in the console")


@bp.route("/orders/<id:order_id>/delivered", methods=["POST"])
def mark_delivered(order_id):
    """Mark a shipped order delivered (the carrier says it arrived)."""
    return _move(order_id, "delivered", "Marked delivered in the console")


def _move(order_id: str, status: str, default_note: str):
    """Move the order to ``status`` as the API's ``PATCH /orders/{id}/status`` does, with
    the form's note (``default_note`` when none is given)."""
    note = request.form.get("note", "")[:500].strip() or default_note
    return _act(
        order_id, status, lambda: orders.change_status(order_id, status, note, g.caller.actor)
    )


@bp.route("/orders/<id:order_id>/notes", methods=["POST"])
def add_note(order_id):
    """Keep an internal note on the order (staff only: never shown to the customer)."""
    body = request.form.get("body", "")[:4000]
    return _act(
        order_id,
        "noted",
        lambda: staff.add_note(order_id, staff.NoteRequest(body=body), g.caller.actor),
    )


@bp.route("/orders/<id:order_id>/mail", methods=["POST"])
def resend_mail(order_id):
    """Send the customer the e-mail of the order's current status again."""
    return _act(order_id, "mailed", lambda: staff.resend_mail(order_id, g.caller.actor))


@bp.route("/orders/<id:order_id>/balance-link", methods=["POST"])
def send_balance_link(order_id):
    """Mail the customer a new pay link of a card order's balance (``POST
    /orders/{id}/balance/link``)."""
    return _act(order_id, "balance_link", lambda: balance_link.send(order_id, g.caller.actor))


@bp.route("/orders/<id:order_id>/packing-slip")
def packing_slip(order_id):
    """A printable packing slip: the ship-to address and each line with its SKU, options
    and units (ordered, shipped, to pack); no prices."""
    _require("orders.read")
    order, shipped = _loaded(order_id)
    return render_template("admin/packing_slip.html", order=order, shipped=shipped)


# The ship form's labels, for what the API says of a field.
_LABELS = {
    "carrier": "Carrier",
    "tracking_number": "Tracking number",
    "tracking_url": "Tracking link",
}
# Every form's labels (the refund form's too), for the messages ``_act`` shows.
_FORM_LABELS = {**_LABELS, "amount_cents": "Amount", "reason": "Reason", "body": "Note"}


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
