"""The order lifecycle (spec 3.3, 4.4), shared by checkout (``checkout/placing.py``), the
API (``api/orders.py``) and the checkout's answer (``api/payments.py``).

Statuses move along ``NEXT`` only; any other move is a 409 naming the allowed next statuses.
Cancelling or refunding puts back the units still out (``orders/restocks.py``: at most
the units sold, whatever path comes first); cancelling gives a discount code's use back
(``discounts.give_back_use``) and, once committed, cancels the payment at its provider (a
card's PaymentIntent at Stripe). Only a provider whose payments are confirmed by hand
(``manual``) lets a person move an order to ``paid``; a card order is paid by its provider
(``settle``).
Every change lands in the order's status history and the audit log, in the transaction that
makes it, under the order's lock (``lock``), and the payment follows the order by its
provider's rules (``orders/payment_sides.py``). ``load`` shows an order as the API does: it
is the payload of the order events.
"""

import json

from shop import audit, db, mail, webhooks
from shop.actor import Actor
from shop.clock import now_iso
from shop.discounts import codes as discounts
from shop.errors import Conflict, NotFound
from shop.invoices import issuing as invoices
from shop.orders import order_json, payment_sides, progress, restocks, shape

# The lifecycle: each status and the statuses it may move to. Empty means final.
NEXT = {
    "pending": ("paid", "cancelled"),
    "paid": ("partially_shipped", "shipped", "refunded"),
    # Some lines left in shipments (orders/shipments.py), the rest still to go.
    "partially_shipped": ("shipped", "refunded"),
    "shipped": ("delivered",),
    "delivered": ("refunded",),
    # Set by a partial refund (``payments/refunds.py``), which keeps the rest moving: what is
    # left may still ship, in parts too (the refunds stay on the order, refunded_cents).
    "partially_refunded": ("partially_shipped", "shipped", "delivered", "refunded"),
    "cancelled": (),
    "refunded": (),
}
STATUSES = tuple(NEXT)
RESTOCKING = frozenset({"cancelled", "refunded"})
# The right to read orders: a refusal that shows an order's status, number, amounts or units
# says them only to a caller who holds it (``shop.errors.abort``'s ``withheld``).
READ = "orders.read"


def _present(row: dict, items: list[dict], history: list[dict]) -> dict:
    payment = None
    if row["payment_provider"] is not None:
        payment = {
            "provider": row["payment_provider"],
            "amount_cents": row["payment_amount_cents"],
            "status": row["payment_status"],
            "reference": row["payment_reference"],
            "client_secret": None,  # only in the answers that start a card payment
        }
    address = row["shipping_address"]
    return {
        "id": row["id"],
        "number": row["number"],
        "invoice_number": None,  # a just-placed order is not invoiced yet
        "invoiced_at": None,
        "customer": {
            "id": row["customer_id"],
            "email": row["customer_email"],
            "name": row["customer_name"],
        },
        "status": row["status"],
        # Where the money and the parcel stand (``progress``), each on its own.
        "payment_status": row["order_payment_status"],
        "fulfillment_status": row["fulfillment_status"],
        "items": items,
        "subtotal_cents": row["subtotal_cents"],
        "discount_cents": row["discount_cents"],
        "shipping_cents": row["shipping_cents"],
        "tax_cents": row["tax_cents"],
        "total_cents": row["total_cents"],
        "currency": row["currency"],
        **_pricing(row["pricing"]),
        # Orders placed before addresses had a region (issue 26) show it as null.
        "shipping_address": {"region": None, **json.loads(address)} if address else None,
        "payment": payment,
        "balance_due_cents": row.get("balance_due_cents", 0),  # a new order owes nothing more
        "status_history": [
            {
                "status": h["status"],
                "at": h["at"],
                "by": {"kind": h["by_kind"], "id": h["by_id"], "label": h["by_label"]}
                if h["by_kind"]
                else None,
                "note": h["note"],
            }
            for h in history
        ],
        "created_at": row["created_at"],
        "updated_at": row["updated_at"],
    }


# An order placed before pricing (migration 0010) kept no breakdown: no tax, no shipping.
_UNPRICED = {
    "tax_lines": [],
    "shipping_tax_cents": 0,
    "prices_include_tax": False,
    "shipping_method": None,
    "discount_code": None,
    "applied": [],
}


def _pricing(stored: str | None) -> dict:
    """The breakdown an order keeps (``orders.pricing``) beside its amount columns."""
    return {**_UNPRICED, **json.loads(stored)} if stored else dict(_UNPRICED)


