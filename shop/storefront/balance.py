"""The pay link of a balance an edit left due (docs/orders.md, "Collecting a balance"): the
page the customer reaches from the mail, by the link's token (``orders/balance_link.py``).

It shows the order as edited and its balance, and takes the card with the Payment Element
as the order's pay page does, for a PaymentIntent of the balance (``providers.
collect_balance``: found again on a reload, not made anew). Once paid it shows the order
with nothing left to pay. A wrong token is the 404 of a page that does not exist.
"""

from flask import redirect, render_template, url_for

from shop.errors import Conflict, NotFound
from shop.http.context import current_actor
from shop.orders import balance_link
from shop.orders import lifecycle as orders
from shop.payments import providers
from shop.storefront import frame
from shop.storefront.frame import bp


def _order(token: str) -> dict:
    order_id = balance_link.by_token(token)
    if order_id is None:
        raise NotFound("This link does not open an order: ask the shop for a new one.")
    return orders.load(order_id)


def _actor(order: dict):
    """The customer paying by the link, as the order's history names them."""
    return current_actor().acting_as("anonymous", label=order["customer"]["email"])


@bp.get("/balance/<token>")
def balance(token: str):
    """The order and its balance, with the card step while some is due."""
    order = _order(token)
    if order["balance_due_cents"] <= 0:
        return _page(order)
    try:
        payment = providers.collect_balance(order["id"], _actor(order))
    except Conflict as refusal:  # a Stripe outage is the storefront's 503 page
        return _page(order, refusal.message, 409)
    if payment["client_secret"] is None:  # paid meanwhile
        return _page(orders.load(order["id"]))
    return_url = url_for("store.balance_paid", token=token, _external=True)
    return frame.card_page(
        order, payment["client_secret"], return_url, balance_cents=payment["amount_cents"]
    )


def _page(order: dict, problem: str | None = None, status: int = 200):
    page = render_template(
        "store/balance.html", shop=frame.shop_settings(), order=order, problem=problem
    )
    return page, status


@bp.get("/balance/<token>/paid")
def balance_paid(token: str):
    """Where Stripe sends the customer back: the payment converges now (once, whatever the
    webhook does meanwhile), then the page."""
    order = _order(token)
    providers.balance_returned(order["id"], _actor(order))
    return redirect(url_for("store.balance", token=token), 303)
