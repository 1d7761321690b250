"""List totals kept by the writes, so an unfiltered list's ``total`` is one key lookup.

Every list answers a ``total``. Counting it is linear in the table: at 100,000 products a
``COUNT(*)`` is most of what a page of ``GET /products`` costs. So the writes keep three counts
in ``counters``, in their own transaction: all products, active products, and orders. Lists
with a filter still count their rows.

Product writes already run one at a time (``db.lock("products")``) and every checkout already
bumps the order-number row, so the counts add no new contention. ``recount()`` rebuilds them
from the tables at every ``flask db upgrade`` (the release step, not a worker's start), so
rows written by other means (a bulk import, the benchmark's seeding, a node on an older
version during a rolling upgrade) are counted again.
"""

from shop import db

PRODUCTS = "products"
ACTIVE_PRODUCTS = "products_active"
ORDERS = "orders"

_COUNT = {
    PRODUCTS: "SELECT COUNT(*) FROM products",
    ACTIVE_PRODUCTS: "SELECT COUNT(*) FROM products WHERE active = 1",
    ORDERS: "SELECT COUNT(*) FROM orders",
}

# The count queries ``paginate`` runs for the unfiltered lists.
SQL = {name: f"SELECT value FROM counters WHERE name = '{name}'" for name in _COUNT}


def bump(name: str, by: int = 1) -> None:
    """Add ``by`` to a count, in the caller's transaction."""
    if by:
        db.execute(
            "UPDATE counters SET value = value + :by WHERE name = :name", {"by": by, "name": name}
        )


def recount() -> None:
    """Set every count from its table, in the caller's transaction.

    The counter rows are locked first: on PostgreSQL a write that bumped a count before we
    got here has then committed, and the count statements (each with a fresh snapshot) see
    its rows; a write that bumps later waits for this transaction and adds its own.
    """
    marks, names = db.in_list("n", _COUNT)
    db.execute(f"UPDATE counters SET value = value WHERE name IN {marks}", names)
    for name, count in _COUNT.items():
        db.execute(
            f"INSERT INTO counters (name, value) VALUES (:name, ({count}))"
            " ON CONFLICT (name) DO UPDATE SET value = excluded.value",
            {"name": name},
        )
