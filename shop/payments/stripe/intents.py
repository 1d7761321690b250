"""Card payments through Stripe: start, confirm and webhook events (docs/payments.md).

``start`` creates the PaymentIntent after the checkout commits, its idempotency key derived
from the order id. Every way to ``paid`` (webhook, confirm, reconcile) reports ``Succeeded``
to the order once (``orders/payment_reports.py``). An event is matched by the intent id we
stored, applied under the order's lock and recorded in ``stripe_events`` in the transaction
of its effect, so a duplicate changes nothing (docs/payments.md, "Exactly once, and only by
Stripe" and "The webhook").
"""

from shop import db
from shop.actor import Actor
from shop.clock import now_iso
from shop.errors import Conflict, Invalid, NotFound, ProviderRefused
from shop.orders import lifecycle as orders
from shop.orders import payment_reports
from shop.orders.payment_reports import Failed, InReview, Succeeded
from shop.payments import providers, refund_parts, refunds
from shop.payments.providers import ProviderFailed
from shop.payments.stripe import balance as stripe_balance
from shop.payments.stripe import cancel as stripe_cancel
from shop.payments.stripe import gateway as stripe_gateway
from shop.payments.stripe import shapes as stripe_event_shapes

PAYABLE = "pending"
# The payment statuses a payment event may still change (paid, review and refunds are past).
OPEN = ("pending", "failed", "cancelled")


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
        raise NotFound("Order not found.")
    return row


def start(order_id: str, actor: Actor, customer_id: str | None = None) -> dict:
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
        raise Conflict(f"Order {row['number']} is not paid by card: there is nothing to start.")
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
            orders.lock(order_id)
            db.execute(
                "UPDATE payments SET reference = :ref, updated_at = :now"
                " WHERE order_id = :id AND reference = ''",
                {"ref": intent.id, "now": now_iso(), "id": order_id},
            )
    if intent.status == "succeeded":
        found = _find_payment("p.order_id = :id", {"id": order_id})
        _apply(_succeeded, intent.to_dict(), found, actor)
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
        raise Conflict(f"Order {row['number']} is cancelled: no payment can be started for it.")
    return {**_payment(row), "client_secret": None}


def settle_found(intent: dict, actor: Actor) -> None:
    """A succeeded intent found by asking Stripe, not by its event (the expiry of unpaid
    orders, ``payments/stripe/expiry.py``): applied as ``payment_intent.succeeded`` is."""
    _apply(_succeeded, intent, _find_payment("p.reference = :ref", {"ref": intent["id"]}), actor)


def _refused(row: dict, refusal) -> None:
    """Stripe will not start this payment: say why, in the answer and the payment's note."""
    with db.transaction():
        db.execute(
            "UPDATE payments SET note = :note, updated_at = :now"
            " WHERE order_id = :id AND status = 'pending'",
            {"note": f"Stripe refused: {refusal.reason}", "now": now_iso(), "id": row["id"]},
        )
    raise ProviderRefused(
        f"Stripe refused the card payment of order {row['number']} ({refusal.reason}). The"
        " order is kept as pending and unpaid.",
        ours=refusal.status == 502,
    )


def receive(body: bytes, signature: str | None, actor: Actor) -> bool:
    """A webhook request's event, verified by its ``Stripe-Signature`` and applied once as
    ``actor``; answer False for a duplicate. A bad or stale signature, or not an event: 400."""
    event = stripe_gateway.verify(body, signature)
    if not isinstance(event.get("id"), str):
        raise Invalid("Not a Stripe event.")
    return handle_event(event, actor)


def handle_event(event: dict, actor: Actor) -> bool:
    """Apply one verified event; answer False for a duplicate (nothing changed)."""
    kind, obj = stripe_event_shapes.checked(event)
    handler = HANDLERS.get(kind)
    payment = _payment_of(kind, obj) if handler else None
    if payment is None and handler:
        balance = _balance_of(kind, obj)  # an intent paying a balance (or its charge)
        if balance is not None:
            payment = _find_payment("p.order_id = :id", {"id": balance["order_id"]})
            if kind.startswith("payment_intent"):
                balance_handler = stripe_balance.HANDLERS.get(kind)
                handler = None if balance_handler is None else _on_balance(balance_handler)
            if handler is None:
                payment = None
    if payment is not None and kind == "charge.refunded":
        if db.value("SELECT 1 FROM stripe_events WHERE id = :id", {"id": event["id"]}):
            return False
        obj = {**obj, "refunds": {"data": _stripe_refunds(obj)}}
    with db.transaction():
        if payment is not None:
            orders.lock(payment["order_id"])  # before the event's row: see orders.lock
        recorded = db.execute(
            "INSERT INTO stripe_events (id, type, order_id, received_at)"
            " VALUES (:id, :type, :order_id, :now) ON CONFLICT (id) DO NOTHING",
            {
                "id": event["id"],
                "type": kind,
                "order_id": payment["order_id"] if payment else None,
                "now": now_iso(),
            },
        )
        if not recorded:
            return False
        if payment is not None:
            handler(obj, _find_payment("p.id = :id", {"id": payment["id"]}), actor)
    return True


