"""The pure rules of a return: which units may be asked for, the window, what arrived."""

from datetime import datetime, timedelta

from shop.errors import Conflict, Invalid

STATUSES = ("requested", "approved", "rejected", "received")
# A return still holding its units: they may not be asked for again.
OPEN = ("requested", "approved")
# The order statuses a return may be asked from (something shipped, money not all back).
ORDER_STATUSES = ("partially_shipped", "shipped", "delivered", "partially_refunded")
MOST_LINES = 500
MOST_UNITS = 1_000_000
REASON_LENGTH = 500
NOTE_LENGTH = 2000


def returnable(shipped: dict[int, int], taken: dict[int, int]) -> dict[int, int]:
    """Each line's units shipped and neither returned nor asked for in an open return."""
    return {line: max(units - taken.get(line, 0), 0) for line, units in shipped.items()}


def window_closes(started: datetime, days: int) -> datetime:
    """When the window to ask opens at ``started`` (the delivery, else the last shipment)."""
    return started + timedelta(days=days)


def check_open(started: datetime | None, days: int, moment: datetime, number: str) -> None:
    """409 before anything shipped and after the window."""
    if started is None:
        raise Conflict(f"Order {number} has not shipped yet: nothing can be returned.")
    if moment > window_closes(started, days):
        raise Conflict(
            f"Order {number} can no longer be returned: the {days}-day window after its"
            " delivery (or last shipment) has closed."
        )


def asked_lines(asked: list[dict], left: dict[int, int], known: set[int]) -> list[dict]:
    """The lines a request asks for, each within what is left to return (400 naming the
    field otherwise): ``[{"line", "quantity", "reason"}]``."""
    if not asked:
        raise Invalid("lines: name at least one line to return.")
    if len(asked) > MOST_LINES:
        raise Invalid(f"lines: give at most {MOST_LINES} lines.")
    seen, lines = set(), []
    for item in asked:
        line, quantity = item.get("line"), item.get("quantity")
        if not _whole(line) or line < 1:
            raise Invalid("lines: a line is a number from 1.")
        if not _whole(quantity) or not 1 <= quantity <= MOST_UNITS:
            raise Invalid(f"lines: line {line}: give 1 to {MOST_UNITS} units.")
        if line in seen:
            raise Invalid("lines: name each line once.")
        seen.add(line)
        if line not in known:
            raise Invalid(f"lines: the order has no line {line}.")
        if quantity > left.get(line, 0):
            raise Invalid(
                f"lines: line {line} has {left.get(line, 0)} unit(s) shipped and not yet"
                f" returned; {quantity} asked."
            )
        reason = item.get("reason")
        if reason is not None and (not isinstance(reason, str) or len(reason) > REASON_LENGTH):
            raise Invalid(f"lines: line {line}: a reason has at most {REASON_LENGTH} characters.")
        lines.append({"line": line, "quantity": quantity, "reason": (reason or "").strip() or None})
    return lines


def arrived(requested: list[dict], given: list[dict] | None) -> dict[int, int]:
    """The units of each requested line that arrived: every requested unit when ``given``
    is None, else the units it names (at most those requested; lines it leaves out: none)."""
    wanted = {line["line"]: line["quantity"] for line in requested}
    if given is None:
        return dict(wanted)
    if not given:
        raise Invalid("lines: name at least one line, or leave lines out (all arrived).")
    got, seen = dict.fromkeys(wanted, 0), set()
    for item in given:
        line, quantity = item.get("line"), item.get("quantity")
        if not _whole(line) or line not in wanted:
            raise Invalid(f"lines: the return has no line {line}.")
        if line in seen:
            raise Invalid("lines: name each line once.")
        seen.add(line)
        if not _whole(quantity) or not 0 <= quantity <= wanted[line]:
            raise Invalid(f"lines: line {line}: give 0 to {wanted[line]} units (as requested).")
        got[line] = quantity
    return got


def _whole(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
