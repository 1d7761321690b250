"""An order's payment status and fulfilment status (issue 37), kept apart beside ``status``.

``status`` is one line through the lifecycle (``lifecycle.NEXT``), kept for existing clients;
it cannot say both where the money stands and where the parcel is (a shipped order that gets
a partial refund becomes ``partially_refunded``; once it ships again it is ``shipped`` and
the refund no longer shows). Two stored columns say each on its own, as Shopify's
financial and fulfilment statuses do:

``payment_status``
  ``pending``: not paid yet (a failed card attempt too: the customer may try again);
  ``paid``; ``partially_refunded``; ``refunded``; ``review``: money arrived that does not
  match the order (another amount or currency, or an order cancelled meanwhile), a person
  refunds or honours it; ``voided``: cancelled before any money was taken.
``fulfillment_status``
  ``unfulfilled``; ``partially_shipped``; ``shipped`` (every unit has left);
  ``delivered``. A refund or a cancel leaves it as it is.

Each write that moves an order sets them in its own transaction, under the order's lock,
naming the values it read (``follow``): ``lifecycle._move`` (paid, cancelled, shipped,
delivered, refunded by hand), ``lifecycle.record_refund_status`` (refunds),
``lifecycle.open_order`` (an order placed already paid) and ``payment_reports`` (review).
Migration 0026 filled them for the orders before it.
"""

from shop import db
from shop.errors import Conflict

PAYMENT = ("pending", "paid", "partially_refunded", "refunded", "review", "voided")
FULFILLMENT = ("unfulfilled", "partially_shipped", "shipped", "delivered")
# Still to leave the warehouse: paid (in part refunded, perhaps), not all of it shipped.
TO_SHIP = {
    "payment_status": ("paid", "partially_refunded"),
    "fulfillment_status": ("unfulfilled", "partially_shipped"),
}


def payment_after(move: str, current: str) -> str:
    """The payment status once the order has moved to ``move`` (an order status)."""
    if move in ("paid", "refunded", "partially_refunded"):
        return move
    if move == "cancelled" and current == "pending":
        return "voided"  # review and refunds stay: money moved for them
    return current


def fulfillment_after(move: str, current: str) -> str:
    """The fulfilment status once the order has moved to ``move`` (an order status)."""
    return move if move in ("partially_shipped", "shipped", "delivered") else current


def follow(order_id: str, move: str) -> None:
    """Keep both statuses of ``order_id`` with its move to ``move`` (in the caller's
    transaction, under the order's lock); a Conflict if they changed since read."""
    row = db.one(
        "SELECT payment_status, fulfillment_status FROM orders WHERE id = :id", {"id": order_id}
    )
    if row is None:
        return
    paid = payment_after(move, row["payment_status"])
    fulfilled = fulfillment_after(move, row["fulfillment_status"])
    if (paid, fulfilled) != (row["payment_status"], row["fulfillment_status"]):
        _write(order_id, row, paid, fulfilled)


def review(order_id: str) -> None:
    """Money arrived that a person must look at: the payment status becomes ``review``
    (from ``pending`` or ``voided`` only; a paid or refunded order keeps its own)."""
    db.execute(
        "UPDATE orders SET payment_status = 'review'"
        " WHERE id = :id AND payment_status IN ('pending', 'voided')",
        {"id": order_id},
    )


def _write(order_id: str, was: dict, paid: str, fulfilled: str) -> None:
    moved = db.execute(
        "UPDATE orders SET payment_status = :paid, fulfillment_status = :fulfilled"
        " WHERE id = :id AND payment_status = :was_paid AND fulfillment_status = :was_fulfilled",
        {
            "paid": paid,
            "fulfilled": fulfilled,
            "id": order_id,
            "was_paid": was["payment_status"],
            "was_fulfilled": was["fulfillment_status"],
        },
    )
    if not moved:  # under the order's lock this cannot happen; say so if it ever does
        raise Conflict("The order changed meanwhile; reload it and try again.")