# -- our payment of an event ---------------------------------------------------------------

_PAYMENT = (
    "SELECT p.id, p.order_id, p.status, p.reference, p.amount_cents, o.currency, o.number,"
    " o.status AS order_status, o.refunded_cents FROM payments p"
    " JOIN orders o ON o.id = p.order_id WHERE p.provider = 'stripe' AND "
)


def _provider() -> providers.Provider:
    """The provider these payments are (refunds record what it did by its name and label)."""
    return providers.get("stripe", every=True)


def _find_payment(where: str, params: dict) -> dict | None:
    """Our Stripe payment (with its order's columns) matching ``where``."""
    return db.one(_PAYMENT + where, params)


def _payment_of(kind: str, obj: dict) -> dict | None:
    """Our Stripe payment of an intent (``payment_intent``) or a charge (``charge``).

    By the intent id we stored; by ``metadata`` (order id and number, as ``create_intent``
    writes them) only for an intent and only while the order's payment has no intent id
    (Stripe made the intent but our request lost its answer): an intent naming an order that
    holds another intent is not that order's payment and changes nothing.
    """
    intent_id = obj["payment_intent"] if kind.startswith("charge") else obj["id"]
    payment = _find_payment("p.reference = :ref", {"ref": intent_id})
    meta = obj.get("metadata") or {}
    ours = meta.get("order_id") and meta.get("kind") != "balance"  # a balance's: not this
    if payment is None and kind.startswith("payment_intent") and ours:
        payment = _find_payment(
            "p.order_id = :order_id AND p.reference = '' AND o.number = :number",
            {"order_id": meta["order_id"], "number": meta.get("order_number") or ""},
        )
    return payment


def _balance_of(kind: str, obj: dict) -> dict | None:
    """The balance payment of an event's intent (``payments/stripe/balance.py``), or None."""
    if kind.startswith("charge"):
        return stripe_balance.of_intent({"id": obj["payment_intent"]})
    return stripe_balance.of_intent(obj)


def _on_balance(handler):
    """A balance intent's handler, called as the payment handlers are."""

    def handle(obj: dict, _payment: dict, actor: Actor) -> None:
        handler(obj, actor)

    return handle


def _apply(handler, obj: dict, payment: dict | None, actor: Actor) -> None:
    """Run an event's handler outside ``handle_event`` (the confirm, reconcile): in its own
    transaction, under the order's lock, with the payment read afresh."""
    if payment is None:
        return
    with db.transaction():
        orders.lock(payment["order_id"])
        handler(obj, _find_payment("p.id = :id", {"id": payment["id"]}), actor)


def _stripe_refunds(charge: dict) -> list[dict]:
    """The charge's Refund objects: the event's list when it is whole, else Stripe's (API
    versions since 2022-11-15 leave ``refunds`` out of the charge). Stripe unreachable:
    503, and Stripe sends the event again later."""
    listed = charge.get("refunds") or {}
    if isinstance(listed.get("data"), list) and listed.get("has_more") is False:
        return listed["data"]
    try:
        return [r.to_dict() for r in stripe_gateway.list_refunds(charge["payment_intent"])]
    except stripe_gateway.Unavailable as error:
        stripe_gateway.unavailable(
            "The refunds of this charge could not be read from Stripe; send the event again.",
            error,
        )
    except stripe_gateway.Refused as refusal:
        raise ProviderRefused(
            f"Stripe refused to list the refunds of this charge ({refusal.reason}); send the"
            " event again.",
            ours=refusal.status == 502,
        ) from None


# -- the handlers (in the caller's transaction, under the order's lock) ---------------------


