"""Order edits before fulfilment (issue 41): the request, its arithmetic and its records.

``EditRequest`` is the one command, from the API and the console; ``new_lines`` applies it
to an order's lines and ``settle`` says what the money does; both are pure. The edit itself
(stock, pricing, refund, invoices, under the order's lock) is ``checkout/editing.py``, which
reprices the new basket with the quote's function. Rules and decisions: docs/orders.md,
"Editing an order".
"""

import json
from dataclasses import dataclass, field

from shop import db
from shop.errors import Invalid

MOST_LINES = 100  # the checkout's
MOST_UNITS = 10000  # per line, the checkout's
NOTE_LENGTH = 500
# ``EditRequest.discount_code``: keep the order's code (the default), or None to remove it.
KEEP = "keep"


@dataclass(frozen=True)
class EditRequest:
    """``add``: ``[{"variant_id", "quantity"}]``; ``remove``: ``[{"line"}]``;
    ``set_quantity``: ``[{"line", "quantity"}]``; ``discount_code``: ``KEEP`` or None (the
    edit removes the order's code)."""

    add: list[dict] = field(default_factory=list)
    remove: list[dict] = field(default_factory=list)
    set_quantity: list[dict] = field(default_factory=list)
    note: str | None = None
    discount_code: str | None = KEEP

    def body(self) -> dict:
        """The request as a body, for an Idempotency-Key's hash (the given parts only)."""
        body = {k: getattr(self, k) for k in ("add", "remove", "set_quantity") if getattr(self, k)}
        if self.note is not None:
            body["note"] = self.note
        if self.discount_code != KEEP:
            body["discount_code"] = self.discount_code
        return body

    def checked(self) -> "EditRequest":
        """The request itself; 400 naming the field when a limit is broken (the limits the
        API's schema states, so a form handler copies none of them)."""
        for name in ("add", "remove", "set_quantity"):
            items = getattr(self, name)
            if len(items) > MOST_LINES:
                raise Invalid(f"{name}: give at most {MOST_LINES} lines.")
            for item in items:
                if name != "add" and (not _whole(item.get("line")) or item["line"] < 1):
                    raise Invalid(f"{name}: a line is a number from 1.")
                if name == "add" and not isinstance(item.get("variant_id"), str):
                    raise Invalid("add: each item names a variant_id.")
                quantity = item.get("quantity")
                if name != "remove" and (not _whole(quantity) or not 1 <= quantity <= MOST_UNITS):
                    raise Invalid(f"{name}: give 1 to {MOST_UNITS} units.")
        if self.note is not None and (
            not isinstance(self.note, str) or len(self.note) > NOTE_LENGTH
        ):
            raise Invalid(f"note: at most {NOTE_LENGTH} characters.")
        if self.discount_code not in (KEEP, None):
            raise Invalid(
                "discount_code: an edit keeps the order's code or removes it (null);"
                " it cannot add or change one."
            )
        if not (self.add or self.remove or self.set_quantity or self.discount_code is None):
            raise Invalid("Nothing to change: give add, remove, set_quantity or discount_code.")
        return self