def present_new(row: dict, payment: dict, lines: list[dict], history: list[dict]) -> dict:
    """An order its writer just made, as ``load`` would read it back, without reading:
    ``row`` holds the order's columns and its customer's (``customer_email``,
    ``customer_name``), ``payment`` the payment's."""
    payment_columns = {f"payment_{k}": v for k, v in payment.items()}
    # A new order: paid at once (a provider that took the money while placing) or not yet.
    new = {"order_payment_status": "paid" if row["status"] == "paid" else "pending"}
    new["fulfillment_status"] = "unfulfilled"
    items = [{k: line[k] for k in shape.ITEM} for line in lines]
    return {**_present({**row, **payment_columns, **new}, items, history), "shipments": []}


def open_order(row: dict, payment: dict, lines: list[dict], actor: Actor) -> dict:
    """A just-placed order (written in the caller's transaction): its first history entry,
    by ``actor``, and the order as ``load`` would read it back."""
    history = record_history(row["id"], row["status"], None, row["created_at"], actor)
    presented = present_new(row, payment, lines, [history])
    if row["status"] == "paid":  # the column's default is pending
        progress.follow(row["id"], "paid")
        # Paid while placing (a draft's credit covering it): invoiced now, as a move to
        # paid would be.
        invoice = invoices.on_move(row["id"], "paid", load)
        if invoice is not None:
            presented.update(invoice_number=invoice["number"], invoiced_at=invoice["issued_at"])
    return presented


def lock(order_id: str) -> None:
    """Take the order's lock until the caller's transaction ends (inside ``db.transaction``).

    Every effect two requests or provider events can race for takes it first, before any
    row of the order: a status move, a refund, a payment event. The name is the one refunds
    have always taken, so nodes of the previous release serialise with this one.
    """
    db.lock(f"refund:{order_id}")


def load(order_id: str, customer_id: str | None = None) -> dict | None:
    """One whole order (``order_json``); with ``customer_id``, only if it is that
    customer's."""
    return order_json.load(order_id, customer_id)


# An order with its payment, which follows the order (``_follow_payment``).
_WITH_PAYMENT = (
    "SELECT o.id, o.number, o.status, p.id AS payment_id, p.provider AS payment_provider,"
    " p.status AS payment_status, o.payment_status AS order_payment_status,"
    " o.fulfillment_status AS order_fulfillment_status"
    " FROM orders o LEFT JOIN payments p ON p.order_id = o.id"
)
# The move itself, guarded by the status it expects; with the order's other two statuses
# (``progress``) when the row read under the lock carries them: one write, one round trip.
_MOVE = "UPDATE orders SET status = :status, updated_at = :now WHERE id = :id AND status = :current"
_MOVE_WITH_PROGRESS = (
    "UPDATE orders SET status = :status, updated_at = :now, payment_status = :paid,"
    " fulfillment_status = :fulfilled WHERE id = :id AND status = :current"
    " AND payment_status = :was_paid AND fulfillment_status = :was_fulfilled"
)


def change_status(
    order_id: str,
    status: str,
    note: str | None,
    actor: Actor,
    customer_id=None,
    notify: bool = True,
    reader: str | None = READ,
) -> dict:
    """Move an order to ``status`` along ``NEXT`` as ``actor``; answer the whole order.

    With ``customer_id`` the order must be that customer's (404 otherwise). The move, its
    history entry, the payment's status, the restock and the audit entry are one transaction;
    a cancel then cancels the payment at its provider (``_cancel_payment``), so this runs
    outside any transaction. Without ``notify`` the caller mails the customer itself (a
    shipment, with its tracking). ``reader``: the right a refusal's details need (None: the
    caller may read the order, as a guest holding its token, ``orders/guests.py``).
    """
    with db.transaction():
        lock(order_id)
        if customer_id is None:
            row = db.one(_WITH_PAYMENT + " WHERE o.id = :id", {"id": order_id})
        else:
            row = db.one(
                _WITH_PAYMENT + " WHERE o.id = :id AND o.customer_id = :cid",
                {"id": order_id, "cid": customer_id},
            )
        if row is None:
            raise NotFound("Order not found.")
        reader = reader if customer_id is None else None  # a customer reads their own order
        _check_move(row, status, reader)
        if status == "paid":
            _check_paid_by_hand(row, reader)
        if not _move(row, status, note, actor):  # another request moved it since we read it
            raise Conflict("The order changed meanwhile; reload it and try again.")
        order = load(order_id)
        if notify:
            mail.queue_order_mail(order, placed=False)
    if status == "cancelled":
        _cancel_payment(order_id, row["payment_provider"])
    return order


