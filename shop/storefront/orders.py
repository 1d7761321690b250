"""A placed order as its buyer sees it: the confirmation and status page (a guest reaches it
with the order's token, as the API's ``GET /orders/{id}?token=``), and the card step."""

from flask import redirect, render_template, request, url_for

from shop.errors import NotFound
from shop.http.context import current_actor
from shop.orders import guests
from shop.orders import lifecycle as orders
from shop.payments import providers
from shop.storefront import frame
from shop.storefront.frame import bp


def _readable(order_id: str) -> tuple[dict, str | None]:
    """The order this browser may read: with its token (a guest), or the signed-in
    customer's own; a 404 otherwise (never telling which)."""
    token = request.args.get("token", "")[:100] or None
    order = None
    if token is not None and guests.holds(order_id[:64], token):
        order = orders.load(order_id)
    elif (caller := frame.store_caller()) is not None:
        order = orders.load(order_id[:64], caller.id)
    if order is None:
        raise NotFound("Order not found.")
    return order, token


@bp.get("/orders/<order_id>")
def order(order_id: str):
    """The order's confirmation (just placed) or status page."""
    found, token = _readable(order_id)
    return render_template(
        "store/order.html",
        shop=frame.shop_settings(),
        order=found,
        token=token,
        placed=request.args.get("placed") == "1",
    )


@bp.get("/orders/<order_id>/pay")
def pay(order_id: str):
    """The card step of an order placed with a card: Stripe's Payment Element, with the
    order's PaymentIntent (made at checkout, or now if Stripe was away then)."""
    found, token = _readable(order_id)
    payment = _resume(found)
    if payment.get("client_secret") is None:  # paid (or not payable): its page says which
        return redirect(url_for("store.order", order_id=found["id"], token=token), 303)
    return_url = url_for("store.paid", order_id=found["id"], token=token, _external=True)
    return frame.card_page(found, payment["client_secret"], return_url, token=token)


@bp.get("/orders/<order_id>/paid")
def paid(order_id: str):
    """Where Stripe sends the buyer back: the payment converges now (once, whatever the
    webhook does meanwhile), then the order's page."""
    if _back_from_stripe():
        return render_template("store/continue.html", shop=frame.shop_settings())
    found, token = _readable(order_id)
    _resume(found)
    return redirect(url_for("store.order", order_id=found["id"], token=token, placed=1), 303)


def _back_from_stripe() -> bool:
    """Whether a signed-in customer may be coming back from Stripe's site: their session
    cookie (SameSite=Strict) does not come with a navigation from another site, so a page of
    ours sends them on to the same address, with it (the order is theirs, no token)."""
    return (
        request.headers.get("Sec-Fetch-Site") == "cross-site"
        and "token" not in request.args
        and frame.store_caller() is None
    )


def _resume(order: dict) -> dict:
    """The order's card payment, found or made at Stripe; a succeeded one marks it paid."""
    actor = current_actor().acting_as("anonymous", label="storefront order page")
    return providers.resume(order["id"], actor, None)
