"""What an order's life records, shared by checkout (``services/checkout.py``) and status
changes (``api/orders.py``)."""

from flask import g

from shop import db


def record_history(order_id: str, status: str, note: str | None, moment: str) -> None:
    """Add an entry to an order's status history, by the current caller."""
    actor = g.caller.actor
    db.execute(
        "INSERT INTO order_status_history (id, order_id, status, note, at, by_kind, by_id,"
        " by_label) VALUES (:id, :order_id, :status, :note, :at, :kind, :by_id, :label)",
        {
            "id": db.new_id(),
            "order_id": order_id,
            "status": status,
            "note": note,
            "at": moment,
            "kind": actor["kind"],
            "by_id": actor["id"],
            "label": actor["label"],
        },
    )
