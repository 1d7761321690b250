"""List totals kept by the writes, so an unfiltered list's ``total`` is one key lookup.

``counters`` keeps three counts: all products, active products (bumped by product writes,
which run one at a time) and orders. Checkout bumps nothing: the orders row counts orders
created up to ``counted_to``, ``SETTLE`` in the past, the list adds the newer ones, and the
worker moves ``counted_to`` forward (``fold_orders``). ``recount()`` rebuilds every count at
each ``flask db upgrade``. Why: docs/performance.md, "Checkout without a hot row".
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
    """Hold the block's bumps and make them at its end, one statement per count, so a bulk
    write in one transaction updates each counter row once (docs/performance.md, "An import
    that never stalls the shop"). Nothing is bumped when the block raises; enter it inside
    the transaction, and roll back the whole transaction on any error (a savepoint undone
    inside the block does not take its bumps back)."""
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
