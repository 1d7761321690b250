"""Card payments through Stripe: start, confirm, webhook events and reconciliation.

The PaymentIntent is created after the checkout's transaction commits (``start``), never
inside it; its idempotency key is derived from the order id, so a retry (``POST
/orders/{id}/payment``, a replayed checkout) gets the same intent back. Every way to
``paid`` (the webhook, the storefront's confirm, an administrator) ends in
``orders.settle``/``change_status``, the one guarded transition: the order becomes ``paid``
once, ``order.paid`` is emitted once and one receipt is queued.

Each webhook event id is inserted into ``stripe_events`` in the transaction of its effect;
a duplicate (replayed, or concurrent: the primary key serialises them) changes nothing.
"""

import json

from shop import audit, db, webhooks
from shop.clock import now_iso
from shop.errors import abort
from shop.services import orders, refunds, stripe_cancel, stripe_gateway

PAYABLE = "pending"


def _order_payment(order_id: str, customer_id: str | None) -> dict:
    sql = (
        "SELECT o.id, o.number, o.status, o.total_cents, o.currency, p.provider, p.reference,"
        " p.amount_cents, p.status AS payment_status"
        " FROM orders o JOIN payments p ON p.order_id = o.id"
        " WHERE o.id = :id"
    )
    params = {"id": order_id}
    if customer_id is not None:
        sql += " AND o.customer_id = :customer_id"
        params["customer_id"] = customer_id
    row = db.one(sql, params)
    if row is None:
        abort(404, "Order not found.")
    return row


def start(order_id: str, customer_id: str | None = None) -> dict:
    """Start (or find again) the order's PaymentIntent; answer the payment with its secret.

    Idempotent: an intent already made is retrieved, and one that has succeeded settles the
    order (the storefront's confirm). Only a pending order gets a client secret: a cancelled
    one is a 409, its intent made or not (``_not_payable``), and one already paid answers its
    payment without a secret (a confirm after the webhook). Stripe unreachable: 503 with
    Retry-After. Stripe refusing it: 409 (502 for the shop's key) naming Stripe's reason,
    kept in the payment's note; the order stays pending.
    """
    row = _order_payment(order_id, customer_id)
    if row["provider"] != "stripe":
        abort(409, f"Order {row['number']} is not paid by card: there is nothing to start.")
    if row["status"] != PAYABLE:
        return _not_payable(row)
    try:
        if row["reference"]:
            intent = stripe_gateway.retrieve_intent(row["reference"])
        else:
            intent = stripe_gateway.create_intent(row)
    except stripe_gateway.Unavailable as error:
        stripe_gateway.unavailable(error=error)
    except stripe_gateway.Refused as refusal:
        _refused(row, refusal)
    if not row["reference"]:
        with db.transaction():
            db.execute(
                "UPDATE payments SET reference = :ref, updated_at = :now"
                " WHERE order_id = :id AND reference = ''",
                {"ref": intent.id, "now": now_iso(), "id": order_id},
            )
    if intent.status == "succeeded":
        _succeeded(intent.to_dict())
    # Read after the reference is written: a cancel that committed meanwhile is seen here
    # and its intent cancelled now (or the cancel saw the reference and cancels it itself).
    current = _order_payment(order_id, customer_id)
    if current["status"] == "cancelled":
        stripe_cancel.after_commit(order_id)
    if current["status"] != PAYABLE:
        return _not_payable(current)
    return {**_payment(current), "client_secret": intent.client_secret}


def _payment(row: dict) -> dict:
    return {
        "provider": row["provider"],
        "amount_cents": row["amount_cents"],
        "status": row["payment_status"],
        "reference": row["reference"],
    }


def _not_payable(row: dict) -> dict:
    """A cancelled order is a 409; any other status but pending was paid: its payment, with
    no secret."""
    if row["status"] == "cancelled":
        abort(409, f"Order {row['number']} is cancelled: no payment can be started for it.")
    return {**_payment(row), "client_secret": None}


def settle_found(intent: dict) -> None:
    """A succeeded intent found by asking Stripe, not by its event (the expiry of unpaid
    orders, ``services/stripe_expiry.py``): applied as ``payment_intent.succeeded`` is."""
    _succeeded(intent)


def _refused(row: dict, refusal) -> None:
    """Stripe will not start this payment: say why, in the answer and the payment's note."""
    with db.transaction():
        db.execute(
            "UPDATE payments SET note = :note, updated_at = :now"
            " WHERE order_id = :id AND status = 'pending'",
            {"note": f"Stripe refused: {refusal.reason}", "now": now_iso(), "id": row["id"]},
        )
    abort(
        refusal.status,
        f"Stripe refused the card payment of order {row['number']} ({refusal.reason}). The"
        " order is kept as pending and unpaid.",
    )


