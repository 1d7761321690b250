"""The invoice PDF (issue 42's "new surfaces get rows"): ``GET /orders/{id}/invoice`` with a
``read:order`` key, each request a paid order's invoice as a customer's or an accountant's
download reads it: its PDF as kept (``shop/invoices/kept.py``, migration 0052).

The seeded orders are written by SQL, so none has an invoice: ``data`` issues one for each
order the row asks for, as the move to ``paid`` would (``issuing.ensure``, one transaction),
then keeps their PDFs as the worker does after issue (``kept.keep_due`` until none is left),
and leaves them (the orders stay too, as checkout's do). A download that finds no PDF (one
asked for before the worker got to it) draws and keeps it: docs/performance.md gives its cost.
Targets: p99 at half rate under 50 ms as every row, and an invoice costs the worker at most
``CHECKOUT_SHARE`` checkouts of the same run (ratio, checkout's CPU over the invoice's, ≥ 1
/ ``CHECKOUT_SHARE``): a PDF is layout work (some fifty cells placed and measured by fpdf2:
~5 ms on this VM under load, against checkout's 2-4 ms), drawn once per document, so even a
first download must stay within a few orders' cost.
"""

from contextlib import contextmanager

from shop import db
from shop.invoices import issuing, kept
from shop.orders import lifecycle

ORDERS = 2000  # invoices drawn in turn, so no request repeats another's order
CHECKOUT_SHARE = 3.0
MIN_RATIO = 1 / CHECKOUT_SHARE


@contextmanager
def data(order_ids: list[str]):
    """An issued invoice for each of ``order_ids`` (in an app context on the shop's
    database)."""
    with db.transaction():
        for order_id in order_ids:
            issuing.ensure(order_id, lifecycle.load)
    while kept.keep_due(batch=200):  # the worker's passes, as after issue
        pass
    yield


def scenario(scenario_class, order_ids: list[str], key: dict, checkout: str):
    """The row (``scenario_class``: the Scenario class) on the first ``ORDERS`` of
    ``order_ids``, its ratio against ``checkout``."""
    ids = order_ids[:ORDERS]
    return scenario_class(
        "GET /orders/{id}/invoice (key, PDF)",
        "GET",
        "/orders/{}/invoice",
        [("GET", f"/orders/{order_id}/invoice", "") for order_id in ids],
        key,
        baseline=checkout,
        min_ratio=MIN_RATIO,
        limits=False,  # its ratio is taken against checkout, which runs with limits off
        data=lambda: data(ids),
    )
