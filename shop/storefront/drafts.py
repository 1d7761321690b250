"""A draft order's pay link (docs/draft-orders.md, "The pay link"): the page the customer
reaches from the mail ``POST /draft-orders/{id}/send`` queues, by the draft's token.

An open draft shows priced as the API shows it (the quote's function), with a button that
completes it paid by card (``drafts.completing``, the checkout's own placing: the stock is
taken then) and leads to the card step: the order's Payment Element, as the order pay page
has it, reached by the draft's token rather than the order's (a customer's order has none).
A completed draft's page shows its order. A wrong token is the 404 of a page that does not
exist.
"""

from flask import redirect, render_template, url_for

from shop.drafts import completing, sending
from shop.drafts import store as drafts
from shop.errors import Conflict, NotFound, ShopError
from shop.http.context import current_actor
from shop.orders import lifecycle as orders
from shop.payments import providers
from shop.site import settings
from shop.storefront import frame
from shop.storefront.frame import bp

CARD = "stripe"


def _draft(token: str) -> dict:
    row = sending.by_token(token)
    if row is None:
        raise NotFound("This link does not open an order: ask the shop for a new one.")
    return row


def _actor(row: dict):
    """The customer paying by the link, as the order's history names them."""
    email = row["customer_email"] if row["customer_id"] else row["email"]
    return current_actor().acting_as("anonymous", label=email)


@bp.get("/drafts/<token>")
def draft(token: str):
    """The draft priced, with its Pay button; once completed, its order."""
    row = _draft(token)
    return _page(row, token)


def _page(row: dict, token: str, problem: str | None = None, status: int = 200):
    order = orders.load(row["order_id"]) if row["order_id"] else None
    page = render_template(
        "store/draft.html",
        shop=settings.current(),
        draft=drafts.present(row),
        order=order,
        token=token,
        card=CARD in providers.names(),
        problem=problem,
    )
    return page, status


@bp.post("/drafts/<token>/pay")
def draft_pay(token: str):
    """Complete the draft paid by card, then the card step."""
    row = _draft(token)
    # A credit covering the total: nothing to pay, the order is made paid (any method).
    method = CARD if drafts.present(row)["amount_due_cents"] != 0 else "manual"
    if method not in providers.names():
        return _page(row, token, "payment_method: this shop takes no card payments now.", 409)
    if row["status"] == "open":
        try:
            completing.complete(row["id"], method, _actor(row))
        except ShopError as refusal:
            now = drafts.find(row["id"])
            if now["status"] == "open":  # else placed, and Stripe was away: the card step
                status = 409 if isinstance(refusal, Conflict) else 400
                return _page(now, token, refusal.message, status)
    return redirect(url_for("store.draft_card", token=token), 303)


@bp.get("/drafts/<token>/card")
def draft_card(token: str):
    """The card step of the draft's order: Stripe's Payment Element."""
    row = _draft(token)
    order = orders.load(row["order_id"]) if row["order_id"] else None
    if order is None or order["payment"]["provider"] != CARD:
        return redirect(url_for("store.draft", token=token), 303)
    payment = providers.resume(order["id"], _actor(row))
    if payment.get("client_secret") is None:  # paid (or not payable): its page says which
        return redirect(url_for("store.draft", token=token), 303)
    return_url = url_for("store.draft_paid", token=token, _external=True)
    return frame.card_page(order, payment["client_secret"], return_url)


@bp.get("/drafts/<token>/paid")
def draft_paid(token: str):
    """Where Stripe sends the customer back: the payment converges now, then the page."""
    row = _draft(token)
    if row["order_id"]:
        providers.resume(row["order_id"], _actor(row))
    return redirect(url_for("store.draft", token=token), 303)
