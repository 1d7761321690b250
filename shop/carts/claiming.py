"""A guest cart taken by the customer who signs in (``POST /carts/{id}/claim``): it becomes
theirs, and their other open carts are merged into it, then deleted, so a customer has one
open cart afterwards. A variant in both carts gets one line: the quantities summed, capped
at the variant's stock (never below the larger of the two, which the visitor already saw
as available or not). The claimed cart keeps its details; one it lacks (e-mail, address,
method, code, note) comes from the newest merged cart that has it.
"""

from shop import db
from shop.carts import store
from shop.clock import now_iso
from shop.errors import Conflict, NotFound

_FILLED = ("email", "shipping_address", "shipping_method_id", "discount_code", "note")


def merged_quantity(mine: int, theirs: int, stock: int) -> int:
    """One line of two carts' quantities: summed, capped at ``stock``, never below either."""
    return min(mine + theirs, max(stock, mine, theirs))


def claim(cart_id: str, customer_id: str) -> None:
    """Bind the cart to ``customer_id`` and merge their other open carts into it (one
    transaction); 404 for an unknown cart or another customer's, 409 for a completed one."""
    with db.transaction():
        row = store.locked(cart_id, store.Holder(customer_id))
        others = db.query(
            "SELECT * FROM carts WHERE customer_id = :customer AND status = 'open'"
            " AND id <> :id ORDER BY updated_at DESC, id",
            {"customer": customer_id, "id": cart_id},
        )
        details = {key: row[key] for key in _FILLED}
        for other in others:
            db.lock(f"cart:{other['id']}")
            for key in _FILLED:
                details[key] = details[key] if details[key] is not None else other[key]
            _merge_lines(cart_id, other["id"])
            db.execute("DELETE FROM carts WHERE id = :id", {"id": other["id"]})
        db.execute(  # updated_at: marked by ``store.locked``
            "UPDATE carts SET customer_id = :customer, email = :email,"
            " shipping_address = :shipping_address, shipping_method_id = :shipping_method_id,"
            " discount_code = :discount_code, note = :note WHERE id = :id",
            {**details, "customer": customer_id, "id": cart_id},
        )


def _merge_lines(into: str, source: str) -> None:
    """Move the lines of cart ``source`` into cart ``into``."""
    moment = now_iso()
    mine = {line["variant_id"]: line for line in store.lines(into)}
    for line in store.lines(source):
        have = mine.get(line["variant_id"])
        if have is None:
            db.execute(
                "UPDATE cart_lines SET cart_id = :into, updated_at = :now WHERE id = :id",
                {"into": into, "now": moment, "id": line["id"]},
            )
            continue
        quantity = merged_quantity(have["quantity"], line["quantity"], line["stock"])
        db.execute(
            "UPDATE cart_lines SET quantity = :quantity, updated_at = :now WHERE id = :id",
            {"quantity": quantity, "now": moment, "id": have["id"]},
        )


def take_over(cart_id: str | None, customer_id: str) -> str | None:
    """The cart a browser keeps once its customer signs in: its guest cart (``cart_id``)
    claimed, their other open carts merged into it; without one (or one no longer open, or
    another customer's), their newest open cart. None when they have none."""
    if cart_id is not None:
        try:
            claim(cart_id, customer_id)
            return cart_id
        except (NotFound, Conflict):
            pass
    return db.value(
        "SELECT id FROM carts WHERE customer_id = :customer AND status = 'open'"
        " ORDER BY updated_at DESC, id LIMIT 1",
        {"customer": customer_id},
    )
