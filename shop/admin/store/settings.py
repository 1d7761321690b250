"""The console's Settings page (issue 37): every setting of ``/settings`` in one form.

Reading needs ``settings.read``, saving ``settings.update``, as the API. The form sends the
settings that changed, loaded through the API's schema and stored by ``site.change`` (the
use case of ``PATCH /settings``), so every rule and message is the API's: among them, the
currency is fixed once an order exists, and the page shows it locked then. An empty optional
field clears it (the API's ``null``).

The sender address of the shop's mail is the operator's (``SHOP_MAIL_FROM``: the mail
server must be allowed to send as it), so the page shows it without a field; mail goes out
as "<shop name> <sender>".
"""

from flask import current_app, g, redirect, render_template, request, url_for

from shop.admin.store import forms
from shop.admin.store.forms import Refused
from shop.admin.views import _require, bp
from shop.api.store_input import SettingsUpdateSchema
from shop.site import settings as site

LABELS = {
    "shop_name": "Shop name",
    "currency": "Currency",
    "contact_email": "Contact e-mail",
    "contact_phone": "Contact phone",
    "address": "Address",
    "order_number_prefix": "Order number prefix",
    "vat_id": "VAT id",
    "invoice_prefix": "Invoice number prefix",
    "credit_note_prefix": "Credit note number prefix",
    "invoice_on": "Invoice when",
    "locale": "Locale",
    "bank_transfer_instructions": "Bank transfer instructions",
    "brand_color": "Brand colour",
    "logo_url": "Logo",
}
_OPTIONAL = (
    "contact_email",
    "contact_phone",
    "address",
    "vat_id",
    "bank_transfer_instructions",
    "logo_url",
)
_CHECKS = ("prices_include_tax", "require_two_factor", "invoice_attach_to_mail", "cart_reminders")
# When an order is invoiced (``invoice_on``), as the form offers it.
_INVOICE_ON = [("paid", "When it is paid"), ("shipment", "At its first shipment")]
_DONE = {"saved": "Settings saved.", "unchanged": "Nothing to save: no setting changed."}


def _page(form: dict, error: Refused | None = None):
    page = render_template(
        "admin/store/settings.html",
        form=form,
        currencies=[(code, code) for code in sorted(site.CURRENCIES)],
        invoice_on=_INVOICE_ON,
        locked=site.currency_locked(),
        sender=current_app.config["MAIL_FROM"],
        error=error.message if error else None,
        done=_DONE.get(request.args.get("done", "")),
    )
    return (page, error.status, error.headers) if error else page


@bp.route("/settings")
def settings_page():
    """The shop's settings."""
    _require("settings.read")
    return _page(site.current())


def _posted() -> dict:
    """The posted form as the settings' values. A text field the form did not send is left
    as it is (the locked currency is not sent); a checkbox not sent is unticked."""
    form = {field: forms.text(field, 2000) for field in LABELS if field in request.form}
    for field in _OPTIONAL:
        if field in form:
            form[field] = form[field] or None
    for field in _CHECKS:
        form[field] = forms.checked(field)
    return form


@bp.route("/settings", methods=["POST"])
def save_settings():
    """Save the settings that changed, or show the form again with the API's refusal."""
    _require("settings.update")
    posted, stored = _posted(), site.current()
    changes = {key: value for key, value in posted.items() if value != stored.get(key)}
    if not changes:
        return redirect(url_for("admin.settings_page", done="unchanged"), 303)
    try:
        data = forms.load(SettingsUpdateSchema, changes, LABELS)
        forms.attempt(lambda: site.change(data, g.caller.actor), LABELS)
    except Refused as refused:
        return _page({**stored, **posted}, refused)
    return redirect(url_for("admin.settings_page", done="saved"), 303)
