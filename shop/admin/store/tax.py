"""The console's Tax rates (issue 37): the list, a new rate, a rate's page to change it, and
delete (after a confirmation page).

Reading needs ``tax.read``, creating ``tax.create``, changing ``tax.update``, deleting
``tax.delete``, as the API's routes; the form is loaded through the API's schemas and
written by ``pricing/tax_rates.py``, so every rule and message is the API's. A rate has no
"inactive" state (the pricing function applies every rate it finds): taking one out of use
is deleting it; orders placed keep the tax they were charged.
"""

from flask import g, redirect, render_template, request, url_for

from shop.admin.store import forms
from shop.admin.store.forms import Refused
from shop.admin.views import _require, bp
from shop.api.store_input import TaxRateCreateSchema, TaxRateUpdateSchema
from shop.pricing import tax_rates

LABELS = {
    "country": "Country",
    "region": "Region",
    "tax_class": "Tax class",
    "rate": "Rate",
    "name": "Name",
}
_DONE = {"created": "Tax rate created.", "saved": "Saved.", "deleted": "Tax rate deleted."}
_FIELDS = ("country", "region", "tax_class", "rate", "name")


@bp.route("/tax-rates")
def tax_rate_list():
    """Tax rates, by country, region and class."""
    _require("tax.read")
    page = forms.page_number()
    result, pages = forms.listing(
        f"SELECT {tax_rates.COLUMNS} FROM tax_rates", "tax_rates", tax_rates.ORDER, page
    )
    result["items"] = [tax_rates.present(row) for row in result["items"]]
    return render_template(
        "admin/store/tax_rates.html",
        result=result,
        pages=pages,
        page_url=lambda number: url_for("admin.tax_rate_list", page=number),
        done=_DONE.get(request.args.get("done", "")),
    )


def _page(form: dict, rate: dict | None, error: Refused | None = None):
    page = render_template(
        "admin/store/tax_rate.html",
        form=form,
        rate=rate,
        error=error.message if error else None,
        done=_DONE.get(request.args.get("done", "")),
    )
    return (page, error.status, error.headers) if error else page


def _posted() -> dict:
    """The posted form as the API's body (an empty region is none)."""
    body = {field: forms.text(field, 200) for field in _FIELDS}
    body["country"] = body["country"].upper()
    body["region"] = body["region"] or None
    body["tax_class"] = body["tax_class"] or "standard"
    return body


@bp.route("/tax-rates/new")
def new_tax_rate():
    """The form of a new rate."""
    _require("tax.create")
    return _page({"tax_class": "standard"}, None)


@bp.route("/tax-rates", methods=["POST"])
def create_tax_rate():
    """Create a rate, or show the form again with the API's refusal."""
    _require("tax.create")
    try:
        data = forms.load(TaxRateCreateSchema, _posted(), LABELS)
        created = forms.attempt(lambda: tax_rates.create(data, g.caller.actor), LABELS)
    except Refused as refused:
        return _page(_posted(), None, refused)
    return redirect(url_for("admin.tax_rate", rate_id=created["id"], done="created"), 303)


@bp.route("/tax-rates/<id:rate_id>")
def tax_rate(rate_id):
    """A rate's page: the form to change it."""
    _require("tax.read")
    found = tax_rates.get(rate_id)
    return _page(found, found)


@bp.route("/tax-rates/<id:rate_id>", methods=["POST"])
def update_tax_rate(rate_id):
    """Change a rate, or show the form again with the API's refusal."""
    _require("tax.update")
    found = tax_rates.get(rate_id)
    try:
        data = forms.load(TaxRateUpdateSchema, _posted(), LABELS)
        forms.attempt(lambda: tax_rates.update(rate_id, data, g.caller.actor), LABELS)
    except Refused as refused:
        return _page(_posted(), found, refused)
    return redirect(url_for("admin.tax_rate", rate_id=rate_id, done="saved"), 303)


@bp.route("/tax-rates/<id:rate_id>/delete")
def confirm_delete_tax_rate(rate_id):
    """Ask before deleting a rate."""
    _require("tax.delete")
    return render_template("admin/store/tax_rate_delete.html", rate=tax_rates.get(rate_id))


@bp.route("/tax-rates/<id:rate_id>/delete", methods=["POST"])
def delete_tax_rate(rate_id):
    """Delete a rate (confirmed)."""
    _require("tax.delete")
    tax_rates.delete(rate_id, g.caller.actor)
    return redirect(url_for("admin.tax_rate_list", done="deleted"), 303)
