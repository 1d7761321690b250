"""A signed-in customer's address book in the storefront: list, add, change, delete, and
the default for shipping (``shop/customers/addresses.py``, as ``/auth/me/addresses``).

An address is checked by the checkout's own schema and offers the countries the shop ships
to; another customer's address is a 404 page.
"""

from flask import redirect, render_template, request, url_for

from shop.customers import addresses
from shop.errors import ShopError
from shop.storefront import frame
from shop.storefront.account import signed_in
from shop.storefront.cart import address_from, countries
from shop.storefront.frame import bp


def _page(caller, status: int = 200, **values):
    page = render_template(
        "store/addresses.html",
        shop=frame.shop_settings(),
        caller=caller,
        countries=countries(),
        problem=values.pop("problem", None),
        **values,
    )
    return page, status


def _book():
    return redirect(url_for("store.account_addresses"), 303)


@bp.get("/account/addresses", endpoint="account_addresses")
@signed_in
def book(caller):
    """The customer's addresses, and a form for a new one."""
    return _page(caller, saved=addresses.list_addresses(caller.id), editing=None, form={})


@bp.post("/account/addresses", endpoint="account_address_add")
@signed_in
def add(caller):
    """Save a new address (the first becomes the default)."""
    address, problem = address_from(request.form)
    if problem is None:
        flags = {"default_shipping": True} if request.form.get("default") else {}
        try:
            addresses.add_address(caller.id, addresses.AddressChange(address, flags))
        except ShopError as refusal:
            problem = refusal.message
    if problem is not None:
        saved = addresses.list_addresses(caller.id)
        return _page(caller, 400, saved=saved, editing=None, form=request.form, problem=problem)
    return _book()


@bp.get("/account/addresses/<address_id>", endpoint="account_address")
@signed_in
def edit(caller, address_id: str):
    """The form that changes one address."""
    found = addresses.get_address(caller.id, address_id[:64])
    return _page(caller, saved=None, editing=found, form={})


@bp.post("/account/addresses/<address_id>", endpoint="account_address_change")
@signed_in
def change(caller, address_id: str):
    """Change one address."""
    found = addresses.get_address(caller.id, address_id[:64])
    address, problem = address_from(request.form)
    if problem is not None:
        return _page(caller, 400, saved=None, editing=found, form=request.form, problem=problem)
    flags = {"default_shipping": True} if request.form.get("default") else {}
    addresses.change_address(caller.id, found["id"], addresses.AddressChange(address, flags))
    return _book()


@bp.post("/account/addresses/<address_id>/default", endpoint="account_address_default")
@signed_in
def make_default(caller, address_id: str):
    """Make one address the default for shipping."""
    change = addresses.AddressChange({}, {"default_shipping": True})
    addresses.change_address(caller.id, address_id[:64], change)
    return _book()


@bp.post("/account/addresses/<address_id>/delete", endpoint="account_address_delete")
@signed_in
def delete(caller, address_id: str):
    """Delete one address (orders keep their own copy)."""
    addresses.delete_address(caller.id, address_id[:64])
    return _book()
