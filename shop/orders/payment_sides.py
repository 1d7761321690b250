"""Where the lifecycle finds a payment provider's rules, without importing payments.

A provider registers itself here (``register``) as a ``PaymentSide``: may a person mark its
orders paid, where its payment stands once the order moves, and its cancel at the provider
after an order's cancel has committed. ``payments.providers.Provider`` is one.
"""

# The payment statuses an order's cancel leaves as they are: money moved for them (``review``:
# received, a person refunds or honours it; the refunds): the cancel does not give it back.
_KEPT_ON_CANCEL = ("review", "partially_refunded", "refunded")
# Where a payment stands once its order reaches these statuses.
_FOLLOW = {
    "paid": "paid",
    "cancelled": "cancelled",
    "refunded": "refunded",
    "partially_refunded": "partially_refunded",
}


class PaymentSide:
    """What the lifecycle asks of a payment provider; the defaults are a manual payment's."""

    name = ""
    # Whether an order's cancel also cancels the payment at the provider, by a network call
    # once the cancel has committed (``cancel``); the cancel marks it due in its transaction.
    cancels_after_commit = False
    # Whether a person confirms the money arrived (marks the order paid by hand); a provider
    # that reports the outcome itself is the only one to move its orders to paid.
    paid_by_hand = True

    def enabled(self) -> bool:
        """Whether this provider may be used now (its settings are present)."""
        return True

    def follow(self, payment: dict, order_status: str) -> str:
        """The payment status once its order has moved to ``order_status``."""
        if order_status == "cancelled" and payment["status"] in _KEPT_ON_CANCEL:
            return payment["status"]
        return _FOLLOW.get(order_status, payment["status"])

    def cancel(self, order_id: str) -> None:
        """After an order's cancel has committed, never in a transaction: stop the money
        being taken at the provider. Never raises: a failure is logged, and retried by the
        worker."""


_SIDES: dict[str, PaymentSide] = {}


def register(side: PaymentSide) -> None:
    """Let the lifecycle find a provider's rules by its name (``payments.providers``)."""
    _SIDES[side.name] = side


def find(name: str | None, every: bool = False) -> PaymentSide | None:
    """The provider registered as ``name``, if enabled (``every``: enabled or not)."""
    found = _SIDES.get(name) if name else None
    return found if found is not None and (every or found.enabled()) else None


def registered() -> list[PaymentSide]:
    """Every registered provider, by name."""
    return [found for _, found in sorted(_SIDES.items())]


def side(name: str | None, every: bool = False) -> PaymentSide:
    """The rules of provider ``name`` if registered and enabled (``every``: enabled or not);
    otherwise the defaults."""
    return find(name, every) or PaymentSide()
