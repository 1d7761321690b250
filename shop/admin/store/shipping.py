"""The console's Shipping methods (issue 37): the list, a new method, a method's page to
change it, with its weight bands edited as rows of one form, and deactivate / activate.

Reading needs ``shipping.read``, creating ``shipping.create``, changing (and deactivating)
``shipping.update``, as the API's routes; the form is loaded through the API's schemas and
written by ``shipping/store.py``, so every limit and message is the API's. Amounts are
written in the shop's currency ("4.90"), weights in grams. The band editor shows a method's
bands and three empty rows; a row left empty is no band, and saving shows three empty rows
again (no script needed to add one).
"""

import re

from flask import g, redirect, render_template, request, url_for

from shop.admin.store import forms
from shop.admin.store.forms import Refused
from shop.admin.views import _require, bp
from shop.api.store_input import ShippingMethodCreateSchema, ShippingMethodUpdateSchema
from shop.money import display, to_text
from shop.shipping import methods
from shop.shipping import store as shipping_store
from shop.site import settings as site

LABELS = {
    "name": "Name",
    "countries": "Countries",
    "price_cents": "Price",
    "free_over_cents": "Free over",
    "weight_bands": "Weight bands",
    "tax_class": "Tax class",
    "position": "Position",
}
EMPTY_ROWS = 3
MAX_ROWS = 60  # the API takes 50 bands: more rows than that are refused in its words
_DONE = {
    "created": "Shipping method created.",
    "saved": "Saved.",
    "active": "Activated.",
    "inactive": "Deactivated: the checkout no longer offers this method.",
}
_SPLIT = re.compile(r"[\s,;]+")


@bp.route("/shipping-methods")
def shipping_methods():
    """Shipping methods, by position."""
    _require("shipping.read")
    page = forms.page_number()
    result, pages = forms.listing(
        f"SELECT {methods.COLUMNS} FROM shipping_methods",
        "shipping_methods",
        " ORDER BY position, name, id",
        page,
    )
    result["items"] = [methods.from_row(row) for row in result["items"]]
    currency = site.current()["currency"]
    return render_template(
        "admin/store/shipping_methods.html",
        result=result,
        pages=pages,
        page_url=lambda number: url_for("admin.shipping_methods", page=number),
        money=lambda cents: display(cents, currency),
        done=_DONE.get(request.args.get("done", "")),
    )


def _form_values(method: dict, currency: str) -> dict:
    """A stored method as its form shows it."""
    free = method.get("free_over_cents")
    return {
        **method,
        "countries": " ".join(method["countries"]),
        "price": to_text(method["price_cents"], currency),
        "free_over": "" if free is None else to_text(free, currency),
        "bands": [
            {"up_to_grams": band["up_to_grams"], "price": to_text(band["price_cents"], currency)}
            for band in method["weight_bands"]
        ],
    }


def _page(form: dict, method: dict | None, error: Refused | None = None):
    rows = list(form.get("bands") or []) + [{} for _ in range(EMPTY_ROWS)]
    page = render_template(
        "admin/store/shipping_method.html",
        form=form,
        rows=rows,
        method=method,
        currency=site.current()["currency"],
        error=error.message if error else None,
        done=_DONE.get(request.args.get("done", "")),
    )
    return (page, error.status, error.headers) if error else page


def _posted_bands() -> list[dict]:
    """The band rows as the form posted them (rows left empty dropped)."""
    bands = []
    for row in range(MAX_ROWS):
        weight = forms.text(f"band-{row}-up_to_grams", 40)
        price = forms.text(f"band-{row}-price", 40)
        if weight or price:
            bands.append({"up_to_grams": weight, "price": price})
    return bands


def _posted(currency: str) -> tuple[dict, dict]:
    """The posted form as the API's body, and the labels of its band rows' fields."""
    labels = dict(LABELS)
    bands = []
    for number, row in enumerate(_posted_bands()):
        label = f"Band {number + 1}"
        labels[f"weight_bands.{number}.up_to_grams"] = f"{label}, up to (grams)"
        labels[f"weight_bands.{number}.price_cents"] = f"{label}, price"
        band = {
            "up_to_grams": forms.as_integer(row["up_to_grams"]),
            "price_cents": forms.as_amount(row["price"], f"{label}, price", currency),
        }
        bands.append({key: value for key, value in band.items() if value is not None})
    countries = [code.upper() for code in _SPLIT.split(forms.text("countries")) if code]
    for number, code in enumerate(countries[:300]):
        labels[f"countries.{number}"] = f"Countries, {code}"
    body = {
        "name": forms.text("name", 400),
        "countries": countries,
        "price_cents": forms.amount("price", "Price", currency),
        "free_over_cents": forms.amount("free_over", "Free over", currency),
        "weight_bands": bands,
        "tax_class": forms.text("tax_class", 100) or "standard",
        "active": forms.checked("active"),
        "position": forms.integer("position") or 0,
    }
    if body["price_cents"] is None and bands:
        body["price_cents"] = 0  # priced by its bands
    if body["price_cents"] is None:
        del body["price_cents"]  # the schema says a price is needed
    return body, labels


def _kept() -> dict:
    """The posted form as it is shown again above a refusal."""
    fields = ("name", "countries", "price", "free_over", "tax_class", "position")
    form = {field: forms.text(field, 400) for field in fields}
    form["active"] = forms.checked("active")
    form["bands"] = _posted_bands()
    return form


@bp.route("/shipping-methods/new")
def new_shipping_method():
    """The form of a new method."""
    _require("shipping.create")
    return _page({"active": True, "tax_class": "standard", "position": 0}, None)


@bp.route("/shipping-methods", methods=["POST"])
def create_shipping_method():
    """Create a method, or show the form again with the API's refusal."""
    _require("shipping.create")
    currency = site.current()["currency"]
    try:
        body, labels = _posted(currency)
        data = forms.load(ShippingMethodCreateSchema, body, labels)
        created = forms.attempt(lambda: shipping_store.create(data, g.caller.actor), labels)
    except Refused as refused:
        return _page(_kept(), None, refused)
    return redirect(url_for("admin.shipping_method", method_id=created["id"], done="created"), 303)


@bp.route("/shipping-methods/<id:method_id>")
def shipping_method(method_id):
    """A method's page: the form to change it, with its bands."""
    _require("shipping.read")
    found = shipping_store.get(method_id)
    return _page(_form_values(found, site.current()["currency"]), found)


@bp.route("/shipping-methods/<id:method_id>", methods=["POST"])
def update_shipping_method(method_id):
    """Change a method (its bands replaced by the rows posted), or show the refusal."""
    _require("shipping.update")
    found = shipping_store.get(method_id)
    currency = site.current()["currency"]
    try:
        body, labels = _posted(currency)
        data = forms.load(ShippingMethodUpdateSchema, body, labels)
        forms.attempt(lambda: shipping_store.update(method_id, data, g.caller.actor), labels)
    except Refused as refused:
        return _page(_kept(), found, refused)
    return redirect(url_for("admin.shipping_method", method_id=method_id, done="saved"), 303)


@bp.route("/shipping-methods/<id:method_id>/active", methods=["POST"])
def toggle_shipping_method(method_id):
    """Deactivate a method (the checkout stops offering it) or activate it again."""
    _require("shipping.update")
    active = request.form.get("set_active") == "1"
    shipping_store.get(method_id)
    shipping_store.update(method_id, {"active": active}, g.caller.actor)
    done = "active" if active else "inactive"
    return redirect(url_for("admin.shipping_method", method_id=method_id, done=done), 303)
