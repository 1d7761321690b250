"""A balance an edit left due on a card order, paid by card (docs/orders.md, "Collecting a
balance").

``start`` finds or makes, under the order's lock, the one balance payment
(``balance_payments``) asking for the balance as it is now, then its PaymentIntent at Stripe
(the key derived from the balance payment's id, so reloads of the pay link's page make no
new intent); a balance payment asking for another amount (the balance changed since) is
cancelled, here and at Stripe. Stripe's ``payment_intent.succeeded`` of a balance intent
(``succeeded``, run by the webhook, the page's return and reconcile under the order's lock)
lowers the balance by what the intent received, once per intent.
"""

import contextlib

from shop import audit, db, money, webhooks
from shop.actor import Actor
from shop.clock import now_iso
from shop.errors import Conflict
from shop.orders import lifecycle as orders
from shop.orders import payment_reports
from shop.orders.payment_reports import InReview
from shop.payments.stripe import gateway as stripe_gateway

# Order statuses a balance may be paid in: money received otherwise goes to review.
OPEN_ORDER = ("paid", "partially_shipped", "shipped", "delivered", "partially_refunded")
_COLUMNS = "id, order_id, amount_cents, currency, reference, status, received_cents"


def start(order_id: str, actor: Actor, again: bool = False) -> dict:
    """The balance to pay and its intent's client secret: ``{"amount_cents", "currency",
    "client_secret"}``, ``client_secret`` None when nothing is due (paid meanwhile). Stripe
    unreachable: 503 with Retry-After; refusing: 409 naming its reason."""
    row, stale = _claim(order_id)
    _cancel_stale(stale)
    if row is None:
        return {"amount_cents": 0, "currency": None, "client_secret": None}
    order = db.one("SELECT id, number FROM orders WHERE id = :id", {"id": order_id})
    try:
        if row["reference"]:
            intent = stripe_gateway.retrieve_intent(row["reference"])
        else:
            intent = stripe_gateway.create_balance_intent(row, order)
    except stripe_gateway.Unavailable as error:
        stripe_gateway.unavailable(
            "The card payment of the balance could not be started: the payment provider"
            " cannot be reached. Reload the page in a moment.",
            error,
        )
    except stripe_gateway.Refused as refusal:
        raise Conflict(f"Stripe refused the payment of the balance ({refusal.reason}).") from None
    if intent.status == "canceled" and not again:  # cancelled at Stripe: ask anew, once
        with db.transaction():
            orders.lock(order_id)
            _set(row["id"], ("pending",), "cancelled")
        return start(order_id, actor, again=True)
    if not row["reference"]:
        with db.transaction():
            db.execute(
                "UPDATE balance_payments SET reference = :ref, updated_at = :now"
                " WHERE id = :id AND reference = ''",
                {"ref": intent.id, "now": now_iso(), "id": row["id"]},
            )
    if intent.status == "succeeded":  # paid, its event not here yet: applied now, once
        confirm(order_id, intent.to_dict(), actor)
        return {"amount_cents": 0, "currency": row["currency"], "client_secret": None}
    shown = {"amount_cents": row["amount_cents"], "currency": row["currency"]}
    return shown | {"client_secret": intent.client_secret}


def confirm_all(order_id: str, actor: Actor) -> None:
    """Where the customer comes back from Stripe: every balance intent of the order still
    pending that Stripe holds as succeeded is applied now (once, whatever the webhook does)."""
    for row in db.query(
        f"SELECT {_COLUMNS} FROM balance_payments WHERE order_id = :id"
        " AND status = 'pending' AND reference <> ''",
        {"id": order_id},
    ):
        try:
            intent = stripe_gateway.retrieve_intent(row["reference"])
        except (stripe_gateway.Unavailable, stripe_gateway.Refused):
            continue  # the webhook brings it
        if intent.status == "succeeded":
            confirm(order_id, intent.to_dict(), actor)


def confirm(order_id: str, intent: dict, actor: Actor) -> None:
    """Apply a succeeded balance intent found by asking Stripe, as its event is applied."""
    with db.transaction():
        orders.lock(order_id)
        succeeded(intent, actor)


def _claim(order_id: str) -> tuple[dict | None, list[dict]]:
    """Under the order's lock: the pending balance payment for the balance due now (made if
    none), or None when nothing is due; and the pending ones for another amount, cancelled."""
    with db.transaction():
        orders.lock(order_id)
        order = db.one(
            "SELECT o.id, o.status, o.currency, o.balance_due_cents, p.provider FROM orders o"
            " JOIN payments p ON p.order_id = o.id WHERE o.id = :id",
            {"id": order_id},
        )
        due = order["balance_due_cents"] if order["status"] in OPEN_ORDER else 0
        pending = db.query(
            f"SELECT {_COLUMNS} FROM balance_payments WHERE order_id = :id"
            " AND status = 'pending' ORDER BY created_at, id",
            {"id": order_id},
        )
        kept = next((row for row in pending if row["amount_cents"] == due), None)
        stale = [row for row in pending if row is not kept]
        for row in stale:
            _set(row["id"], ("pending",), "cancelled")
        if due <= 0 or order["provider"] != "stripe":
            return None, stale
        if kept is None:
            moment = now_iso()
            kept = {
                "id": db.new_id(),
                "order_id": order_id,
                "amount_cents": due,
                "currency": order["currency"],
                "reference": "",
                "status": "pending",
            }
            db.execute(
                "INSERT INTO balance_payments (id, order_id, amount_cents, currency, reference,"
                " status, received_cents, created_at, updated_at) VALUES (:id, :order_id,"
                " :amount_cents, :currency, '', 'pending', 0, :now, :now)",
                {**kept, "now": moment},
            )
        return kept, stale