def _whole(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def new_lines(lines: list[dict], request: EditRequest) -> tuple[list[dict], list[dict]]:
    """The order's lines after ``request`` (pure): ``lines`` are ``{"line", "variant_id",
    "quantity"}`` in line order; answer the new lines (kept lines keep their number, added
    ones follow the highest) and the changes, each ``{"kind", "line", "variant_id",
    "from", "to"}``. 400 naming the field for a line the order lacks, a line named twice, a
    variant added that the order has, or no line left."""
    by_line = {line["line"]: dict(line) for line in lines}
    named: set[int] = set()
    changes = []
    for kind, items in (("remove", request.remove), ("set_quantity", request.set_quantity)):
        for item in items:
            number = item["line"]
            if number not in by_line:
                raise Invalid(f"{kind}: the order has no line {number}.")
            if number in named:
                raise Invalid(f"{kind}: line {number} is named twice; name each line once.")
            named.add(number)
            line = by_line[number]
            to = 0 if kind == "remove" else item["quantity"]
            if to == line["quantity"]:
                raise Invalid(f"{kind}: line {number} already has {to} units.")
            changes.append(
                {"kind": kind, "line": number, "variant_id": line["variant_id"]}
                | {"from": line["quantity"], "to": to}
            )
            line["quantity"] = to
    held = {line["variant_id"]: line["line"] for line in lines}
    after = max(by_line, default=0)
    added = []
    for item in request.add:
        variant_id = item["variant_id"]
        if variant_id in held:
            raise Invalid(
                f"add: variant {variant_id} is line {held[variant_id]} already; set its quantity."
            )
        after += 1
        held[variant_id] = after
        added.append({"line": after, "variant_id": variant_id, "quantity": item["quantity"]})
        changes.append(
            {"kind": "add", "line": after, "variant_id": variant_id}
            | {"from": 0, "to": item["quantity"]}
        )
    kept = [line for line in by_line.values() if line["quantity"] > 0]
    result = sorted(kept, key=lambda line: line["line"]) + added
    if not result:
        raise Invalid("remove: an order keeps at least one line; cancel it instead.")
    return result, changes


def stock_moves(before: list[dict], after: list[dict]) -> dict[str, int]:
    """Units to take (positive) or put back (negative) per variant, from the lines
    ``before`` and ``after`` an edit (pure); variants that do not move are left out."""
    moves: dict[str, int] = {}
    for line in after:
        moves[line["variant_id"]] = moves.get(line["variant_id"], 0) + line["quantity"]
    for line in before:
        moves[line["variant_id"]] = moves.get(line["variant_id"], 0) - line["quantity"]
    return {variant: units for variant, units in moves.items() if units}


def settle(paid: bool, total: int, balance_due: int, new_total: int) -> tuple[int, int]:
    """What an edit does with the money (pure): ``(refund, balance due)``.

    An unpaid order just changes its total (nothing received, nothing owed beyond it). A
    paid one holds ``total - balance_due`` received: a new total under it refunds the
    difference, one over it leaves the difference due.
    """
    if not paid:
        return 0, 0
    received = total - balance_due
    if new_total < received:
        return received - new_total, 0
    return 0, new_total - received


# -- records ---------------------------------------------------------------------------------

COLUMNS = (
    "id, order_id, changes, note, before_totals, after_totals, refund_id, balance_due_cents,"
    " created_at, by_kind, by_id, by_label"
)
# An edit's refund as the edit shows it (``refunds`` is the refund path's table).
REFUND = ("id", "amount_cents", "status", "provider")
_SELECT = (
    "SELECT e.id, e.order_id, e.changes, e.note, e.before_totals, e.after_totals,"
    " e.balance_due_cents, e.created_at, e.by_kind, e.by_id, e.by_label, r.id AS refund_id,"
    " r.amount_cents AS refund_amount_cents, r.status AS refund_status,"
    " r.provider AS refund_provider FROM order_edits e LEFT JOIN refunds r ON r.id = e.refund_id"
)
TOTALS = ("subtotal_cents", "discount_cents", "shipping_cents", "tax_cents", "total_cents")


def totals(order: dict) -> dict:
    """The totals an edit records before and after (``TOTALS``, and the discount code)."""
    return {key: order[key] for key in TOTALS} | {"discount_code": order.get("discount_code")}


def record(values: dict) -> None:
    """Write an edit's row (in the edit's transaction)."""
    db.execute(
        f"INSERT INTO order_edits ({COLUMNS}, idempotency_key, request_hash) VALUES (:id,"
        " :order_id, :changes, :note, :before_totals, :after_totals, :refund_id,"
        " :balance_due_cents, :created_at, :by_kind, :by_id, :by_label, :idempotency_key,"
        " :request_hash)",
        {
            **values,
            "changes": json.dumps(values["changes"]),
            "before_totals": json.dumps(values["before_totals"], sort_keys=True),
            "after_totals": json.dumps(values["after_totals"], sort_keys=True),
        },
    )


def by_key(order_id: str, key: str) -> dict | None:
    """The edit an Idempotency-Key made on the order (``id``, ``request_hash``), or None."""
    return db.one(
        "SELECT id, request_hash FROM order_edits WHERE order_id = :id AND idempotency_key = :key",
        {"id": order_id, "key": key},
    )


def load(edit_id: str) -> dict:
    """One edit as the API shows it."""
    return _present(db.one(_SELECT + " WHERE e.id = :id", {"id": edit_id}))


def of_order(order_id: str) -> list[dict]:
    """An order's edits, oldest first."""
    return [
        _present(row)
        for row in db.query(
            _SELECT + " WHERE e.order_id = :id ORDER BY e.created_at, e.id",
            {"id": order_id},
        )
    ]


def _present(row: dict) -> dict:
    return {
        "id": row["id"],
        "order_id": row["order_id"],
        "changes": json.loads(row["changes"]),
        "note": row["note"],
        "before": json.loads(row["before_totals"]),
        "after": json.loads(row["after_totals"]),
        "refund": {key: row[f"refund_{key}"] for key in REFUND} if row["refund_id"] else None,
        "balance_due_cents": row["balance_due_cents"],
        "created_at": row["created_at"],
        "by": {"kind": row["by_kind"], "id": row["by_id"], "label": row["by_label"]}
        if row["by_kind"]
        else None,
    }
