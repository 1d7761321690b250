"""The PaymentIntent of a cancelled card order, cancelled at Stripe (docs/payments.md).

An order's cancel marks its payment ``provider_cancel = 'due'`` in its own transaction
(``orders._follow_payment``). Once that has committed, ``cancel`` asks Stripe to cancel the
intent (idempotency key ``order-<id>-intent-cancel``: a retry is safe) and records what
Stripe holds: ``cancelled``, or ``succeeded`` when the money was taken first, which is left
to the webhook's review path and to reconcile (Stripe refuses to cancel it). While Stripe
cannot be reached the mark stays ``due`` and the worker's ``retry_due`` tries again.

It imports no order module: the orders lifecycle reaches it through the payment provider
(``payments/providers.py``), and checkout's payment start (``stripe_payments.start``) when
a cancel overtook it.
"""

import logging

from shop import db
from shop.clock import now_iso
from shop.payments.stripe import gateway as stripe_gateway

log = logging.getLogger("shop.payments")

# Most intents the worker's retry asks Stripe about in one pass.
BATCH = 50
# Stripe's ``cancellation_reason``, by who cancelled the order; the same for every attempt
# (an idempotency key must be sent with the same parameters).
REASONS = {"customer": "requested_by_customer"}
GIVEN_UP = "abandoned"  # staff, the expiry of unpaid orders
OUTCOMES = {"canceled": "cancelled", "succeeded": "succeeded"}


def cancel(order_id: str) -> str | None:
    """Cancel at Stripe the intent of a cancelled order marked due; answer what is recorded
    (``cancelled``, ``succeeded``), or None when there is nothing to settle now (no mark, no
    intent yet, or Stripe is still processing the payment: the mark stays).

    Raises ``stripe_gateway.Unavailable`` when Stripe cannot be reached, and ``Refused`` when
    it refuses the shop's own key: the mark stays. Stripe refusing the cancel itself (no such
    intent) is recorded as ``refused``, never asked again.
    """
    payment = db.one(
        "SELECT p.id, p.reference, h.by_kind FROM payments p LEFT JOIN order_status_history h"
        " ON h.order_id = p.order_id AND h.status = 'cancelled'"
        " WHERE p.order_id = :id AND p.provider_cancel = 'due'",
        {"id": order_id},
    )
    if payment is None or not payment["reference"]:
        return None
    reason = REASONS.get(payment["by_kind"], GIVEN_UP)
    try:
        intent = stripe_gateway.cancel_intent(payment["reference"], order_id, reason)
        outcome = OUTCOMES.get(intent.status)
    except stripe_gateway.Refused as refusal:
        if refusal.status != 409:  # the shop's own key: the operator acts, then it retries
            raise
        # Stripe will never cancel it (no such intent): asking again changes nothing.
        log.warning(
            "PaymentIntent of cancelled order %s: Stripe refused to cancel it (%s)",
            order_id,
            refusal.reason,
        )
        intent, outcome = None, "refused"
    if outcome is None:
        return None
    db.execute(
        "UPDATE payments SET provider_cancel = :outcome, updated_at = :now"
        " WHERE id = :id AND provider_cancel = 'due'",
        {"outcome": outcome, "now": now_iso(), "id": payment["id"]},
    )
    if outcome == "succeeded":
        log.warning(
            "PaymentIntent %s of cancelled order %s had succeeded at Stripe: not cancelled,"
            " left to review and reconcile",
            intent.id,
            order_id,
        )
    return outcome


def after_commit(order_id: str) -> None:
    """Right after an order's cancel has committed: ``cancel``, never failing the cancel
    itself (it is done); a failure is logged and the worker retries."""
    try:
        cancel(order_id)
    except stripe_gateway.Unavailable as error:
        log.warning(
            "PaymentIntent of cancelled order %s not cancelled yet (%s); the worker retries",
            order_id,
            error,
        )
    except Exception:  # noqa: BLE001 - the order is cancelled whatever Stripe answers
        log.exception(
            "PaymentIntent of cancelled order %s not cancelled; the worker retries", order_id
        )


def retry_due(limit: int = BATCH) -> int:
    """The worker: cancel the intents still marked due, the least recently tried first (a
    payment Stripe is still processing does not hold up the others); stop at the first
    outage, for the next pass. Answer how many were settled."""
    rows = db.query(
        "SELECT id, order_id FROM payments WHERE provider_cancel = 'due' AND reference <> ''"
        " ORDER BY updated_at, id LIMIT :limit",
        {"limit": limit},
    )
    settled = 0
    for row in rows:
        db.execute(
            "UPDATE payments SET updated_at = :now WHERE id = :id",
            {"now": now_iso(), "id": row["id"]},
        )
        try:
            settled += cancel(row["order_id"]) is not None
        except (stripe_gateway.Unavailable, stripe_gateway.Refused) as error:
            log.warning("cancelling PaymentIntents at Stripe waits for the next pass: %s", error)
            break
    return settled
