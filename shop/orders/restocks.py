"""An order's units back on the shelf: at most the units sold, whatever path comes first.

Two paths put units back: a refund's ``restock`` (``payments/refunds.py``), the units it
names, and a move to ``cancelled`` or ``refunded`` (``orders/lifecycle.py``), every unit not
back yet. What is back so far is every refund's ``restock`` (whatever became of its money:
its units went back when the refund was taken) and, once ``orders.restocked_at`` is set by
the move, every unit. Callers hold the order's lock (``orders.lock``) in their transaction,
so two paths never both count the same units as still out.
"""

import json

from shop import db
from shop.catalogue import stock, variants


def back(order_id: str) -> dict[int, int]:
    """The units of each line put back so far (every unit once the order's move did it)."""
    return {line: done for line, (_sold, done) in _count(order_id).items()}


def left(order_id: str) -> dict[int, int]:
    """The units of each line still out: sold and not put back."""
    return {line: sold - done for line, (sold, done) in _count(order_id).items()}


def _count(order_id: str) -> dict[int, tuple[int, int]]:
    """Each line's units sold and units put back so far."""
    lines = db.query(
        "SELECT i.line, i.quantity, o.restocked_at FROM order_items i"
        " JOIN orders o ON o.id = i.order_id WHERE i.order_id = :id",
        {"id": order_id},
    )
    if lines and lines[0]["restocked_at"] is not None:
        return {line["line"]: (line["quantity"], line["quantity"]) for line in lines}
    done = dict.fromkeys((line["line"] for line in lines), 0)
    for row in db.query("SELECT restock FROM refunds WHERE order_id = :id", {"id": order_id}):
        for item in json.loads(row["restock"]):
            done[item["line"]] = done.get(item["line"], 0) + item["quantity"]
    return {line["line"]: (line["quantity"], done[line["line"]]) for line in lines}


def put_back_rest(order_id: str, moment: str) -> bool:
    """Put back every unit still out, once ever (a move to ``cancelled`` or ``refunded``);
    answer whether this call did it."""
    rest = left(order_id)
    claimed = db.execute(
        "UPDATE orders SET restocked_at = :now WHERE id = :id AND restocked_at IS NULL",
        {"now": moment, "id": order_id},
    )
    if claimed:
        put_back(order_id, rest)
    return bool(claimed)


def put_back(order_id: str, units: dict[int, int]) -> None:
    """Put ``units`` (line -> quantity, already checked against ``left``) on the shelf."""
    units = {line: quantity for line, quantity in units.items() if quantity > 0}
    if not units:
        return
    items = db.query(
        "SELECT line, variant_id, product_id FROM order_items WHERE order_id = :id",
        {"id": order_id},
    )
    rows = [{**item, "quantity": units[item["line"]]} for item in items if item["line"] in units]
    for product_id in stock.put_back(rows):
        variants.refresh(product_id)