def cancel_unpaid(order_id: str, note: str, actor: Actor) -> bool:
    """Cancel a pending order, once: answer whether this call did it (the worker's expiry
    of unpaid card orders, ``payments/stripe/expiry.py``).

    ``settle``'s twin for ``cancelled``: the same guarded ``_move`` (stock and the discount
    code's use given back, ``order.cancelled`` with ``note`` in its history), the customer's
    mail, then the payment cancelled at its provider after the commit.
    """
    with db.transaction():
        lock(order_id)
        row = db.one(_WITH_PAYMENT + " WHERE o.id = :id", {"id": order_id})
        if row is None or row["status"] != "pending" or not _move(row, "cancelled", note, actor):
            return False
        mail.queue_order_mail(load(order_id), placed=False)
    _cancel_payment(order_id, row["payment_provider"])
    return True


def _cancel_payment(order_id: str, provider_name: str | None) -> None:
    """After a cancel has committed (a network call never runs in a transaction): the
    provider cancels the payment on its side (Stripe: the intent); its failures are its
    own to log and retry (``payment_sides.PaymentSide.cancel``)."""
    provider = payment_sides.side(provider_name)
    if provider.cancels_after_commit:
        provider.cancel(order_id)


def settle(order_id: str, note: str | None, actor: Actor) -> bool:
    """Mark a pending order ``paid``, once: answer whether this call did it.

    The one guarded transition every path to ``paid`` shares (the Stripe webhook, the
    storefront's confirm; an administrator's mark-paid of a manual order goes through
    ``change_status`` and the same ``_move``): whichever comes first moves it, emits
    ``order.paid`` and queues the receipt; the others find it no longer pending and change
    nothing.
    """
    with db.transaction():
        lock(order_id)
        row = db.one("SELECT id, number, status FROM orders WHERE id = :id", {"id": order_id})
        if row is None or row["status"] != "pending" or not _move(row, "paid", note, actor):
            return False
        mail.queue_order_mail(load(order_id), placed=False)
    return True


def _move(row: dict, status: str, note: str | None, actor: Actor) -> bool:
    """The guarded move of ``row`` to ``status`` and all it entails; False if it lost a race.

    Runs in the caller's transaction: the history entry, the payment, the restock, the
    audit entry and the events happen only with the move.
    """
    order_id, moment = row["id"], now_iso()
    values = {"status": status, "now": moment, "id": order_id, "current": row["status"]}
    kept = "order_payment_status" in row  # read with the order (``_WITH_PAYMENT``)
    if kept:
        was_paid, was_fulfilled = row["order_payment_status"], row["order_fulfillment_status"]
        values.update(
            paid=progress.payment_after(status, was_paid),
            fulfilled=progress.fulfillment_after(status, was_fulfilled),
            was_paid=was_paid,
            was_fulfilled=was_fulfilled,
        )
    if not db.execute(_MOVE_WITH_PROGRESS if kept else _MOVE, values):
        return False
    record_history(order_id, status, note, moment, actor)
    if not kept:
        progress.follow(order_id, status)
    _follow_payment(order_id, status, moment, row)
    invoices.on_move(order_id, status, load)  # the move that makes it due invoices it
    restocked = status in RESTOCKING and restocks.put_back_rest(order_id, moment)
    details = {"order_id": order_id, "number": row["number"], "from": row["status"]}
    details.update(to=status, restocked=restocked)
    if note:
        details["note"] = note
    audit.record("order.status_changed", details, actor=actor)
    webhooks.emit("order.status_changed", order_id, load)
    if status == "cancelled":
        discounts.give_back_use(order_id)
        webhooks.emit("order.cancelled", order_id, load)
    if status == "paid":
        webhooks.emit("order.paid", order_id, load)
    return True


def record_refund_status(order: dict, status: str, note: str | None, actor: Actor) -> bool:
    """A refund moved the order to ``partially_refunded`` or ``refunded`` (the caller holds
    the order's lock, in its transaction); answer whether the order moved. Stock is not
    touched: refunds restock per line, on their own.

    An order that was never paid here (``pending``, ``cancelled``: a card payment that
    landed anyway and was refunded) keeps its status; only its payment follows.
    """
    moment = now_iso()
    progress.follow(order["id"], status)  # the payment status, whatever the order's status
    if order["status"] in ("pending", "cancelled"):
        _follow_payment(order["id"], status, moment)
        return False
    moved = db.execute(
        "UPDATE orders SET status = :status, updated_at = :now"
        " WHERE id = :id AND status = :current",
        {"status": status, "now": moment, "id": order["id"], "current": order["status"]},
    )
    if not moved:
        return False
    record_history(order["id"], status, note, moment, actor)
    _follow_payment(order["id"], status, moment)
    details = {"order_id": order["id"], "number": order["number"], "from": order["status"]}
    audit.record("order.status_changed", {**details, "to": status, "restocked": False}, actor=actor)
    webhooks.emit("order.status_changed", order["id"], load)
    return True


