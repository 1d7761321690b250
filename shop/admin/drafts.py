"""The console's draft orders (issue 41): the list, a new draft, a draft's page (its lines
and the totals of the quote's function, the form to change it) and its actions: complete
(paid by hand or by card), send the pay link, delete.

Reading needs ``draft_orders.read``, creating ``draft_orders.create``, changing,
completing and sending ``draft_orders.update``, deleting ``draft_orders.delete``, as the
API's routes. The form is loaded through the API's schemas and written by ``shop/drafts``,
as ``POST /draft-orders`` and ``PATCH /draft-orders/{id}`` do, so every rule and message is
the API's. The customer is named by e-mail: a customer's account with it, else an e-mail
without an account. Lines are one per row, a SKU (or a variant's id) and a quantity; the
credit is an amount in the shop's currency.
"""

import re

from flask import g, redirect, render_template, request, url_for

from shop.admin.store import forms
from shop.admin.store.forms import Refused
from shop.admin.views import _require, bp
from shop.api.store_input import DraftOrderCreateSchema, DraftOrderUpdateSchema
from shop.db.pages import Where
from shop.drafts import completing, sending
from shop.drafts import store as drafts
from shop.money import display, to_text
from shop.payments import providers
from shop.shipping import methods
from shop.site import settings as site

LABELS = {
    "email": "Customer e-mail",
    "customer_id": "Customer e-mail",
    "items": "Lines",
    "lines": "Lines",
    "shipping_address": "Address",
    "shipping_method_id": "Shipping method",
    "discount_code": "Discount code",
    "note": "Note",
    "credit_cents": "Credit",
    "credit_note": "Credit note",
    "payment_method": "Payment",
}
ADDRESS = ("name", "line1", "line2", "city", "postal_code", "region", "country")
_LINE = re.compile(r"^\s*(\S+)(?:\s*[x×*]?\s*(\d{1,5}))?\s*$")
_DONE = {
    "created": "Draft order created. Nothing is taken from stock until it is completed.",
    "saved": "Saved.",
    "sent": "The pay link was mailed to the customer.",
    "deleted": "Draft order deleted.",
}


@bp.route("/draft-orders")
def drafts_list():
    """Draft orders, newest first (open ones, or all)."""
    _require("draft_orders.read")
    shown = request.args.get("status", "open")
    where = Where("d.status = :status", status=shown) if shown in ("open", "completed") else None
    result, pages = forms.listing(
        drafts.SELECT,
        "draft_orders d",
        " ORDER BY d.created_at DESC, d.id DESC",
        forms.page_number(),
        where,
    )
    result["items"] = [drafts.present(row) for row in result["items"]]
    return render_template(
        "admin/drafts.html",
        result=result,
        pages=pages,
        shown=shown,
        page_url=lambda number: url_for("admin.drafts_list", page=number, status=shown),
        money=display,
        done=_DONE.get(request.args.get("done", "")),
    )


@bp.route("/draft-orders/new")
def new_draft():
    """The form of a new draft order."""
    _require("draft_orders.create")
    return _page({"country": "", "lines": ""}, None)


@bp.route("/draft-orders", methods=["POST"])
def create_draft():
    """Create a draft, or show the form again with the API's refusal."""
    _require("draft_orders.create")
    try:
        body = _posted(creating=True)
        data = forms.load(DraftOrderCreateSchema, body, LABELS)
        made = forms.attempt(lambda: drafts.create(data, g.caller.actor), LABELS)
    except Refused as refused:
        return _page(_kept(), None, refused)
    return redirect(url_for("admin.draft", draft_id=made["id"], done="created"), 303)


@bp.route("/draft-orders/<id:draft_id>")
def draft(draft_id):
    """A draft's page: its lines and totals, the form to change it, its actions."""
    _require("draft_orders.read")
    found = drafts.get(draft_id)
    return _page(_form_values(found), found)


@bp.route("/draft-orders/<id:draft_id>", methods=["POST"])
def update_draft(draft_id):
    """Change a draft, or show the form again with the API's refusal."""
    _require("draft_orders.update")
    found = drafts.get(draft_id)
    try:
        body = _posted(creating=False)
        data = forms.load(DraftOrderUpdateSchema, body, LABELS)
        forms.attempt(lambda: drafts.update(draft_id, data, g.caller.actor), LABELS)
    except Refused as refused:
        return _page(_kept(), found, refused)
    return redirect(url_for("admin.draft", draft_id=draft_id, done="saved"), 303)


