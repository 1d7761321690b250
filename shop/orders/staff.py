"""What the shop's staff do with an order besides moving it (issue 37): internal notes, and
sending its e-mail again.

A note is for the staff alone: it is never in the order's JSON, its events or its mails,
and only someone who may read orders sees it (the console's order page). Adding one needs
``orders.update_status``, as any other change of an order. Resending queues the mail the
customer got for the order's current status again (the confirmation while it is pending),
for a customer who lost it or gave a wrong spam filter; each is in the audit log.
"""

from dataclasses import dataclass

from shop import audit, db, mail
from shop.actor import Actor
from shop.checks.fields import Field, Length, Pattern, check
from shop.clock import now_iso
from shop.errors import Conflict, NotFound
from shop.orders import lifecycle

NOTE = {
    "body": Field(
        "string",
        required=True,
        checks=(Length(min=1, max=2000), Pattern(r"[\s\S]*\S", "must not be blank.")),
    )
}


@dataclass(frozen=True)
class NoteRequest:
    """An internal note as the console's form gives it."""

    body: str | None = None

    def checked(self) -> dict:
        """The note as a body; ``Invalid`` naming the field, in the API's words."""
        return check(NOTE, {} if self.body is None else {"body": self.body})


def _number(order_id: str) -> str:
    number = db.value("SELECT number FROM orders WHERE id = :id", {"id": order_id})
    if number is None:
        raise NotFound("Order not found.")
    return number


def add_note(order_id: str, request: NoteRequest, actor: Actor) -> dict:
    """Keep an internal note on ``order_id`` by ``actor``; answer it."""
    body = request.checked()["body"].strip()
    with db.transaction():
        number = _number(order_id)
        note = {
            "id": db.new_id(),
            "order_id": order_id,
            "body": body,
            "created_at": now_iso(),
            "by_id": actor.id,
            "by_label": actor.label,
        }
        db.execute(
            "INSERT INTO order_notes (id, order_id, body, created_at, by_id, by_label)"
            " VALUES (:id, :order_id, :body, :created_at, :by_id, :by_label)",
            note,
        )
        details = {"order_id": order_id, "number": number, "note_id": note["id"]}
        audit.record("order.note_added", details, actor=actor)
    return note


def notes(order_id: str) -> list[dict]:
    """The order's internal notes, oldest first."""
    return db.query(
        "SELECT id, body, created_at, by_id, by_label FROM order_notes"
        " WHERE order_id = :id ORDER BY created_at, id",
        {"id": order_id},
    )


def resend_mail(order_id: str, actor: Actor) -> None:
    """Queue the customer's e-mail of the order's current status again (the confirmation
    while it is pending); a Conflict for an erased customer, who has no address."""
    with db.transaction():
        order = lifecycle.load(order_id)
        if order is None:
            raise NotFound("Order not found.")
        queued = mail.queue_order_mail(order, placed=order["status"] == "pending")
        if queued is None:
            raise Conflict("This order's customer was erased: there is no address to mail.")
        details = {"order_id": order_id, "number": order["number"], "status": order["status"]}
        audit.record("order.mail_resent", details, actor=actor)
