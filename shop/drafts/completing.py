"""Completing a draft order: its order, placed by the checkout's own use case
(``checkout.placing.place_order``), which takes the stock then (never oversold), prices the
order by the quote's function and writes everything in one transaction; the draft is marked
completed in that same transaction (``DraftSource``), so a draft makes one order at most and
a second complete answers that order.

The order belongs to the draft's customer, or is a guest order of its e-mail (which becomes
a customer's at once when one has verified that address, as a cart's does). Its history and
audit entry name who completed it (staff, or the customer paying by the link). The draft's
credit counts as paid: the payment asks for the total less the credit, and an order the
credit covers is paid at once (docs/draft-orders.md, "Credit").
"""

import json
from dataclasses import dataclass

from shop import db, webhooks
from shop.actor import Actor
from shop.checkout import placing
from shop.clock import now_iso
from shop.drafts import store
from shop.errors import Conflict, Invalid
from shop.orders import guests
from shop.orders import lifecycle as orders


@dataclass(frozen=True)
class Customer:
    """The draft's customer as the checkout places an order for them (``place_order``'s
    buyer): the order is theirs; ``actor`` names who completes it."""

    id: str
    email: str | None
    name: str | None
    actor: Actor


class DraftSource:
    """The draft an order is placed from (``placing.Source``): locked first in the
    checkout's transaction, marked completed last."""

    def __init__(self, draft_id: str, seen: str):
        self.draft_id, self.seen, self.token = draft_id, seen, None

    def claim(self) -> str | None:
        db.lock(f"draft_order:{self.draft_id}")
        row = store.find(self.draft_id)
        if row["status"] == "completed":
            return row["order_id"]
        if row["updated_at"] != self.seen:  # changed since it was read
            raise Conflict("The draft order changed while it was being completed; try again.")
        return None

    def placed(self, order_id: str, token: str | None) -> None:
        done = db.execute(
            "UPDATE draft_orders SET status = 'completed', order_id = :order_id,"
            " updated_at = :now WHERE id = :id AND status = 'open'",
            {"order_id": order_id, "now": now_iso(), "id": self.draft_id},
        )
        if not done:
            raise Conflict("The draft order changed while it was being completed; try again.")
        self.token = token
        webhooks.emit("draft_order.completed", self.draft_id, store.get)
        if token is not None:
            guests.attach_to_verified(order_id)


def complete(draft_id: str, payment_method: str, actor: Actor) -> tuple[dict, dict, bool]:
    """Place the draft's order, paid by ``payment_method``, as ``actor``; answer ``(order,
    draft, created)``: the order as the API shows it (a card payment's ``client_secret``
    in the first answer), the draft, and whether the order is new (False: it was completed
    before, or by a concurrent request)."""
    row = store.find(draft_id)
    if row["status"] == "completed":
        return orders.load(row["order_id"]), store.present(row), False
    rows = store.lines(draft_id)
    gone = next((r for r in rows if not r["active"]), None)
    if gone is not None:
        raise Invalid(
            f"items: {gone['name']} (variant {gone['variant_id']}) is no longer for sale;"
            " change the draft's lines."
        )
    source = DraftSource(draft_id, row["updated_at"])
    command = placing.PlaceOrder(
        items=store.basket(rows),
        shipping_address=json.loads(row["shipping_address"]),
        payment_method=payment_method,
        shipping_method_id=row["shipping_method_id"],
        discount_code=row["discount_code"],
        credit_cents=row["credit_cents"],
        credit_note=row["credit_note"],
        source=source,
    )
    if row["customer_id"] is not None:
        buyer = Customer(row["customer_id"], row["customer_email"], row["customer_name"], actor)
    else:
        buyer = placing.Guest(email=row["email"], actor=actor)
    order, created = placing.place_order(command, buyer)
    return order, store.get(draft_id), created