@bp.route("/draft-orders/<id:draft_id>/complete", methods=["POST"])
def complete_draft(draft_id):
    """Make the draft's order (stock taken now), then the order's page."""
    _require("draft_orders.update")
    found = drafts.get(draft_id)
    method = forms.text("payment_method", 40)
    try:
        if method not in providers.names():
            raise Refused("Payment: choose how the customer pays.")
        order, _draft, _created = forms.attempt(
            lambda: completing.complete(draft_id, method, g.caller.actor), LABELS
        )
    except Refused as refused:
        return _page(_form_values(found), found, refused)
    return redirect(url_for("admin.order_page", order_id=order["id"]), 303)


@bp.route("/draft-orders/<id:draft_id>/send", methods=["POST"])
def send_draft(draft_id):
    """Mail the customer the pay link."""
    _require("draft_orders.update")
    found = drafts.get(draft_id)
    try:
        forms.attempt(lambda: sending.send(draft_id, g.caller.actor), LABELS)
    except Refused as refused:
        return _page(_form_values(found), found, refused)
    return redirect(url_for("admin.draft", draft_id=draft_id, done="sent"), 303)


@bp.route("/draft-orders/<id:draft_id>/delete", methods=["POST"])
def delete_draft(draft_id):
    """Delete an open draft."""
    _require("draft_orders.delete")
    found = drafts.get(draft_id)
    try:
        forms.attempt(lambda: drafts.delete(draft_id, g.caller.actor), LABELS)
    except Refused as refused:
        return _page(_form_values(found), found, refused)
    return redirect(url_for("admin.drafts_list", done="deleted"), 303)


def _page(form: dict, found: dict | None, error: Refused | None = None):
    currency = site.current()["currency"]
    page = render_template(
        "admin/draft.html",
        form=form,
        draft=found,
        methods=[(m["id"], m["name"]) for m in methods.active()],
        payment_methods=providers.names(),
        currency=currency,
        money=lambda cents: display(cents, currency),
        error=error.message if error else None,
        done=_DONE.get(request.args.get("done", "")),
    )
    return (page, error.status, error.headers) if error else page


def _form_values(found: dict) -> dict:
    """A stored draft as its form shows it."""
    address = found["shipping_address"]
    return {
        "email": found["email"] or "",
        **{name: address.get(name) or "" for name in ADDRESS},
        "lines": "\n".join(
            f"{line['sku'] or line['variant_id']} {line['quantity']}" for line in found["lines"]
        ),
        "shipping_method_id": found["shipping_method_id"] or "",
        "discount_code": found["discount_code"] or "",
        "note": found["note"] or "",
        "credit": to_text(found["credit_cents"], found["currency"])
        if found["credit_cents"]
        else "",
        "credit_note": found["credit_note"] or "",
    }


def _kept() -> dict:
    """The posted form as it is shown again above a refusal."""
    names = ("email", *ADDRESS, "lines", "shipping_method_id", "discount_code", "note")
    return {name: forms.text(name, 4000) for name in (*names, "credit", "credit_note")}


def items_from_rows(text: str) -> list[dict]:
    """The lines written one per row (``SKU quantity``, ``SKU x 2``, or a variant's id), as
    the API's items; ``Refused`` naming a row no variant answers to."""
    items = []
    for row in filter(str.strip, text.splitlines()[: drafts.MAX_LINES + 1]):
        match = _LINE.match(row)
        named = match and drafts.variant_of(match.group(1)[:64])
        if not named:
            given = match.group(1) if match else row.strip()
            raise Refused(f"Lines: no variant has the SKU or id {given[:64]}.")
        items.append({"variant_id": named, "quantity": int(match.group(2) or 1)})
    return items


def _posted(creating: bool) -> dict:
    """The posted form as the API's body."""
    currency = site.current()["currency"]
    body = {
        "items": items_from_rows(forms.text("lines", 20000)),
        "shipping_address": {
            name: forms.text(name, 300) for name in ADDRESS if forms.text(name, 300)
        },
        "shipping_method_id": forms.optional("shipping_method_id", 100),
        "discount_code": forms.optional("discount_code", 200),
        "note": forms.optional("note", 4000),
        "credit_cents": forms.amount("credit", "Credit", currency) or 0,
        "credit_note": forms.optional("credit_note", 1000),
    }
    if "country" in body["shipping_address"]:
        body["shipping_address"]["country"] = body["shipping_address"]["country"].upper()
    if creating:
        email = forms.text("email", 400)
        customer = drafts.customer_by_email(email) if email else None
        body.update({"customer_id": customer} if customer else {"email": email or None})
    return body
