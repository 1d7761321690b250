"""Payment providers: how an order's money is asked for and followed, in one module.

Checkout names a provider by ``payment_method``, calls ``start`` inside its transaction and
``after_commit`` once it has committed (and on a replay); the order lifecycle calls ``follow``
when an order changes status. Neither knows which provider it talks to, so a card provider
plugs in by subclassing ``Provider`` and calling ``register`` at start-up, without touching
checkout.

``start`` runs inside the checkout transaction: it must not wait on the network. A provider
that talks to a payment service answers ``pending`` with its own reference (a payment
intent, a redirect) and later reports the outcome through an administrator or a webhook
that moves the order to ``paid``.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class PaymentStart:
    """What a provider answers when an order is placed."""

    status: str  # "pending", or "paid" when the money is already captured
    reference: str


class Provider:
    """One way of paying. Subclasses set ``name`` and may override both methods."""

    name = ""
    description = ""
    # Whether an order's cancel also cancels the payment at the provider, by a network call
    # once the cancel has committed (``cancel``); the cancel marks it due in its transaction.
    cancels_after_commit = False
    # Whether a person confirms the money arrived (marks the order paid by hand); a provider
    # that reports the outcome itself is the only one to move its orders to paid.
    paid_by_hand = True

    def enabled(self) -> bool:
        """Whether this provider may be chosen now (its settings are present)."""
        return True

    def start(self, order: dict) -> PaymentStart:
        """Ask for the money of a new order (``id``, ``number``, ``total_cents``, ``currency``)."""
        raise NotImplementedError

    def after_commit(self, order: dict) -> dict:
        """Once the checkout that placed ``order`` (as the API shows it) has committed, or
        answers it again for a replay: what may wait on the network. Answers the order to
        show, by default as it is."""
        return order

    def follow(self, payment: dict, order_status: str) -> str:
        """The payment status once its order has moved to ``order_status``.

        Cancelling keeps a payment that money moved for as it stands (in ``review``: money
        received that a person must refund or honour; ``refunded``): the order's cancel
        does not give it back.
        """
        if order_status == "cancelled" and payment["status"] in _KEPT_ON_CANCEL:
            return payment["status"]
        return _FOLLOW.get(order_status, payment["status"])

    def cancel(self, order_id: str) -> None:
        """After an order's cancel has committed, never in a transaction: stop the money
        being taken at the provider. Never raises: a failure is logged, and retried by the
        worker."""


_KEPT_ON_CANCEL = ("review", "partially_refunded", "refunded")
# Where a payment stands once its order reaches these statuses.
_FOLLOW = {
    "paid": "paid",
    "cancelled": "cancelled",
    "refunded": "refunded",
    "partially_refunded": "partially_refunded",
}


class Manual(Provider):
    """Bank transfer or cash on delivery: an administrator marks the order paid."""

    name = "manual"
    description = "Bank transfer or cash on delivery; the order stays pending until marked paid."

    def start(self, order: dict) -> PaymentStart:
        """Record a pending payment whose reference is the order number (for the transfer)."""
        return PaymentStart(status="pending", reference=order["number"])


_PROVIDERS: dict[str, Provider] = {}


def register(provider: Provider) -> None:
    """Make a provider available as a ``payment_method``."""
    _PROVIDERS[provider.name] = provider


def get(name: str, every: bool = False) -> Provider | None:
    """The provider called ``name``, if registered and enabled (``every``: enabled or not)."""
    provider = _PROVIDERS.get(name)
    return provider if provider is not None and (every or provider.enabled()) else None


def names(every: bool = False) -> list[str]:
    """Every enabled provider's name (``every``: registered ones, enabled or not)."""
    return sorted(name for name, p in _PROVIDERS.items() if every or p.enabled())


register(Manual())