def _succeeded(intent: dict, payment: dict, actor: Actor) -> None:
    if payment["reference"] not in ("", intent["id"]):
        return  # _payment_of never gives that; a payment read afresh might, in theory
    if payment["reference"] == "":
        db.execute(
            "UPDATE payments SET reference = :ref, updated_at = :now"
            " WHERE id = :id AND reference = ''",
            {"ref": intent["id"], "now": now_iso(), "id": payment["id"]},
        )
    received, currency = intent["amount_received"], intent["currency"].upper()
    paid = f"Stripe reports {received} {currency} paid for PaymentIntent {intent['id']}"
    if payment["order_status"] == "cancelled":
        _review(
            payment,
            f"{paid}; order {payment['number']} was cancelled. Refund it in Stripe, or honour it.",
            actor,
        )
    elif payment["order_status"] != PAYABLE:
        return  # paid already: the confirm and the webhook both came
    elif received != payment["amount_cents"] or currency != payment["currency"].upper():
        _review(
            payment,
            f"{paid}; order {payment['number']} asks {payment['amount_cents']}"
            f" {payment['currency']}.",
            actor,
        )
    else:
        payment_reports.apply(Succeeded(payment["order_id"], "Paid by card (Stripe)."), actor)


def _review(payment: dict, reason: str, actor: Actor) -> None:
    """Not paid: a person decides (the amount or currency differs, or the order was
    cancelled). Once: a payment already in review is left as it is."""
    if not _set_payment(payment["id"], OPEN, status="review", note=reason):
        return
    payment_reports.apply(InReview(payment["order_id"], payment["number"], reason), actor)


def _failed(intent: dict, payment: dict, actor: Actor) -> None:
    error = (intent.get("last_payment_error") or {}).get("message")
    if _set_payment(payment["id"], ("pending",), status="failed", note=error):
        payment_reports.apply(Failed(payment["order_id"], error), actor)


def _canceled(intent: dict, payment: dict, actor: Actor) -> None:
    """The intent was cancelled: the payment is; the order stays for an administrator."""
    note = intent.get("cancellation_reason")
    _set_payment(payment["id"], ("pending", "failed"), status="cancelled", note=note)


def _refunded(charge: dict, payment: dict, actor: Actor) -> None:
    refunds.record_external(
        _provider(),
        payment["order_id"],
        charge["refunds"]["data"],
        charge["amount_refunded"],
        actor,
        charge["payment_intent"],
    )


def _set_payment(payment_id: str, expected: tuple, **values) -> bool:
    """Write ``values`` if the payment's status is one of ``expected``; answer whether."""
    sets = ", ".join(f"{name} = :{name}" for name in values)
    marks, params = db.in_list("expected", expected)
    return bool(
        db.execute(
            f"UPDATE payments SET {sets}, updated_at = :now WHERE id = :id AND status IN {marks}",
            {**values, **params, "now": now_iso(), "id": payment_id},
        )
    )


HANDLERS = {
    "payment_intent.succeeded": _succeeded,
    "payment_intent.payment_failed": _failed,
    "payment_intent.canceled": _canceled,
    "charge.refunded": _refunded,
}


# -- reconcile -----------------------------------------------------------------------------

# Order statuses that say the money arrived.
PAID = (*refunds.REFUNDABLE, "refunded")


def reconcile(since: int | None, fix: bool, actor: Actor) -> list[dict]:
    """Differences between our Stripe payments and Stripe's intents, both ways.

    Each is ``{"order", "intent", "difference", "fixable"}`` (and ``"fixed"`` with ``fix``).
    With ``fix`` the fixable ones are applied through the webhook's own handlers (so at most
    once): Stripe's word on money it holds (a succeeded intent, refunds made there). The
    rest is for a person: more refunded here than at Stripe, paid here but not at Stripe, a
    payment that landed on a cancelled order, an intent naming an order that is not its.
    """
    found = []
    for intent in stripe_gateway.list_intents(since):
        data = intent.to_dict()
        payment = _payment_of("payment_intent", data)
        if payment is None and stripe_balance.of_intent(data) is not None:
            found += _balance_difference(data, fix, actor)
            continue
        if payment is None:
            found += _stranger(data)
            continue
        theirs = []
        if data["status"] == "succeeded":
            theirs = [r.to_dict() for r in stripe_gateway.list_refunds(data["id"])]
        for text, fix_with in _differences(data, payment, theirs):
            item = {"order": payment["number"], "intent": data["id"], "difference": text}
            item["fixable"] = fix_with is not None
            if fix:
                if fix_with is not None:
                    _apply(fix_with, data, payment, actor)
                item["fixed"] = fix_with is not None
            found.append(item)
    return found


