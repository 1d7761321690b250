"""Carts (issue 38): adding a line, reading a cart and completing one, against the baselines.

``POST /carts/{id}/lines`` adds one unit of a product to one of 2,000 empty guest carts (the
same variant again adds to its line: every request writes); target 0.5 of one row by id.
``GET /carts/{id}`` reads a cart of two lines with its address, priced by the quote's
function; target 0.5 of one row by id. ``POST /carts/{id}/complete`` completes a guest cart
of one line (a new order each time: 4,000 carts for the full-rate run, 4,000 more for the
half-rate one); target 0.8 of ``POST /payments/checkout`` of the same run, whose use case it
calls. The carts are made by ``data`` and deleted after (orders stay, as checkout's do).
"""

import functools
import json
import random
import string
from contextlib import contextmanager

from shop import db
from shop.clock import now_iso

ADD_RATIO = 0.5  # against one row by id
READ_RATIO = 0.5  # against one row by id
COMPLETE_RATIO = 0.8  # against POST /payments/checkout, same run
ADDRESS = {
    "name": "Bench Guest",
    "line1": "1 High Street",
    "city": "Bath",
    "postal_code": "BA1 1AA",
    "country": "GB",
}
_ALPHABET = string.ascii_letters + string.digits + "-_"


def _ids(kind: int, count: int) -> list[str]:
    """``count`` cart ids of the shape the service makes (43 URL-safe characters), the same
    in every run (the scenarios' request lists are built before their data)."""
    rng = random.Random(380 + kind)
    return ["".join(rng.choice(_ALPHABET) for _ in range(43)) for _ in range(count)]


EMPTY, READ, COMPLETE, COMPLETE_HALF = (_ids(n, c) for n, c in enumerate((2000, 2000, 4000, 4000)))


@contextmanager
def data(product_ids: list[str]):
    """The carts the scenarios use (in an app context on the shop's database), deleted after."""
    moment, address = now_iso(), json.dumps(ADDRESS, sort_keys=True)
    carts, lines = [], []
    for kind, ids in ((EMPTY, EMPTY), (READ, READ), (COMPLETE, COMPLETE + COMPLETE_HALF)):
        for n, cart_id in enumerate(ids):
            filled = kind is not EMPTY
            carts.append(
                {
                    "id": cart_id,
                    "email": f"guest{n}@example.com" if filled else None,
                    "address": address if filled else None,
                    "now": moment,
                }
            )
            for k in range(2 if kind is READ else 1 if filled else 0):
                variant = product_ids[(n + k) % len(product_ids)]
                lines.append(
                    {"id": db.new_id(), "cart": cart_id, "variant": variant, "now": moment}
                )
    with db.transaction():
        db.execute_many(
            "INSERT INTO carts (id, status, email, shipping_address, reminders, created_at,"
            " updated_at) VALUES (:id, 'open', :email, :address, 0, :now, :now)",
            carts,
        )
        db.execute_many(
            "INSERT INTO cart_lines (id, cart_id, variant_id, quantity, created_at, updated_at)"
            " VALUES (:id, :cart, :variant, 1, :now, :now)",
            lines,
        )
    # As a shop's own carts have them (autovacuum's), not a fresh table's guesses: without,
    # PostgreSQL read a cart's lines by joining every variant (53 ms a read, measured).
    db.get_db().analyze(tables=("carts", "cart_lines"))
    try:
        yield
    finally:
        with db.transaction():
            db.execute("DELETE FROM carts WHERE email IS NULL OR email LIKE 'guest%@example.com'")


def scenarios(scenario, product_ids: list[str], checkout: str, one_row: str) -> list:
    """The three rows (``scenario``: the Scenario class), on ``product_ids``; ratios against
    ``checkout`` and ``one_row``."""
    made = functools.partial(data, product_ids[:2000])
    json_headers = {"Content-Type": "application/json"}

    def add(cart_id, n):
        body = {"product_id": product_ids[n % len(product_ids)], "quantity": 1}
        return ("POST", f"/carts/{cart_id}/lines", json.dumps(body, separators=(",", ":")))

    def complete(ids):
        return [("POST", f"/carts/{i}/complete", '{"payment_method":"manual"}') for i in ids]

    return [
        scenario(
            "POST /carts/{id}/lines",
            "POST",
            "/carts/{}/lines",
            [add(cart_id, n) for n, cart_id in enumerate(EMPTY)],
            json_headers,
            baseline=one_row,
            min_ratio=ADD_RATIO,
            data=made,
        ),
        scenario(
            "GET /carts/{id}",
            "GET",
            "/carts/{}",
            [("GET", f"/carts/{cart_id}", "") for cart_id in READ],
            baseline=one_row,
            min_ratio=READ_RATIO,
            data=made,
        ),
        scenario(
            "POST /carts/{id}/complete",
            "POST",
            "/carts/{}/complete",
            complete(COMPLETE),
            json_headers,
            baseline=checkout,
            min_ratio=COMPLETE_RATIO,
            half_requests=complete(COMPLETE_HALF),
            probe=complete(COMPLETE_HALF[-2:]),
            limits=False,
            data=made,
        ),
    ]
