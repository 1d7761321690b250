"""Unpaid card orders expire (docs/payments.md#unpaid-card-orders-expire).

A ``pending`` card order placed more than ``SHOP_UNPAID_ORDER_TTL`` seconds ago (an hour by
default), whose payment is not under review, is looked up at Stripe first: an intent that
succeeded meanwhile settles the order as its webhook would, one still processing waits.
Otherwise the order is cancelled by the lifecycle's guarded move (``orders.cancel_unpaid``:
stock and the discount code's use given back, ``order.cancelled`` with the reason in its
status history, the customer's mail), and then its intent is cancelled at Stripe
(``stripe_cancel``). An order whose intent was never made (Stripe unreachable at checkout)
expires without asking Stripe: nobody was ever given a secret to pay it with.

Bank-transfer (``manual``) orders never expire here: the shop waits for the transfer and an
administrator cancels it. Run by the worker only (``shop/cli/jobs.py``), a bounded batch per
pass, the orders least recently looked at first; two workers at once are safe: every move
is guarded by the status it expects and the Stripe calls are idempotent.
"""

import logging
from datetime import timedelta

from flask import current_app

from shop import db
from shop.actor import Actor
from shop.clock import iso, now, now_iso
from shop.orders import lifecycle as orders
from shop.payments.stripe import gateway as stripe_gateway
from shop.payments.stripe import intents as stripe_payments

log = logging.getLogger("shop.payments")

# Most orders one pass looks at (each may cost a call to Stripe).
BATCH = 50


def reason(ttl: int) -> str:
    """The note of an expired order's cancel: its history, its event, the customer's mail."""
    minutes = ttl // 60
    unit = "minute" if minutes == 1 else "minutes"
    return f"Not paid within {minutes} {unit}: cancelled automatically (unpaid order expiry)."


def expire_unpaid(actor: Actor, limit: int = BATCH) -> int:
    """Expire the unpaid card orders past the TTL as ``actor``, at most ``limit`` looked at;
    answer how many this pass cancelled. Stripe unreachable: orders with an intent wait for the next
    pass, those without expire anyway."""
    ttl = current_app.config["UNPAID_ORDER_TTL"]
    rows = db.query(
        "SELECT o.id, p.id AS payment_id, p.reference FROM orders o"
        " JOIN payments p ON p.order_id = o.id"
        " WHERE o.status = 'pending' AND o.created_at <= :cutoff AND p.provider = 'stripe'"
        " AND p.status <> 'review' ORDER BY p.updated_at, o.id LIMIT :limit",
        {"cutoff": iso(now() - timedelta(seconds=ttl)), "limit": limit},
    )
    note, expired, reachable = reason(ttl), 0, True
    for row in rows:
        if row["reference"]:
            if not reachable:
                continue
            try:
                intent = stripe_gateway.retrieve_intent(row["reference"])
            except stripe_gateway.Refused as refusal:
                if refusal.status != 409:  # the shop's own key: nothing is known, wait
                    log.warning("unpaid card orders wait for the next pass: %s", refusal)
                    reachable = False
                    continue
                intent = None  # Stripe has no such intent: no money can have been taken
            except stripe_gateway.Unavailable as error:
                log.warning("unpaid card orders wait for the next pass: %s", error)
                reachable = False
                continue
            if (
                intent is not None and intent.status == "succeeded"
            ):  # paid meanwhile; its webhook may be late
                stripe_payments.settle_found(intent.to_dict(), actor)
                continue
            if (
                intent is not None and intent.status == "processing"
            ):  # Stripe decides; look at the others first
                db.execute(
                    "UPDATE payments SET updated_at = :now WHERE id = :id",
                    {"now": now_iso(), "id": row["payment_id"]},
                )
                continue
        expired += orders.cancel_unpaid(row["id"], note, actor)
    return expired