def _differences(intent: dict, payment: dict, theirs: list[dict]) -> list[tuple]:
    """What differs between one intent (with its refunds) and our payment of it: pairs of
    a text and, when Stripe's side may be applied here, the handler that applies it."""
    found = []
    status, order_status = intent["status"], payment["order_status"]
    refunded_there = _refunded_at_stripe(theirs)
    if status == "succeeded" and order_status == PAYABLE:
        found.append(("paid at Stripe, pending here", _succeeded))
    elif status == "succeeded" and order_status == "cancelled":
        if refunded_there < intent["amount_received"]:
            text = (
                f"paid at Stripe ({intent['amount_received']} received, {refunded_there}"
                f" refunded), order cancelled here (payment {payment['status']}): refund it"
                " in Stripe or honour it"
            )
            found.append((text, _succeeded if payment["status"] in OPEN else None))
    elif status != "succeeded" and order_status in PAID:
        found.append((f"{order_status} here, {status} at Stripe", None))
    elif status == "canceled" and payment["status"] == "pending":
        found.append(("cancelled at Stripe, payment pending here", None))
    ours = payment["refunded_cents"]
    if stripe_balance.paid_any(payment["order_id"]):  # refunds split over its intents
        ours = refund_parts.refunded(payment["order_id"], "stripe").get(intent["id"], 0)
    if refunded_there > ours:

        def record(_intent: dict, fresh: dict, actor: Actor) -> None:
            refunds.record_external(
                _provider(), fresh["order_id"], theirs, refunded_there, actor, intent["id"]
            )

        found.append((f"refunded {refunded_there} at Stripe, {ours} recorded", record))
    elif ours > refunded_there and status == "succeeded":
        pending = db.value(
            "SELECT COALESCE(SUM(amount_cents), 0) FROM refunds WHERE order_id = :id"
            " AND status = 'pending'",
            {"id": payment["order_id"]},
        )
        text = f"refunded {refunded_there} at Stripe, {ours} recorded here"
        if pending:
            text += f" ({pending} of it in refunds pending, not confirmed by Stripe)"
        found.append((text, None))
    return found


def _balance_difference(intent: dict, fix: bool, actor: Actor) -> list[dict]:
    """A balance intent paid at Stripe whose balance payment is not succeeded here: fixable
    by its own handler (``payments/stripe/balance.py``), once."""
    row = stripe_balance.of_intent(intent)
    if intent["status"] != "succeeded" or row["status"] in ("succeeded", "review"):
        return []
    number = db.value("SELECT number FROM orders WHERE id = :id", {"id": row["order_id"]})
    item = {"order": number, "intent": intent["id"], "fixable": True}
    item["difference"] = f"balance paid at Stripe, {row['status']} here"
    if fix:
        stripe_balance.confirm(row["order_id"], intent, actor)
        item["fixed"] = True
    return [item]


def _refunded_at_stripe(theirs: list[dict]) -> int:
    return sum(r["amount"] for r in theirs if r.get("status") not in ("failed", "canceled"))


def _stranger(intent: dict) -> list[dict]:
    """A succeeded intent naming one of our orders (``metadata``) that holds another intent:
    money at Stripe no order of ours accounts for."""
    meta = intent.get("metadata") or {}
    if intent["status"] != "succeeded" or not meta.get("order_id"):
        return []
    payment = _find_payment("p.order_id = :id", {"id": meta["order_id"]})
    if payment is None:
        return []
    text = (
        f"paid at Stripe by an intent that is not this order's ({payment['reference']}):"
        " refund it in Stripe, or find whose it is"
    )
    return [
        {"order": payment["number"], "intent": intent["id"], "difference": text, "fixable": False}
    ]


def reconcile_job(since: int | None, fix: bool, actor: Actor) -> list[dict]:
    """``reconcile`` as the CLI runs it: a job that cannot run raises ``ProviderFailed``."""
    if not stripe_gateway.configured():
        raise ProviderFailed("Stripe is not configured: set STRIPE_API_KEY and the secret.")
    try:
        return reconcile(since, fix, actor)
    except stripe_gateway.Unavailable as error:
        raise ProviderFailed(f"Stripe cannot be reached: {error}") from None
    except stripe_gateway.Refused as refusal:
        raise ProviderFailed(f"Stripe refused: {refusal.reason}") from None