def _cancel_stale(stale: list[dict]) -> None:
    """Cancel at Stripe the intents of balance payments no longer asked for. Best effort:
    one paid before its cancel still lowers the balance by what it received."""
    for row in stale:
        if row["reference"]:
            with contextlib.suppress(stripe_gateway.Unavailable, stripe_gateway.Refused):
                stripe_gateway.cancel_balance_intent(row["reference"], row["id"])


def _set(balance_id: str, expected: tuple, status: str, **values) -> bool:
    marks, params = db.in_list("expected", expected)
    sets = "".join(f", {name} = :{name}" for name in values)
    return bool(
        db.execute(
            f"UPDATE balance_payments SET status = :status{sets}, updated_at = :now"
            f" WHERE id = :id AND status IN {marks}",
            {**params, **values, "status": status, "now": now_iso(), "id": balance_id},
        )
    )


def paid_any(order_id: str) -> bool:
    """Whether a balance of the order was paid by card (it has more than one capture)."""
    return bool(
        db.value(
            "SELECT 1 FROM balance_payments WHERE order_id = :id AND status = 'succeeded'",
            {"id": order_id},
        )
    )


def of_intent(intent: dict) -> dict | None:
    """The balance payment of a PaymentIntent: by the intent id we stored, or by its
    metadata while we have none (Stripe made it, our request lost its answer)."""
    row = db.one(
        f"SELECT {_COLUMNS} FROM balance_payments WHERE reference = :ref", {"ref": intent["id"]}
    )
    meta = intent.get("metadata") or {}
    if row is None and meta.get("kind") == "balance" and meta.get("balance_payment_id"):
        row = db.one(
            f"SELECT {_COLUMNS} FROM balance_payments WHERE id = :id AND reference = ''"
            " AND order_id = :order_id",
            {"id": meta["balance_payment_id"], "order_id": meta.get("order_id") or ""},
        )
    return row


# -- the handlers (in the caller's transaction, under the order's lock) ----------------------


def succeeded(intent: dict, actor: Actor) -> None:
    """A balance intent succeeded: the order's balance goes down by what it received, its
    payment's amount up, once per intent (a replay, or the page's return racing the webhook,
    finds it succeeded and changes nothing). A balance that changed since is lowered by what
    the intent received all the same: the rest stays due, or below zero is owed to the
    customer (refundable). Money for a cancelled or refunded order, or in another currency,
    goes to review."""
    row = of_intent(intent)
    if row is None or row["status"] in ("succeeded", "review"):
        return
    received, currency = intent["amount_received"], intent["currency"].upper()
    order = db.one(
        "SELECT id, number, status, currency FROM orders WHERE id = :id", {"id": row["order_id"]}
    )
    values = {"reference": intent["id"], "received_cents": received}
    if order["status"] not in OPEN_ORDER or currency != order["currency"].upper():
        if _set(row["id"], ("pending", "cancelled"), "review", **values):
            reason = (
                f"Stripe reports {received} {currency} paid for the balance of order"
                f" {order['number']} (PaymentIntent {intent['id']}); the order is"
                f" {order['status']} in {order['currency']}. Refund it in Stripe, or honour it."
            )
            payment_reports.apply(InReview(order["id"], order["number"], reason), actor)
        return
    if not _set(row["id"], ("pending", "cancelled"), "succeeded", **values):
        return
    moment = now_iso()
    db.execute(
        "UPDATE orders SET balance_due_cents = balance_due_cents - :received, updated_at = :now"
        " WHERE id = :id",
        {"received": received, "now": moment, "id": order["id"]},
    )
    db.execute(
        "UPDATE payments SET amount_cents = amount_cents + :received, updated_at = :now"
        " WHERE order_id = :id",
        {"received": received, "now": moment, "id": order["id"]},
    )
    shown = money.display(received, order["currency"])
    note = f"Balance of {shown} paid by card (Stripe, PaymentIntent {intent['id']})."
    orders.record_history(order["id"], order["status"], note, moment, actor)
    details = {"order_id": order["id"], "number": order["number"], "intent": intent["id"]}
    details |= {"amount_cents": received, "currency": order["currency"]}
    audit.record("order.balance_paid", details, actor=actor)
    paid = {"amount_cents": received, "currency": order["currency"], "reference": intent["id"]}
    webhooks.emit(
        "order.balance_paid",
        order["id"],
        lambda oid: {**orders.load(oid)} | {"balance_payment": paid},
    )


def canceled(intent: dict, actor: Actor) -> None:
    """A balance intent was cancelled at Stripe: its balance payment is (the next visit of
    the pay link asks for a new one)."""
    row = of_intent(intent)
    if row is not None:
        _set(row["id"], ("pending",), "cancelled")


HANDLERS = {
    "payment_intent.succeeded": succeeded,
    "payment_intent.canceled": canceled,
}
