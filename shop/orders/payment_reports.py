"""What a payment provider reports about an order's money, and how the order reacts.

Payments tell orders what happened (``Succeeded``, ``Failed``, ``Refunded``, ``InReview``)
and orders never calls back into payments; ``apply`` makes the order react under its lock,
in the caller's transaction when there is one.
"""

from dataclasses import dataclass

from shop import audit, db, webhooks
from shop.actor import Actor
from shop.orders import lifecycle, progress


@dataclass(frozen=True)
class Succeeded:
    """The order's money arrived in full: it becomes paid (once)."""

    order_id: str
    note: str


@dataclass(frozen=True)
class Failed:
    """An attempt to pay failed: the order stays pending, its customer may try again."""

    order_id: str
    reason: str | None


@dataclass(frozen=True)
class Refunded:
    """Money went back (``orders.refunded_cents`` already counts it): the order becomes
    refunded or partially refunded."""

    order_id: str
    note: str | None


@dataclass(frozen=True)
class InReview:
    """Money arrived that does not match the order (or the order was cancelled meanwhile):
    the order's payment status becomes ``review`` until a person refunds or honours it,
    with an audit entry ``payment.review`` giving ``reason`` and the event
    ``order.payment_review``. The order's status stays as it is."""

    order_id: str
    number: str
    reason: str


def apply(report, actor: Actor) -> bool:
    """Make the order react to ``report`` under its lock, as ``actor`` (who brought the
    report: the provider's webhook, a job, a person); answer whether the order moved."""
    if isinstance(report, Succeeded):
        return lifecycle.settle(report.order_id, report.note, actor)
    if isinstance(report, Refunded):
        with db.transaction():
            lifecycle.lock(report.order_id)
            order = db.one(
                "SELECT id, number, status, total_cents, refunded_cents, balance_due_cents,"
                " edit_refunded_cents, (SELECT COALESCE(SUM(r.credit_cents), 0) FROM refunds r"
                " WHERE r.order_id = o.id AND r.status <> 'failed') AS kept FROM orders o"
                " WHERE id = :id",
                {"id": report.order_id},
            )
            # What edits gave back is not a refund of the order as it stands (0034); the
            # credit share money refunds took back unpaid is (0040).
            refunded = order["refunded_cents"] - order["edit_refunded_cents"] + order["kept"]
            full = refunded >= order["total_cents"] - order["balance_due_cents"]
            status = "refunded" if full else "partially_refunded"
            if order["status"] == status:
                return False
            return lifecycle.record_refund_status(order, status, report.note, actor)
    if isinstance(report, InReview):
        with db.transaction():
            lifecycle.lock(report.order_id)
            progress.review(report.order_id)
            audit.record(
                "payment.review",
                {"order_id": report.order_id, "number": report.number, "reason": report.reason},
                actor=actor,
            )
            webhooks.emit("order.payment_review", report.order_id, lifecycle.load)
        return False
    if isinstance(report, Failed):
        return False  # the payment keeps the failure; the order waits for another attempt
    raise TypeError(f"not a payment report: {report!r}")
