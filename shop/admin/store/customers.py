"""The console's Customers pages (issue 37): the list (search by name or e-mail, paged, as
``GET /customers?q=``), a customer's page (their orders, the addresses they shipped to, the
total they spent), and the API's actions on a customer: deactivate or reactivate
(``PATCH /customers/{id}``) and erase (``DELETE /customers/{id}``, after a confirmation page
that asks for the customer's e-mail to be typed).

Reading needs ``customers.read``; deactivating ``customers.update``; erasing
``customers.delete``; each runs ``customers/accounts.py``, the API's use case. The API offers
no export of a customer's data, so neither does the console (issue 37 asks for the actions
the API offers).
"""

from flask import g, redirect, render_template, request, url_for

from shop.admin.store import forms
from shop.admin.store.forms import Refused
from shop.admin.views import _require, bp
from shop.customers import accounts
from shop.customers.profile import SELECT, get_customer, present
from shop.db.pages import LIKE, Where, like_pattern
from shop.money import display

_DONE = {
    "active": "Reactivated: they can sign in again.",
    "inactive": "Deactivated: they are signed out and cannot sign in.",
    "erased": "Customer erased: their orders stay, with an anonymous customer.",
}


@bp.route("/customers")
def customer_list():
    """Customers, newest first, searched by name or e-mail."""
    _require("customers.read")
    q = request.args.get("q", "")[:200].strip()
    where = Where("c.erased_at IS NULL")
    if q:
        where.add(f"(LOWER(c.email) {LIKE} OR LOWER(c.name) {LIKE})", q=like_pattern(q))
    result, pages = forms.listing(
        SELECT, "customers c", " ORDER BY c.created_at DESC, c.id DESC", forms.page_number(), where
    )
    result["items"] = [present(row) for row in result["items"]]
    return render_template(
        "admin/store/customers.html",
        result=result,
        pages=pages,
        q=q,
        page_url=lambda number: url_for("admin.customer_list", q=q or None, page=number),
        done=_DONE.get(request.args.get("done", "")),
    )


def _page(customer_id: str, error: Refused | None = None):
    customer = present(get_customer(customer_id))
    page = render_template(
        "admin/store/customer.html",
        customer=customer,
        history=accounts.history(customer_id),
        money=display,
        error=error.message if error else None,
        done=_DONE.get(request.args.get("done", "")),
    )
    return (page, error.status, error.headers) if error else page


@bp.route("/customers/<id:customer_id>")
def customer(customer_id):
    """A customer: their orders, addresses, total spent, and the actions on them."""
    _require("customers.read")
    return _page(customer_id)


@bp.route("/customers/<id:customer_id>/active", methods=["POST"])
def toggle_customer(customer_id):
    """Deactivate a customer (signed out everywhere, no sign-in) or reactivate them."""
    _require("customers.update")
    active = request.form.get("set_active") == "1"
    try:
        forms.attempt(lambda: accounts.update(customer_id, {"active": active}, g.caller.actor), {})
    except Refused as refused:
        return _page(customer_id, refused)
    done = "active" if active else "inactive"
    return redirect(url_for("admin.customer", customer_id=customer_id, done=done), 303)


def _erase_page(customer: dict, error: str | None = None, status: int = 200):
    page = render_template("admin/store/customer_erase.html", customer=customer, error=error)
    return page, status


@bp.route("/customers/<id:customer_id>/erase")
def confirm_erase_customer(customer_id):
    """Ask before erasing: what goes, what stays, and the e-mail typed to confirm."""
    _require("customers.delete")
    return _erase_page(present(get_customer(customer_id)))


@bp.route("/customers/<id:customer_id>/erase", methods=["POST"])
def erase_customer(customer_id):
    """Erase a customer's personal data once their e-mail was typed to confirm."""
    _require("customers.delete")
    customer = present(get_customer(customer_id))
    if forms.text("confirm_email", 400).lower() != (customer["email"] or "").lower():
        message = "Type the customer's e-mail to confirm: nothing was erased."
        return _erase_page(customer, message, 400)
    try:
        forms.attempt(lambda: accounts.erase(customer_id, g.caller.actor), {})
    except Refused as refused:
        return _erase_page(customer, refused.message, refused.status)
    return redirect(url_for("admin.customer_list", done="erased"), 303)
