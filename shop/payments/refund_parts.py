"""How a refund given back through the provider is split over the order's captures.

An order paid by card holds one capture per PaymentIntent that succeeded: the checkout's
(``payments.reference``) and one per balance paid by the pay link (``balance_payments``,
docs/orders.md "Collecting a balance"). The provider refunds each capture on its own and
refuses more than one captured, so a refund is split here, under the order's lock when it
is written: oldest capture first, each part at most what that capture has left (what it
captured less the parts of earlier refunds, pending ones included: their amount is
reserved). The parts are kept with the refund (``refunds.parts``) so a retry sends the same
ones under the same keys. Refunds written before the split (``parts`` NULL) are all of the
first capture.
"""

import json

from shop import db
from shop.errors import Conflict


def captures(order_id: str) -> list[tuple[str, int]]:
    """The order's captures at its provider, oldest first: ``(reference, amount captured)``."""
    payment = db.one(
        "SELECT reference, amount_cents FROM payments WHERE order_id = :id", {"id": order_id}
    )
    if payment is None:
        return []
    balances = db.query(
        "SELECT reference, received_cents FROM balance_payments WHERE order_id = :id"
        " AND status = 'succeeded' ORDER BY created_at, id",
        {"id": order_id},
    )
    # The payment's amount grew by every balance paid: the first capture is the rest.
    first = payment["amount_cents"] - sum(row["received_cents"] for row in balances)
    return [(payment["reference"], first)] + [
        (row["reference"], row["received_cents"]) for row in balances
    ]


def of(row: dict, first: str) -> list[dict]:
    """A refund row's parts (``parts``, ``amount_cents``): as kept, or, for one written before
    the split, all of the ``first`` capture."""
    if row.get("parts"):
        return json.loads(row["parts"])
    return [{"intent": first, "amount_cents": row["amount_cents"], "reference": row["reference"]}]


def refunded(order_id: str, provider: str, answered_only: bool = False) -> dict[str, int]:
    """What the order's refunds through ``provider`` take from each capture (by reference):
    the failed ones left out; ``answered_only``: only those the provider answered (with its
    refund's id)."""
    first = db.value("SELECT reference FROM payments WHERE order_id = :id", {"id": order_id})
    sql = (
        "SELECT amount_cents, reference, parts FROM refunds WHERE order_id = :id"
        " AND provider = :provider AND status <> 'failed'"
    )
    if answered_only:
        sql += " AND reference IS NOT NULL"
    taken: dict[str, int] = {}
    for row in db.query(sql, {"id": order_id, "provider": provider}):
        for part in of(row, first):
            taken[part["intent"]] = taken.get(part["intent"], 0) + part["amount_cents"]
    return taken


def split(order_id: str, provider: str, amount: int) -> str:
    """The parts of a new refund of ``amount`` through ``provider`` (JSON, for
    ``refunds.parts``), in the caller's transaction under the order's lock. 409 if the
    captures have less left than ``amount`` (the refund path's own limits prevent it)."""
    taken = refunded(order_id, provider)
    parts, left = [], amount
    for reference, captured in captures(order_id):
        room = captured - taken.get(reference, 0)
        share = min(room, left)
        if share > 0:
            parts.append({"intent": reference, "amount_cents": share, "reference": None})
            left -= share
    if left > 0:
        raise Conflict(
            f"The order's card payments have {amount - left} left to refund, not {amount}."
        )
    return json.dumps(parts)
