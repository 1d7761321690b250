"""Payment providers: how an order's money is asked for and followed, in one module.

Checkout names a provider by ``payment_method``, calls ``start`` inside its transaction and
``after_commit`` once it has committed (and on a replay); the order lifecycle finds its rules
(``follow``, ``paid_by_hand``, ``cancel``) through ``orders/payment_sides.py``, where
``register`` puts it. Neither knows which provider it talks to, so a card provider plugs in
by subclassing ``Provider`` and calling ``register`` at start-up, without touching checkout
or orders.

``start`` runs inside the checkout transaction: it must not wait on the network. A provider
that talks to a payment service answers ``pending`` with its own reference (a payment
intent, a redirect) and later reports the outcome through an administrator or a webhook
that moves the order to ``paid``.
"""

from dataclasses import dataclass

from shop import db
from shop.actor import Actor
from shop.errors import Conflict, NotFound
from shop.orders import payment_sides
from shop.orders.payment_sides import PaymentSide


class RefundRefused(Exception):
    """The provider refused to give a refund's money back (``reason``: its code and
    message; ``ours``: it refused the shop's own credentials)."""

    def __init__(self, reason: str, ours: bool = False):
        super().__init__(reason)
        self.reason, self.ours = reason, ours


class ProviderFailed(Exception):
    """A provider's job run from the CLI could not be done (not configured, unreachable,
    refused); the message says why, for a person."""


@dataclass(frozen=True)
class PaymentStart:
    """What a provider answers when an order is placed."""

    status: str  # "pending", or "paid" when the money is already captured
    reference: str


class Provider(PaymentSide):
    """One way of paying. Subclasses set ``name`` and override what differs; the order's
    side of the rules (``paid_by_hand``, ``follow``, ``cancel``) comes from ``PaymentSide``."""

    name = ""
    description = ""
    # How messages name it ("Stripe refused the refund").
    label = ""
    # Whether a refund's money goes back through the provider (``refund``, a network call
    # after the refund is written); otherwise a refund is recorded as done at once.
    refunds_through_provider = False

    def start(self, order: dict) -> PaymentStart:
        """Ask for the money of a new order (``id``, ``number``, ``total_cents``, ``currency``)."""
        raise NotImplementedError

    def after_commit(self, order: dict, actor: Actor) -> dict:
        """Once the checkout that placed ``order`` (as the API shows it) has committed, or
        answers it again for a replay: what may wait on the network. Answers the order to
        show, by default as it is."""
        return order

    def refund(
        self, reference: str, amount_cents: int, refund_id: str, order_id: str, part: int = 0
    ) -> str:
        """Outside any transaction: give ``amount_cents`` of the payment ``reference`` back,
        keyed by ``refund_id`` and its ``part`` (a refund split over the order's captures:
        ``payments/refund_parts.py``); answer the provider's refund id. Unreachable: a
        ``shop.errors.Deferred``; refused: ``RefundRefused``."""
        raise NotImplementedError

    def resume(self, order_id: str, actor: Actor, customer_id: str | None, number: str) -> dict:
        """Start again, or confirm, the payment of order ``number`` (``POST
        /orders/{id}/payment``); answer the payment. Only a provider paid online has one."""
        raise Conflict(f"Order {number} is not paid by card: there is nothing to start.")

    def collect_balance(self, order_id: str, actor: Actor) -> dict:
        """The card payment of the balance an edit left due (the pay link's page):
        ``{"amount_cents", "currency", "client_secret"}``, the secret None when nothing is
        due. Only a provider paid online collects one."""
        raise Conflict("This order's balance is not paid online: the shop records it.")

    def balance_returned(self, order_id: str, actor: Actor) -> None:
        """The customer is back from paying a balance: what the provider says is applied."""

    def handle_event(self, body: bytes, headers, actor: Actor) -> bool:
        """Apply one event the provider sent to its webhook (``body`` as received, the
        request's ``headers``); answer False for a duplicate."""
        raise NotFound(f"{self.label} sends no events.")

    def follow_up(self, actor: Actor) -> None:
        """The worker's periodic work for this provider, as ``actor`` (once a minute): payments
        still to cancel at the provider, unpaid orders to expire. By default none."""

    def reconcile(self, since: int | None, fix: bool, actor: Actor) -> list[dict] | None:
        """Differences between our payments and the provider's (``since``: a Unix time),
        fixing what may be fixed with ``fix``; None when the provider keeps no payments of
        its own to compare. A job that cannot run raises ``ProviderFailed``."""
        return None


class Manual(Provider):
    """Bank transfer or cash on delivery: an administrator marks the order paid."""

    name = "manual"
    label = "Manual"
    description = "Bank transfer or cash on delivery; the order stays pending until marked paid."

    def start(self, order: dict) -> PaymentStart:
        """Record a pending payment whose reference is the order number (for the transfer)."""
        return PaymentStart(status="pending", reference=order["number"])


def register(provider: Provider) -> None:
    """Make a provider available as a ``payment_method``; the one registry is the one the
    order lifecycle reads its rules from (``orders/payment_sides.py``)."""
    payment_sides.register(provider)


def get(name: str, every: bool = False) -> Provider | None:
    """The provider called ``name``, if registered and enabled (``every``: enabled or not)."""
    return payment_sides.find(name, every)


def resume(order_id: str, actor: Actor, customer_id: str | None = None) -> dict:
    """Start again, or confirm, an order's payment at its provider (with ``customer_id``:
    only that customer's order, 404 otherwise)."""
    sql = (
        "SELECT o.number, p.provider FROM orders o JOIN payments p ON p.order_id = o.id"
        " WHERE o.id = :id"
    )
    if customer_id is not None:
        sql += " AND o.customer_id = :cid"
    row = db.one(sql, {"id": order_id, "cid": customer_id})
    if row is None:
        raise NotFound("Order not found.")
    provider = get(row["provider"], every=True) or Provider()
    return provider.resume(order_id, actor, customer_id, row["number"])


def _of_order(order_id: str) -> Provider:
    name = db.value("SELECT provider FROM payments WHERE order_id = :id", {"id": order_id})
    if name is None:
        raise NotFound("Order not found.")
    return get(name, every=True) or Provider()


def collect_balance(order_id: str, actor: Actor) -> dict:
    """The payment of an order's balance at its provider (``Provider.collect_balance``)."""
    return _of_order(order_id).collect_balance(order_id, actor)


def balance_returned(order_id: str, actor: Actor) -> None:
    """Back from paying an order's balance (``Provider.balance_returned``)."""
    _of_order(order_id).balance_returned(order_id, actor)


def event(name: str, body: bytes, headers, actor: Actor) -> bool:
    """Apply an event provider ``name`` sent to its webhook; answer False for a duplicate.
    A provider not configured: 404."""
    provider = get(name)
    if provider is None:
        raise NotFound("Card payments are not configured.")
    return provider.handle_event(body, headers, actor)


def follow_up(actor: Actor) -> None:
    """Every enabled provider's periodic work (``Provider.follow_up``), as ``actor``."""
    for provider in payment_sides.registered():
        if provider.enabled():
            provider.follow_up(actor)


def reconciling() -> list[Provider]:
    """Every registered provider that keeps payments of its own to compare with ours."""
    return [p for p in payment_sides.registered() if type(p).reconcile is not Provider.reconcile]


def names(every: bool = False) -> list[str]:
    """Every enabled provider's name (``every``: registered ones, enabled or not)."""
    return [p.name for p in payment_sides.registered() if every or p.enabled()]


register(Manual())
