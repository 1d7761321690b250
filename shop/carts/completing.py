"""Completing a cart: its order, placed by the checkout's own use case
(``checkout.placing.place_order``), which takes the stock (never oversold), prices the order
by the quote's function and writes everything in one transaction; the cart is marked
completed in that same transaction (``CartSource``), so a cart makes one order at most.

A second complete answers the same order (``created`` False) and no token: a guest order's
token is shown once, only its hash is kept (docs/orders.md, "Guest orders").
"""

import json
from dataclasses import dataclass

from shop import db
from shop.actor import Actor
from shop.carts import present, store
from shop.checkout import placing
from shop.clock import now_iso
from shop.errors import Conflict, Invalid, NotFound
from shop.orders import guests
from shop.orders import lifecycle as orders


@dataclass(frozen=True)
class CompleteCart:
    """``POST /carts/{id}/complete``'s body, parsed."""

    cart_id: str
    payment_method: str


class CartSource:
    """The cart an order is placed from (``placing.Source``): locked first in the
    checkout's transaction, marked completed last; the guest order's token kept here for
    the answer."""

    def __init__(self, cart_id: str, seen: str):
        self.cart_id, self.seen, self.token, self.attached = cart_id, seen, None, False

    def claim(self) -> str | None:
        db.lock(f"cart:{self.cart_id}")
        row = db.one(
            "SELECT status, order_id, updated_at FROM carts WHERE id = :id", {"id": self.cart_id}
        )
        if row is None:
            raise NotFound(store.NOT_FOUND)
        if row["status"] == "completed":
            return row["order_id"]
        if row["updated_at"] != self.seen:  # a line or detail changed since it was read
            raise Conflict("The cart changed while it was being completed; try again.")
        return None

    def placed(self, order_id: str, token: str | None) -> None:
        done = db.execute(
            "UPDATE carts SET status = 'completed', order_id = :order_id, updated_at = :now"
            " WHERE id = :id AND status = 'open'",
            {"order_id": order_id, "now": now_iso(), "id": self.cart_id},
        )
        if not done:
            raise Conflict("The cart changed while it was being completed; try again.")
        self.token = token
        # A guest's order with an address a customer has verified is theirs at once.
        self.attached = token is not None and guests.attach_to_verified(order_id)


def complete(command: CompleteCart, holder: store.Holder, caller, actor: Actor) -> tuple:
    """Place the order of the cart; answer ``(order, token, created)``: the order as the API
    shows it, a guest order's token (None for a customer's order and for a repeat) and
    whether it is new. ``caller``: the signed-in customer's Caller (the order is theirs),
    None for a guest (the order belongs to the cart's e-mail); ``actor`` names who acts."""
    row, rows = store.find_with_lines(command.cart_id, holder)
    if row["status"] == "completed":
        return orders.load(row["order_id"]), None, False
    items = present.basket(rows, products=True)
    if not rows:
        raise Invalid("lines: the cart is empty; add a line first.")
    if len(items) < len(rows):
        gone = next(r for r in rows if not r["active"])
        raise Invalid(
            f"lines: {gone['name']} (variant {gone['variant_id']}) is no longer for sale;"
            " remove its line."
        )
    if row["shipping_address"] is None:
        raise Invalid("shipping_address: required to complete the cart.")
    if caller is None and not row["email"]:
        raise Invalid("email: required to complete a guest's cart (the order belongs to it).")
    if caller is None and row["discount_code"]:
        store.check_code(row["discount_code"], guest=True)
    source = CartSource(row["id"], row["updated_at"])
    command = placing.PlaceOrder(
        items=items,
        shipping_address=json.loads(row["shipping_address"]),
        payment_method=command.payment_method,
        shipping_method_id=row["shipping_method_id"],
        discount_code=row["discount_code"],
        source=source,
    )
    guest = actor.acting_as("anonymous", label=row["email"])  # the history names the e-mail
    buyer = caller if caller is not None else placing.Guest(email=row["email"], actor=guest)
    order, created = placing.place_order(command, buyer)
    if source.attached:  # the answer shows the customer it now belongs to (and keeps a
        # card payment's client_secret, which only this answer carries)
        order = {**order, "customer": orders.load(order["id"])["customer"]}
    return order, source.token, created
