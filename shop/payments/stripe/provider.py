"""The Stripe provider: cards through Stripe, when its keys are set (registered by
``shop/payments/__init__.py``)."""

from shop.actor import Actor
from shop.payments.providers import PaymentStart, Provider
from shop.payments.stripe import balance as stripe_balance
from shop.payments.stripe import cancel as stripe_cancel
from shop.payments.stripe import expiry as stripe_expiry
from shop.payments.stripe import gateway as stripe_gateway
from shop.payments.stripe import intents as stripe_payments
from shop.payments.stripe import refund as stripe_refund


class Stripe(Provider):
    """Cards through Stripe (``payments/stripe/intents.py``), when its keys are set."""

    name = "stripe"
    label = "Stripe"
    description = "Card payment through Stripe; the storefront confirms it with Stripe.js."
    cancels_after_commit = True
    paid_by_hand = False
    refunds_through_provider = True

    def enabled(self) -> bool:
        return stripe_gateway.configured()

    def start(self, order: dict) -> PaymentStart:
        """Pending, with no intent yet: it is created once the checkout has committed."""
        return PaymentStart(status="pending", reference="")

    def after_commit(self, order: dict, actor: Actor) -> dict:
        """Create (or find again) the order's PaymentIntent; the payment comes with its client
        secret. Stripe unreachable: 503 with Retry-After, the order staying pending."""
        return {
            **order,
            "payment": stripe_payments.start(order["id"], actor, order["customer"]["id"]),
        }

    def cancel(self, order_id: str) -> None:
        """Cancel the order's PaymentIntent at Stripe (``payments/stripe/cancel.py``)."""
        stripe_cancel.after_commit(order_id)

    def refund(
        self, reference: str, amount_cents: int, refund_id: str, order_id: str, part: int = 0
    ) -> str:
        """Refund through Stripe (``payments/stripe/refund.py``)."""
        return stripe_refund.send(reference, amount_cents, refund_id, order_id, part)

    def resume(self, order_id: str, actor: Actor, customer_id: str | None, number: str) -> dict:
        """Create or find the order's PaymentIntent (``payments/stripe/intents.py``)."""
        return stripe_payments.start(order_id, actor, customer_id)

    def collect_balance(self, order_id: str, actor: Actor) -> dict:
        """The balance's PaymentIntent (``payments/stripe/balance.py``)."""
        return stripe_balance.start(order_id, actor)

    def balance_returned(self, order_id: str, actor: Actor) -> None:
        """Apply the balance intents Stripe holds as paid (``payments/stripe/balance.py``)."""
        stripe_balance.confirm_all(order_id, actor)

    def handle_event(self, body: bytes, headers, actor: Actor) -> bool:
        """A signed Stripe event (``payments/stripe/intents.py``)."""
        return stripe_payments.receive(body, headers.get("Stripe-Signature"), actor)

    def follow_up(self, actor: Actor) -> None:
        """Cancel at Stripe the intents of cancelled orders still due, then expire the unpaid
        card orders (``payments/stripe/expiry.py``)."""
        stripe_cancel.retry_due()
        stripe_expiry.expire_unpaid(actor)

    def reconcile(self, since: int | None, fix: bool, actor: Actor) -> list[dict]:
        """Our card payments against Stripe's intents (``payments/stripe/intents.py``)."""
        return stripe_payments.reconcile_job(since, fix, actor)
