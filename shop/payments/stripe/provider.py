"""The card provider: payments through Stripe, registered as ``stripe`` when the app starts."""

from shop.payments import providers
from shop.payments.stripe import cancel as stripe_cancel
from shop.payments.stripe import gateway as stripe_gateway
from shop.payments.stripe import intents as stripe_intents


class Stripe(providers.Provider):
    """Cards through Stripe (``payments/stripe/intents.py``), when its keys are set."""

    name = "stripe"
    description = "Card payment through Stripe; the storefront confirms it with Stripe.js."
    cancels_after_commit = True
    paid_by_hand = False

    def enabled(self) -> bool:
        return stripe_gateway.configured()

    def start(self, order: dict) -> providers.PaymentStart:
        """Pending, with no intent yet: it is created once the checkout has committed."""
        return providers.PaymentStart(status="pending", reference="")

    def after_commit(self, order: dict) -> dict:
        """Create (or find again) the order's PaymentIntent; the payment comes with its client
        secret. Stripe unreachable: 503 with Retry-After, the order staying pending."""
        return {**order, "payment": stripe_intents.start(order["id"], order["customer"]["id"])}

    def cancel(self, order_id: str) -> None:
        """Cancel the order's PaymentIntent at Stripe (``payments/stripe/cancel.py``)."""
        stripe_cancel.after_commit(order_id)


providers.register(Stripe())
