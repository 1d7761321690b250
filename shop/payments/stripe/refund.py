"""A refund's money given back at Stripe (``Provider.refund`` of the Stripe provider)."""

from shop.payments.providers import RefundRefused
from shop.payments.stripe import gateway as stripe_gateway


def send(reference: str, amount_cents: int, refund_id: str, order_id: str, part: int = 0) -> str:
    """Refund ``amount_cents`` of the intent ``reference``, keyed by our refund's id and its
    part (one per intent the refund is split over); answer
    Stripe's refund id. Unreachable: 503 with Retry-After (the refund stays pending);
    refused: ``RefundRefused`` with Stripe's reason."""
    try:
        return stripe_gateway.create_refund(reference, amount_cents, refund_id, order_id, part).id
    except stripe_gateway.Unavailable as error:
        stripe_gateway.unavailable(
            "The refund could not be sent to Stripe; it is kept as pending. Retry with the"
            " same Idempotency-Key.",
            error,
        )
    except stripe_gateway.Refused as refusal:
        raise RefundRefused(refusal.reason, ours=refusal.status == 502) from None
