"""The console's returns (issue 41): the list by status, and a return's page with its lines
and the actions its status allows: approve (with instructions for the customer), reject
(with a reason), receive (the units that arrived, restock, refund), exchange a received,
unrefunded one for a draft order (lines by SKU and quantity, as the draft form; with
``draft_orders.create`` too). The order page's Returns block (``admin/_returns.html``) links
them.

Reading needs ``returns.read``; every action ``returns.update``, as the API's; a receive
that refunds needs ``orders.refund`` too. Each goes through the API's functions
(``shop/returns/flow.py``): a page can never allow what the API refuses, and a refused
action comes back as the return's page with the API's message.
"""

from urllib.parse import urlencode

from flask import g, redirect, render_template, request, url_for
from werkzeug.exceptions import HTTPException

from shop.admin.drafts import items_from_rows
from shop.admin.store.forms import Refused
from shop.admin.views import NUMBER_RE, PAGE_SIZE, _require, bp, for_people, page_number
from shop.db.pages import Where, paginate
from shop.errors import Invalid, ShopError
from shop.http.errors import abort, as_http, error_response
from shop.returns import exchange, flow, rules, store

_DONE = {
    "approved": "Return approved; the customer has been e-mailed the instructions.",
    "rejected": "Return rejected; the customer has been told why.",
    "received": "Return received.",
    "exchanged": "Exchanged: the replacement is a draft order, its credit the return's value.",
}
_LABELS = {"instructions": "Instructions", "reason": "Reason", "lines": "Lines"}


@bp.app_template_global("returns_of")
def _returns_of(order_id: str) -> list[dict]:
    """An order's returns (the order page's Returns block), for who may read them."""
    return store.of_order(order_id) if g.caller.can(flow.READ) else []


@bp.route("/returns")
def returns_list():
    """Returns, newest first, by status."""
    _require(flow.READ)
    status = request.args.get("status", "")
    status = status if status in rules.STATUSES else ""
    where = Where()
    if status:
        where.add("r.status = :status", status=status)
    page = page_number()
    args = {"page": page, "page_size": PAGE_SIZE}
    result = paginate(
        store.SELECT, "returns r", where, " ORDER BY r.created_at DESC, r.id DESC", args
    )
    result["items"] = store.present(result["items"])

    def page_url(number=None):
        query = {"status": status, "page": number}
        return (
            url_for("admin.returns_list") + "?" + urlencode({k: v for k, v in query.items() if v})
        )

    return render_template(
        "admin/returns.html",
        result=result,
        pages=max(1, -(-result["total"] // PAGE_SIZE)),
        page_url=page_url,
        status=status,
        statuses=rules.STATUSES,
    )


def _page(return_id: str, error: str | None = None, status: int = 200):
    shown = store.load(return_id)
    if shown is None:
        abort(404, "Return not found.")
    page = render_template(
        "admin/return.html",
        ret=shown,
        done=_DONE.get(request.args.get("done", "")),
        error=error,
    )
    return page, status


@bp.route("/returns/<id:return_id>")
def return_page(return_id):
    """One return: its lines, what happened, and the viewer's actions."""
    _require(flow.READ)
    return _page(return_id)


def _act(return_id: str, done: str, action):
    """Run an action; back to the return's page, saying what happened or why not."""
    _require(flow.UPDATE)
    try:
        action()
    except (HTTPException, ShopError) as caught:
        error = as_http(caught)
        if error.code == 404:
            raise
        body, code, headers = error_response(error)
        _require(flow.READ)
        page, code = _page(return_id, for_people(body["message"], _LABELS), code)
        return page, code, headers
    return redirect(url_for("admin.return_page", return_id=return_id, done=done), 303)


def _field(name: str, most: int) -> str | None:
    return request.form.get(name, "")[: most + 1].strip() or None


@bp.route("/returns/<id:return_id>/approve", methods=["POST"])
def approve_return(return_id):
    """Approve a requested return; the instructions are mailed to the customer."""
    instructions = _field("instructions", flow.INSTRUCTIONS_LENGTH)
    return _act(
        return_id, "approved", lambda: flow.approve(return_id, instructions, g.caller.actor)
    )


@bp.route("/returns/<id:return_id>/reject", methods=["POST"])
def reject_return(return_id):
    """Reject a requested return with a reason."""
    reason = _field("reason", rules.REASON_LENGTH)
    return _act(return_id, "rejected", lambda: flow.reject(return_id, reason, g.caller.actor))


@bp.route("/returns/<id:return_id>/receive", methods=["POST"])
def receive_return(return_id):
    """Receive an approved return: the units of each line that arrived (the form starts
    with every unit requested), restock and/or refund them."""

    def receive():
        shown = store.load(return_id)
        if shown is None:
            abort(404, "Return not found.")
        lines = []
        for line in shown["lines"]:
            value = request.form.get(f"received-{line['line']}", "").strip()[:8]
            if value and not NUMBER_RE.fullmatch(value):
                abort(400, f"Line {line['line']}: the quantity must be a whole number.")
            lines.append({"line": line["line"], "quantity": int(value or 0)})
        restock, refund = bool(request.form.get("restock")), bool(request.form.get("refund"))
        flow.receive(return_id, lines, restock, refund, g.caller)

    return _act(return_id, "received", receive)


@bp.route("/returns/<id:return_id>/exchange", methods=["POST"])
def exchange_return(return_id):
    """Exchange a received, unrefunded return for a draft order of the lines written (one
    per row: a SKU or a variant's id and a quantity), its credit the return's value."""

    def make():
        try:
            items = items_from_rows(request.form.get("lines", "")[:20000])
        except Refused as refused:
            raise Invalid(refused.message) from None
        note = _field("note", exchange.NOTE_LENGTH)
        exchange.exchange(return_id, items, None, note, g.caller)

    return _act(return_id, "exchanged", make)
