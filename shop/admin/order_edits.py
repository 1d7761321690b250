"""The console's "Edit order" page (issue 41): an unshipped order's quantities per line (0
removes a line), a line added by SKU, the discount code removed, a note; "Preview" shows the
new totals (the edit's own pricing, rolled back), "Confirm" makes the edit.

Both go through ``checkout/editing.py``, as ``POST /orders/{id}/edits`` and its preview do,
with ``orders.edit`` (and ``orders.read`` to see the page). The confirm form carries a
random idempotency key rendered into the preview, so a double click edits once.
"""

import secrets

from flask import g, redirect, render_template, request, url_for
from werkzeug.exceptions import HTTPException

from shop.admin.views import NUMBER_RE, _require, bp, for_people
from shop.checkout import editing
from shop.errors import Invalid, ShopError
from shop.http.errors import abort, as_http, error_response
from shop.money import display
from shop.orders import edits
from shop.orders import lifecycle as orders

_LABELS = {
    "add": "Add",
    "remove": "Quantity",
    "set_quantity": "Quantity",
    "note": "Note",
    "discount_code": "Discount code",
}


def _page(order: dict, form: dict, preview=None, error=None, status=200):
    page = render_template(
        "admin/order_edit.html",
        order=order,
        form=form,
        preview=preview,
        error=error,
        key=form.get("idempotency_key") or secrets.token_urlsafe(24),
        drawn=",".join(f"{item['line']}:{item['quantity']}" for item in order["items"]),
        editable=order["status"] in editing.EDITABLE
        and order["fulfillment_status"] == "unfulfilled",
        money=lambda cents: display(cents, order["currency"]),
    )
    return page, status


def _order(order_id: str) -> dict:
    order = orders.load(order_id)
    if order is None:
        abort(404, "Order not found.")
    return order


@bp.route("/orders/<id:order_id>/edit", methods=["GET", "POST"])
def edit_order_page(order_id):
    """The edit form; POST ``action=preview`` shows the new totals, ``action=confirm``
    edits the order and goes back to its page."""
    _require("orders.edit")
    _require("orders.read")
    order = _order(order_id)
    if request.method == "GET":
        return _page(order, {})
    form = {key: value[:2000] for key, value in list(request.form.items())[:300]}
    try:
        command = _command(form)
        if form.get("action") == "confirm":
            key = form.get("idempotency_key", "")[:255] or None
            editing.edit_order(order_id, command, g.caller, key)
            return redirect(url_for("admin.order_page", order_id=order_id, done="edited"), 303)
        return _page(order, form, preview=editing.preview(order_id, command))
    except (HTTPException, ShopError) as caught:
        error = as_http(caught)
        if error.code == 404:
            raise
        body, code, _headers = error_response(error)
        return _page(
            _order(order_id), form, error=for_people(body["message"], _LABELS), status=code
        )


def _command(form: dict) -> edits.EditRequest:
    """The form as the API's command: each line's new quantity (0 removes it), a line added
    by SKU, the code removed; the service checks the rest."""
    remove, quantities = [], []
    # Against the quantities the form was drawn with (``drawn``: ``line:quantity`` pairs),
    # not the order as it is now: the same form resent is the same command, which its key
    # then replays.
    for pair in form.get("drawn", "").split(",")[: edits.MOST_LINES]:
        line, _, was = pair.partition(":")
        value = form.get(f"quantity-{line}", "").strip()
        if not (NUMBER_RE.fullmatch(line) and NUMBER_RE.fullmatch(was)) or not value:
            continue
        if not NUMBER_RE.fullmatch(value):
            raise Invalid(f"Line {line}: the quantity must be a whole number.")
        if int(value) == 0:
            remove.append({"line": int(line)})
        elif int(value) != int(was):
            quantities.append({"line": int(line), "quantity": int(value)})
    add = []
    sku = form.get("add_sku", "").strip()
    if sku:
        variant_id = editing.variant_by_sku(sku)
        if variant_id is None:
            raise Invalid(f"add: there is no variant with the SKU {sku!r}.")
        count = form.get("add_quantity", "").strip() or "1"
        if not NUMBER_RE.fullmatch(count):
            raise Invalid("add: the quantity must be a whole number.")
        add.append({"variant_id": variant_id, "quantity": int(count)})
    values = {"add": add, "remove": remove, "set_quantity": quantities}
    values["note"] = form.get("note", "").strip() or None
    if form.get("remove_code"):
        values["discount_code"] = None
    return edits.EditRequest(**values)