def handle_event(event: dict) -> bool:
    """Apply one verified event; answer False for a duplicate (nothing changed)."""
    obj = event.get("data", {}).get("object", {})
    handler = HANDLERS.get(event.get("type"))
    with db.transaction():
        payment = _payment_of(obj) if handler else None
        recorded = db.execute(
            "INSERT INTO stripe_events (id, type, order_id, received_at)"
            " VALUES (:id, :type, :order_id, :now) ON CONFLICT (id) DO NOTHING",
            {
                "id": event["id"],
                "type": event.get("type", ""),
                "order_id": payment["order_id"] if payment else None,
                "now": now_iso(),
            },
        )
        if not recorded:
            return False
        if payment is not None:
            handler(obj, payment)
    return True


def _payment_of(obj: dict) -> dict | None:
    """Our Stripe payment for an intent or a charge (by intent id, else metadata)."""
    intent_id = obj.get("payment_intent") if obj.get("object") == "charge" else obj.get("id")
    order_id = (obj.get("metadata") or {}).get("order_id")
    return db.one(
        "SELECT p.id, p.order_id, p.status, p.reference, o.total_cents, o.currency, o.number,"
        " o.status AS order_status FROM payments p JOIN orders o ON o.id = p.order_id"
        " WHERE p.provider = 'stripe' AND (p.reference = :ref OR p.order_id = :order_id)",
        # Never match an empty reference (an intent not made yet) or id by accident.
        {"ref": intent_id or "-", "order_id": order_id or "-"},
    )


def _succeeded(intent: dict, payment: dict | None = None) -> None:
    payment = payment or _payment_of(intent)
    received = intent.get("amount_received") or intent.get("amount")
    currency = (intent.get("currency") or "").upper()
    if received != payment["total_cents"] or currency != payment["currency"].upper():
        _review(payment, intent, received, currency)
        return
    with db.transaction():
        if payment["reference"] != intent["id"]:
            _set_payment(payment["id"], reference=intent["id"])
        orders.settle(payment["order_id"], "Paid by card (Stripe).")


def _review(payment: dict, intent: dict, received, currency: str) -> None:
    """Not paid: the amount or currency differs from the order's."""
    reason = (
        f"Stripe reports {received} {currency} for PaymentIntent {intent.get('id')};"
        f" order {payment['number']} is {payment['total_cents']} {payment['currency']}."
    )
    with db.transaction():
        _set_payment(payment["id"], status="review", note=reason)
        audit.record(
            "payment.review",
            {"order_id": payment["order_id"], "number": payment["number"], "reason": reason},
        )
        webhooks.emit("order.payment_review", payment["order_id"], orders.load)


def _failed(intent: dict, payment: dict) -> None:
    if payment["status"] == "pending":
        error = (intent.get("last_payment_error") or {}).get("message")
        _set_payment(payment["id"], status="failed", note=error)


def _canceled(intent: dict, payment: dict) -> None:
    """The intent was cancelled: the payment is; the order stays for an administrator."""
    if payment["status"] in ("pending", "failed"):
        _set_payment(payment["id"], status="cancelled", note=intent.get("cancellation_reason"))


def _refunded(charge: dict, payment: dict) -> None:
    refunds.record_external(payment["order_id"], charge.get("amount_refunded", 0), charge)


def _set_payment(payment_id: str, **values) -> None:
    sets = ", ".join(f"{name} = :{name}" for name in values)
    db.execute(
        f"UPDATE payments SET {sets}, updated_at = :now WHERE id = :id",
        {**values, "now": now_iso(), "id": payment_id},
    )


HANDLERS = {
    "payment_intent.succeeded": lambda obj, payment: _succeeded(obj, payment),
    "payment_intent.payment_failed": _failed,
    "payment_intent.canceled": _canceled,
    "charge.refunded": _refunded,
}


def reconcile(since: int | None, fix: bool) -> list[dict]:
    """Differences between our Stripe payments and Stripe's intents (applied with ``fix``)."""
    found = []
    for intent in stripe_gateway.list_intents(since):
        data = intent.to_dict()
        payment = _payment_of(data)
        if payment is None:
            continue
        if data["status"] == "succeeded" and payment["order_status"] == PAYABLE:
            found.append({"order": payment["number"], "difference": "paid at Stripe, pending"})
            if fix:
                _succeeded(data, payment)
        refunded = sum(r.amount for r in stripe_gateway.list_refunds(data["id"]))
        ours = db.value(
            "SELECT refunded_cents FROM orders WHERE id = :id", {"id": payment["order_id"]}
        )
        if refunded > ours:
            found.append(
                {
                    "order": payment["number"],
                    "difference": f"refunded {refunded} at Stripe, {ours} recorded",
                }
            )
            if fix:
                with db.transaction():
                    refunds.record_external(
                        payment["order_id"], refunded, {"id": f"reconcile-{data['id']}"}
                    )
    return found


def dumps(found: list[dict]) -> str:
    return "\n".join(json.dumps(item, sort_keys=True) for item in found)
