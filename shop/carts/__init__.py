"""Carts (issue 38): a basket kept on the server that any visitor fills and completes, with
or without an account. ``store`` (the cart and its lines), ``present`` (how a cart reads:
availability and the quote's totals), ``completing`` (the order, through
``checkout.placing``), ``claiming`` (a guest cart taken by a signed-in customer, merged),
``reminders`` (carts left behind, and their expiry). docs/orders.md has the rules."""

from shop.carts import store
from shop.customers import accounts
from shop.errors import Conflict
from shop.orders import guests


def _erase_with(customer: dict) -> None:
    """A customer erased: their carts, and the guest orders placed with their e-mail (an
    open one refuses the erasure, as the customer's own open orders do)."""
    email = customer["email"]
    open_order = email and guests.open_order_number(email)
    if open_order:
        raise Conflict(
            f"This customer's order {open_order} is still open: deliver, cancel or"
            " refund it before erasing the customer."
        )
    store.erase(customer["id"], email)
    if email:
        guests.erase(email)


accounts.ERASED_WITH.append(_erase_with)
