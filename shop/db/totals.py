"""List totals kept by the writes, so an unfiltered list's ``total`` is one key lookup.

Every list answers a ``total``. Counting it is linear in the table: at 100,000 products a
``COUNT(*)`` is most of what a page of ``GET /products`` costs. So ``counters`` keeps three
counts: all products, active products, and orders. Lists with a filter still count their
rows.

Product writes already run one at a time (``db.lock("products")``) and bump their counts in
their own transaction. Checkout does not: a row every checkout updates is a lock every
concurrent checkout on PostgreSQL waits for until the first commits (issue 29). The orders
row instead counts the orders created up to ``counted_to``, an instant ``SETTLE`` in the
past, and the list adds those created after it: a ``COUNT(*)`` of the newest few minutes
of orders on the ``orders_created_at`` index. The worker moves ``counted_to`` forward every
minute (``fold_orders``). ``SETTLE`` is longer than any checkout transaction lasts and than
the clocks of two nodes differ, so no order commits with a ``created_at`` already folded.
A node of a release before migration 0017 still bumps the row during a rolling upgrade: its
orders are counted twice until the next ``flask db upgrade`` recounts.

``recount()`` rebuilds every count from the tables at every ``flask db upgrade`` (the
release step, not a worker's start), so rows written by other means (a bulk import, the
benchmark's seeding, a node on an older version during a rolling upgrade) are counted again.
"""

from contextlib import contextmanager
from contextvars import ContextVar
from datetime import timedelta

from shop import db
from shop.clock import iso, now

PRODUCTS = "products"
ACTIVE_PRODUCTS = "products_active"
ORDERS = "orders"
SETTLE = timedelta(minutes=10)

_COUNT = {
    PRODUCTS: "SELECT COUNT(*) FROM products",
    ACTIVE_PRODUCTS: "SELECT COUNT(*) FROM products WHERE active = 1",
    ORDERS: "SELECT COUNT(*) FROM orders WHERE created_at <= :cutoff",
}

# The count queries ``paginate`` runs for the unfiltered lists.
SQL = {name: f"SELECT value FROM counters WHERE name = '{name}'" for name in _COUNT}
# The newer orders are counted on the ``orders_created_at`` index. PostgreSQL plans the
# count before it reads ``counted_to``, so it estimates a third of the table newer and
# scanned every order (277 ms at 200,000; issue 29); a range with a bound it does know (the
# latest instant ``clock.iso`` writes) is estimated narrow, and read from the index (0.2 ms).
SQL[ORDERS] = (
    "SELECT value + (SELECT COUNT(*) FROM orders WHERE created_at > COALESCE(counted_to, '')"
    " AND created_at <= '9999-12-31T23:59:59.999999Z')"
    f" FROM counters WHERE name = '{ORDERS}'"
)


# The bumps ``batched`` holds back, by name (None: bump at once).
_HELD: ContextVar[dict | None] = ContextVar("totals_held", default=None)


def bump(name: str, by: int = 1) -> None:
    """Add ``by`` to a count, in the caller's transaction (in ``batched``: at its end)."""
    held = _HELD.get()
    if held is not None:
        held[name] = held.get(name, 0) + by
    elif by:
        db.execute(
            "UPDATE counters SET value = value + :by WHERE name = :name", {"by": by, "name": name}
        )


@contextmanager
def batched():
    """Hold the block's bumps and make them at its end, one statement per count: a bulk
    write in one transaction (an import's chunk) updates each counter row once, not once
    per product (on PostgreSQL N updates of one row in one transaction grow superlinearly:
    issue 35). Nothing is bumped when the block raises; enter it inside the transaction,
    and roll back the whole transaction on any error (a savepoint undone inside the block
    does not take its bumps back)."""
    held: dict = {}
    token = _HELD.set(held)
    try:
        yield
    finally:
        _HELD.reset(token)
    for name, by in held.items():
        bump(name, by)


def recount() -> None:
    """Set every count from its table, in the caller's transaction.

    The counter rows are locked first: on PostgreSQL a write that bumped a count before we
    got here has then committed, and the count statements (each with a fresh snapshot) see
    its rows; a write that bumps later waits for this transaction and adds its own.
    """
    marks, names = db.in_list("n", _COUNT)
    db.execute(f"UPDATE counters SET value = value WHERE name IN {marks}", names)
    cutoff = iso(now() - SETTLE)
    for name, count in _COUNT.items():
        db.execute(
            f"INSERT INTO counters (name, value, counted_to) VALUES (:name, ({count}), :cutoff)"
            " ON CONFLICT (name) DO UPDATE SET value = excluded.value,"
            " counted_to = excluded.counted_to",
            {"name": name, "cutoff": cutoff if name == ORDERS else None},
        )


def fold_orders() -> None:
    """Count the orders created up to ``SETTLE`` ago into the orders row (the worker's job,
    every minute), so the list's count of newer orders stays a few minutes' worth."""
    db.execute(
        "UPDATE counters SET value = value + (SELECT COUNT(*) FROM orders"
        " WHERE created_at > counters.counted_to AND created_at <= :cutoff), counted_to = :cutoff"
        " WHERE name = :name AND counted_to < :cutoff",
        {"name": ORDERS, "cutoff": iso(now() - SETTLE)},
    )