def _check_move(row: dict, status: str, reader: str | None) -> None:
    """409 unless ``NEXT`` allows moving ``row`` to ``status``; its status is named only to
    a caller holding ``reader`` (None: to anyone)."""
    allowed = NEXT[row["status"]]
    if status in allowed:
        return
    withheld = (reader, f"The order cannot move to {status} from its status.") if reader else None
    where = f"Order {row['number']} is {row['status']}"
    if not allowed:
        raise Conflict(f"{where}, a final status: it cannot move to {status}.", withheld=withheld)
    raise Conflict(
        f"{where}: it cannot move to {status}; allowed next: {', '.join(allowed)}.",
        withheld=withheld,
    )


def _paid_by_hand(provider: str | None) -> bool:
    """Whether a person may mark an order paid by ``provider`` paid (``manual``: yes)."""
    return payment_sides.side(provider, every=True).paid_by_hand


def _check_paid_by_hand(row: dict, reader: str | None) -> None:
    """409 unless the order's payment is one a person confirms; the order is named only to
    a caller holding ``reader`` (None: to anyone)."""
    provider = row["payment_provider"]
    if not _paid_by_hand(provider):
        rule = "not by hand (marking paid is for manual payments)."
        withheld = (reader, f"The order becomes paid when its provider confirms it, {rule}")
        raise Conflict(
            f"Order {row['number']} is paid through {provider}: it becomes paid when"
            f" {provider} confirms the payment, {rule}",
            withheld=withheld if reader else None,
        )


def hand_moves(order: dict) -> tuple:
    """The statuses a person may move ``order`` (as ``load`` shows it) to next."""
    allowed = NEXT[order["status"]]
    if _paid_by_hand((order.get("payment") or {}).get("provider")):
        return allowed
    return tuple(status for status in allowed if status != "paid")


def _follow_payment(order_id: str, status: str, moment: str, row: dict | None = None) -> None:
    """Let the payment's provider say where the payment stands now; ``row`` may hold the
    payment already (``_WITH_PAYMENT``'s columns)."""
    if row is not None and "payment_id" in row:
        payment = row["payment_id"] and {
            "id": row["payment_id"],
            "provider": row["payment_provider"],
            "status": row["payment_status"],
        }
    else:
        payment = db.one(
            "SELECT id, provider, status FROM payments WHERE order_id = :id", {"id": order_id}
        )
    if payment is None:
        return
    provider = payment_sides.side(payment["provider"])
    new_status = provider.follow(payment, status)
    if new_status != payment["status"]:
        db.execute(
            "UPDATE payments SET status = :status, updated_at = :now"
            " WHERE id = :id AND status = :current",
            {"status": new_status, "now": moment, "id": payment["id"]}
            | {"current": payment["status"]},
        )
    if status == "cancelled" and provider.cancels_after_commit:
        # Marked with the cancel, so a crash before the provider is called still leaves it
        # for the worker (``_cancel_payment`` calls it after the commit).
        db.execute(
            "UPDATE payments SET provider_cancel = 'due' WHERE id = :id", {"id": payment["id"]}
        )


def record_history(order_id: str, status: str, note: str | None, moment: str, actor: Actor) -> dict:
    """Add an entry to an order's status history, by ``actor``; answer it as ``order_json``
    shows it."""
    entry = {
        "status": status,
        "note": note,
        "at": moment,
        "by_kind": actor.kind,
        "by_id": actor.id,
        "by_label": actor.label,
    }
    db.send(  # nobody reads its answer: on PostgreSQL it goes with the commit
        "INSERT INTO order_status_history (id, order_id, status, note, at, by_kind, by_id,"
        " by_label) VALUES (:id, :order_id, :status, :note, :at, :kind, :by_id, :label)",
        {
            "id": db.new_id(),
            "order_id": order_id,
            "status": status,
            "note": note,
            "at": moment,
            "kind": actor.kind,
            "by_id": actor.id,
            "label": actor.label,
        },
    )
    return entry
