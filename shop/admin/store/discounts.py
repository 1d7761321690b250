"""The console's Discount codes (issue 37): the list, a new code, a code's page to change it,
and deactivate / activate.

Reading needs ``discounts.read``, creating ``discounts.create``, changing (and deactivating)
``discounts.update``, as the API's routes. The form is loaded through the API's schemas and
written by ``discounts/store.py``, as ``POST /discounts`` and ``PATCH /discounts/{id}`` do, so
every rule and message is the API's. The console writes a fixed amount and the minimum
subtotal in the shop's currency ("5.00"), the API in minor units; dates are whole days in
UTC. Which products or categories a code is limited to is set through the API for now: the
form keeps what a code has.
"""

from flask import g, redirect, render_template, request, url_for

from shop.admin.store import forms
from shop.admin.store.forms import Refused
from shop.admin.views import _require, bp
from shop.api.store_input import DiscountCreateSchema, DiscountUpdateSchema
from shop.discounts import codes
from shop.discounts import store as discount_store
from shop.money import display, to_text
from shop.site import settings as site

LABELS = {
    "code": "Code",
    "kind": "Kind",
    "value": "Value",
    "min_subtotal_cents": "Minimum subtotal",
    "starts_at": "Starts on",
    "ends_at": "Ends on",
    "usage_limit": "Usage limit",
    "once_per_customer": "Once per customer",
}
KIND_NAMES = {"percent": "Percent off", "fixed": "Amount off", "free_shipping": "Free shipping"}
_DONE = {
    "created": "Discount code created.",
    "saved": "Saved.",
    "active": "Activated.",
    "inactive": "Deactivated: the checkout no longer takes this code.",
}


@bp.route("/discounts")
def discounts():
    """Discount codes, newest first."""
    _require("discounts.read")
    page = forms.page_number()
    result, pages = forms.listing(
        f"SELECT {codes.COLUMNS} FROM discounts",
        "discounts",
        " ORDER BY created_at DESC, id DESC",
        page,
    )
    result["items"] = [codes.from_row(row) for row in result["items"]]
    return render_template(
        "admin/store/discounts.html",
        result=result,
        pages=pages,
        page_url=lambda number: url_for("admin.discounts", page=number),
        describe=_describe,
        done=_DONE.get(request.args.get("done", "")),
    )


def _describe(discount: dict, currency: str | None = None) -> str:
    """What a code gives, in words: ``10% off``, ``€5.00 off``, ``Free shipping``."""
    currency = currency or site.current()["currency"]
    if discount["kind"] == "percent":
        return f"{discount['value']}% off"
    if discount["kind"] == "fixed":
        return f"{display(int(discount['value']), currency)} off"
    return "Free shipping"


def _form_values(discount: dict, currency: str) -> dict:
    """A stored code as its form shows it (amounts in the currency, dates as days)."""
    value = discount["value"]
    if discount["kind"] == "fixed":
        value = to_text(int(value), currency)
    elif discount["kind"] == "free_shipping":
        value = ""
    minimum = discount.get("min_subtotal_cents")
    return {
        **discount,
        "value": value,
        "min_subtotal": "" if minimum is None else to_text(minimum, currency),
        "starts_at": (discount.get("starts_at") or "")[:10],
        "ends_at": (discount.get("ends_at") or "")[:10],
        "usage_limit": "" if discount.get("usage_limit") is None else discount["usage_limit"],
    }


def _page(form: dict, discount: dict | None, error: Refused | None = None):
    page = render_template(
        "admin/store/discount.html",
        form=form,
        discount=discount,
        kinds=KIND_NAMES,
        currency=site.current()["currency"],
        error=error.message if error else None,
        done=_DONE.get(request.args.get("done", "")),
    )
    return (page, error.status, error.headers) if error else page


def _posted(discount: dict | None, currency: str) -> dict:
    """The posted form as the API's body (``starts_at``/``ends_at`` kept to the second when
    the day shown was not changed)."""
    kind = forms.text("kind", 40)
    value = forms.text("value", 60)
    if kind == "fixed" and value:
        value = str(forms.amount("value", LABELS["value"], currency))
    body = {
        "code": forms.text("code", 200),
        "kind": kind,
        "value": value or ("0" if kind == "free_shipping" else None),
        "min_subtotal_cents": forms.amount("min_subtotal", LABELS["min_subtotal_cents"], currency),
        "usage_limit": forms.integer("usage_limit"),
        "once_per_customer": forms.checked("once_per_customer"),
        "active": forms.checked("active"),
    }
    for field in ("starts_at", "ends_at"):
        day = forms.text(field, 40)
        kept = (discount or {}).get(field)
        body[field] = kept if kept and kept[:10] == day else (day or None)
    if body["value"] is None:
        del body["value"]  # the use case says what a percent or fixed code needs
    return body


def _kept() -> dict:
    """The posted form as it is shown again above a refusal."""
    fields = ("code", "kind", "value", "min_subtotal", "starts_at", "ends_at", "usage_limit")
    form = {field: forms.text(field, 200) for field in fields}
    form["once_per_customer"] = forms.checked("once_per_customer")
    form["active"] = forms.checked("active")
    return form


@bp.route("/discounts/new")
def new_discount():
    """The form of a new code."""
    _require("discounts.create")
    return _page({"kind": "percent", "active": True}, None)


@bp.route("/discounts", methods=["POST"])
def create_discount():
    """Create a code, or show the form again with the API's refusal."""
    _require("discounts.create")
    currency = site.current()["currency"]
    try:
        data = forms.load(DiscountCreateSchema, _posted(None, currency), LABELS)
        created = forms.attempt(lambda: discount_store.create(data, g.caller.actor), LABELS)
    except Refused as refused:
        return _page(_kept(), None, refused)
    return redirect(url_for("admin.discount", discount_id=created["id"], done="created"), 303)


@bp.route("/discounts/<id:discount_id>")
def discount(discount_id):
    """A code's page: its use, and the form to change it."""
    _require("discounts.read")
    found = discount_store.get(discount_id)
    return _page(_form_values(found, site.current()["currency"]), found)


@bp.route("/discounts/<id:discount_id>", methods=["POST"])
def update_discount(discount_id):
    """Change a code, or show the form again with the API's refusal."""
    _require("discounts.update")
    found = discount_store.get(discount_id)
    currency = site.current()["currency"]
    try:
        data = forms.load(DiscountUpdateSchema, _posted(found, currency), LABELS)
        forms.attempt(lambda: discount_store.update(discount_id, data, g.caller.actor), LABELS)
    except Refused as refused:
        return _page(_kept(), found, refused)
    return redirect(url_for("admin.discount", discount_id=discount_id, done="saved"), 303)


@bp.route("/discounts/<id:discount_id>/active", methods=["POST"])
def toggle_discount(discount_id):
    """Deactivate a code (the checkout refuses it from now on) or activate it again."""
    _require("discounts.update")
    active = request.form.get("set_active") == "1"
    discount_store.get(discount_id)
    try:
        forms.attempt(
            lambda: discount_store.update(discount_id, {"active": active}, g.caller.actor), LABELS
        )
    except Refused as refused:
        found = discount_store.get(discount_id)
        return _page(_form_values(found, site.current()["currency"]), found, refused)
    done = "active" if active else "inactive"
    return redirect(url_for("admin.discount", discount_id=discount_id, done=done), 303)
