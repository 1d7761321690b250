"""The SQL of returns and the JSON a return is shown as (the API's ``ReturnSchema``)."""

from shop import db
from shop.clock import parse

COLUMNS = (
    "r.id, r.order_id, o.number AS order_number, o.currency, r.status, r.note,"
    " r.instructions, r.reject_reason, r.restock, r.refund, r.refund_id, r.created_at,"
    " r.updated_at, r.decided_at, r.received_at, r.by_kind, r.by_id, r.by_label,"
    " r.exchange_draft_id"
)
SELECT = f"SELECT {COLUMNS} FROM returns r JOIN orders o ON o.id = r.order_id"


def shipped(order_id: str) -> dict[int, int]:
    """Each line of the order and its units shipped so far (0 for none)."""
    rows = db.query(
        "SELECT i.line, COALESCE(SUM(l.quantity), 0) AS units FROM order_items i"
        " LEFT JOIN shipment_lines l ON l.order_id = i.order_id AND l.line = i.line"
        " WHERE i.order_id = :id GROUP BY i.line ORDER BY i.line",
        {"id": order_id},
    )
    return {row["line"]: row["units"] for row in rows}


def taken(order_id: str) -> dict[int, int]:
    """Each line's units held by returns: asked for in an open one, or received."""
    rows = db.query(
        "SELECT l.line, SUM(CASE WHEN r.status = 'received' THEN COALESCE(l.received, 0)"
        " ELSE l.quantity END) AS units FROM return_lines l JOIN returns r ON r.id = l.return_id"
        " WHERE l.order_id = :id AND r.status IN ('requested', 'approved', 'received')"
        " GROUP BY l.line",
        {"id": order_id},
    )
    return {row["line"]: row["units"] for row in rows}


def window_start(order_id: str):
    """When the return window opens: the order's delivery, else its last shipment (None
    before anything shipped)."""
    delivered = db.value(
        "SELECT MAX(at) FROM order_status_history WHERE order_id = :id AND status = 'delivered'",
        {"id": order_id},
    )
    moment = delivered or db.value(
        "SELECT MAX(created_at) FROM shipments WHERE order_id = :id", {"id": order_id}
    )
    return parse(moment) if moment else None


def insert(row: dict, lines: list[dict]) -> None:
    """Write a return and its lines (in the caller's transaction)."""
    db.execute(
        "INSERT INTO returns (id, order_id, status, note, restock, refund, created_at,"
        " updated_at, by_kind, by_id, by_label) VALUES (:id, :order_id, 'requested', :note,"
        " 0, 0, :now, :now, :by_kind, :by_id, :by_label)",
        row,
    )
    db.execute_many(
        "INSERT INTO return_lines (return_id, order_id, line, quantity, reason)"
        " VALUES (:return_id, :order_id, :line, :quantity, :reason)",
        [{"return_id": row["id"], "order_id": row["order_id"], **line} for line in lines],
    )


def move(return_id: str, expected: str, status: str, moment: str, **fields) -> bool:
    """Move a return from ``expected`` to ``status`` with ``fields``; answer whether it was
    still ``expected`` (a concurrent move wins otherwise)."""
    sets = "".join(f", {name} = :{name}" for name in fields)
    return bool(
        db.execute(
            f"UPDATE returns SET status = :status, updated_at = :now{sets}"
            " WHERE id = :id AND status = :expected",
            {"status": status, "now": moment, "id": return_id, "expected": expected, **fields},
        )
    )


def set_received(return_id: str, units: dict[int, int]) -> None:
    db.execute_many(
        "UPDATE return_lines SET received = :received WHERE return_id = :id AND line = :line",
        [{"received": n, "id": return_id, "line": line} for line, n in units.items()],
    )


def link_refund(return_id: str, refund_id: str) -> None:
    db.execute(
        "UPDATE returns SET refund_id = :refund WHERE id = :id AND refund_id IS NULL",
        {"refund": refund_id, "id": return_id},
    )


def link_exchange(return_id: str, draft_id: str) -> None:
    db.execute(
        "UPDATE returns SET exchange_draft_id = :draft WHERE id = :id"
        " AND exchange_draft_id IS NULL",
        {"draft": draft_id, "id": return_id},
    )


def _lines(return_ids: list[str]) -> dict[str, list[dict]]:
    if not return_ids:
        return {}
    names, params = db.in_list("r", return_ids)
    rows = db.query(
        "SELECT l.return_id, l.line, i.name, l.quantity, l.received, l.reason"
        " FROM return_lines l JOIN order_items i ON i.order_id = l.order_id AND i.line = l.line"
        f" WHERE l.return_id IN {names} ORDER BY l.return_id, l.line",
        params,
    )
    found: dict[str, list[dict]] = {}
    for row in rows:
        found.setdefault(row.pop("return_id"), []).append(row)
    return found


def present(rows: list[dict]) -> list[dict]:
    """Rows of ``SELECT`` as the API shows returns, with their lines."""
    lines = _lines([row["id"] for row in rows])
    return [
        {
            **{k: row[k] for k in ("id", "order_id", "order_number", "status", "note")},
            **{k: row[k] for k in ("instructions", "reject_reason", "refund_id")},
            "exchange_draft_id": row["exchange_draft_id"],
            "restock": bool(row["restock"]),
            "refund": bool(row["refund"]),
            **{k: row[k] for k in ("created_at", "updated_at", "decided_at", "received_at")},
            "by": {"kind": row["by_kind"], "id": row["by_id"], "label": row["by_label"]}
            if row["by_kind"]
            else None,
            "lines": lines.get(row["id"], []),
        }
        for row in rows
    ]


def load(return_id: str) -> dict | None:
    """One return as the API shows it, or None."""
    rows = db.query(SELECT + " WHERE r.id = :id", {"id": return_id})
    return present(rows)[0] if rows else None


def of_order(order_id: str) -> list[dict]:
    """An order's returns, oldest first."""
    return present(
        db.query(SELECT + " WHERE r.order_id = :id ORDER BY r.created_at, r.id", {"id": order_id})
    )


def exists(order_id: str) -> bool:
    return bool(db.value("SELECT 1 FROM orders WHERE id = :id", {"id": order_id}))


def owned(order_id: str, customer_id: str) -> bool:
    """Whether ``order_id`` is ``customer_id``'s order."""
    return bool(
        db.value(
            "SELECT 1 FROM orders WHERE id = :id AND customer_id = :customer",
            {"id": order_id, "customer": customer_id},
        )
    )
