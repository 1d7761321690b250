"""Payment providers: how an order's money is asked for and followed, in one module.

Checkout names a provider by ``payment_method`` and calls ``start`` inside its transaction;
the order lifecycle finds its rules (``follow``, ``paid_by_hand``, ``cancel``) through
``orders/payment_sides.py``, where ``register`` puts it. Neither knows which provider it
talks to, so a card provider plugs in by subclassing ``Provider`` and calling ``register``
at start-up, without touching checkout or orders.

``start`` runs inside the checkout transaction: it must not wait on the network. A provider
that talks to a payment service answers ``pending`` with its own reference (a payment
intent, a redirect) and later reports the outcome through an administrator or a webhook
that moves the order to ``paid``.
"""

from dataclasses import dataclass

from shop.orders import payment_sides
from shop.orders.payment_sides import PaymentSide


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
    # Whether the payment is started by a network call after the checkout commits.
    starts_after_commit = False
    # Whether a refund's money goes back through the provider (``refund``, a network call
    # after the refund is written); otherwise a refund is recorded as done at once.
    refunds_through_provider = False

    def start(self, order: dict) -> PaymentStart:
        """Ask for the money of a new order (``id``, ``number``, ``total_cents``, ``currency``)."""
        raise NotImplementedError

    def refund(self, reference: str, amount_cents: int, refund_id: str, order_id: str) -> str:
        """Outside any transaction: give ``amount_cents`` of the payment ``reference`` back,
        keyed by ``refund_id``; answer the provider's refund id. Unreachable: a
        ``shop.errors.Deferred``; refused: ``shop.payments.RefundRefused``."""
        raise NotImplementedError


class Manual(Provider):
    """Bank transfer or cash on delivery: an administrator marks the order paid."""

    name = "manual"
    label = "Manual"
    description = "Bank transfer or cash on delivery; the order stays pending until marked paid."

    def start(self, order: dict) -> PaymentStart:
        """Record a pending payment whose reference is the order number (for the transfer)."""
        return PaymentStart(status="pending", reference=order["number"])


class Stripe(Provider):
    """Cards through Stripe (``payments/stripe/intents.py``), when its keys are set."""

    name = "stripe"
    label = "Stripe"
    description = "Card payment through Stripe; the storefront confirms it with Stripe.js."
    starts_after_commit = True
    cancels_after_commit = True
    paid_by_hand = False
    refunds_through_provider = True

    def enabled(self) -> bool:
        from shop.payments.stripe import gateway as stripe_gateway

        return stripe_gateway.configured()

    def start(self, order: dict) -> PaymentStart:
        """Pending, with no intent yet: it is created once the checkout has committed."""
        return PaymentStart(status="pending", reference="")

    def cancel(self, order_id: str) -> None:
        """Cancel the order's PaymentIntent at Stripe (``payments/stripe/cancel.py``)."""
        from shop.payments.stripe import cancel as stripe_cancel

        stripe_cancel.after_commit(order_id)

    def refund(self, reference: str, amount_cents: int, refund_id: str, order_id: str) -> str:
        """Refund through Stripe (``payments/stripe/refund.py``)."""
        from shop.payments.stripe import refund as stripe_refund

        return stripe_refund.send(reference, amount_cents, refund_id, order_id)


_PROVIDERS: dict[str, Provider] = {}


def register(provider: Provider) -> None:
    """Make a provider available as a ``payment_method``."""
    _PROVIDERS[provider.name] = provider
    payment_sides.register(provider)


def get(name: str, every: bool = False) -> Provider | None:
    """The provider called ``name``, if registered and enabled (``every``: enabled or not)."""
    provider = _PROVIDERS.get(name)
    return provider if provider is not None and (every or provider.enabled()) else None


def names(every: bool = False) -> list[str]:
    """Every enabled provider's name (``every``: registered ones, enabled or not)."""
    return sorted(name for name, p in _PROVIDERS.items() if every or p.enabled())


register(Manual())
register(Stripe())
