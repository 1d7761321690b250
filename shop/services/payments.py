"""Payment providers: how an order's money is asked for and followed, in one module.

Checkout names a provider by ``payment_method`` and calls ``start`` inside its transaction;
the order lifecycle calls ``follow`` when an order changes status. Neither knows which
provider it talks to, so a card provider plugs in by subclassing ``Provider`` and calling
``register`` at start-up, without touching checkout.

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

    def start(self, order: dict) -> PaymentStart:
        """Ask for the money of a new order (``id``, ``number``, ``total_cents``, ``currency``)."""
        raise NotImplementedError

    def follow(self, payment: dict, order_status: str) -> str:
        """The payment status once its order has moved to ``order_status``."""
        return _FOLLOW.get(order_status, payment["status"])


# Where a payment stands once its order reaches these statuses.
_FOLLOW = {"paid": "paid", "cancelled": "cancelled", "refunded": "refunded"}


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


def get(name: str) -> Provider | None:
    """The provider called ``name``, if registered."""
    return _PROVIDERS.get(name)


def names() -> list[str]:
    """Every registered provider's name."""
    return sorted(_PROVIDERS)


register(Manual())
