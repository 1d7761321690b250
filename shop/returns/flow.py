"""A return's moves: requested (by the order's customer, a guest with its token or staff),
approved (the instructions mailed) or rejected (with a reason), then received, with its
restock and refund made once through the refund path (``payments/refunds.create_refund``).

Each move names the state it expects (``store.move``) and runs under the order's lock
(``orders.lock``), as refunds and shipments do. A receive moves the return to ``received``
and records what arrived in one transaction; then, once the move committed, its restock and
refund are one refund request keyed by the return (``return-<id>``), so a retry or a
concurrent receive replays that refund and never makes a second one. The refund's share of
each line is ``pricing.refund_share``, the refund preview's own arithmetic.
"""

from flask import current_app

from shop import audit, db, mail, money, webhooks
from shop.actor import Actor
from shop.auth.caller import require
from shop.clock import now, now_iso
from shop.errors import Conflict, Invalid, NotFound
from shop.orders import lifecycle as orders
from shop.payments import refunds
from shop.payments.refund_request import RefundRequest
from shop.pricing import rules as pricing
from shop.returns import rules, store

READ = "returns.read"
UPDATE = "returns.update"
INSTRUCTIONS_LENGTH = rules.NOTE_LENGTH


def _order(order_id: str) -> dict:
    order = db.one("SELECT id, number, status FROM orders WHERE id = :id", {"id": order_id})
    if order is None:
        raise NotFound("Order not found.")
    return order


def _text(name: str, value, most: int, required: bool = False) -> str | None:
    if value is not None and not isinstance(value, str):
        raise Invalid(f"{name}: give text.")
    value = (value or "").strip()
    if required and not value:
        raise Invalid(f"{name}: required; say why.")
    if len(value) > most:
        raise Invalid(f"{name}: at most {most} characters.")
    return value or None


def request_return(order_id: str, lines: list[dict], note: str | None, actor: Actor) -> dict:
    """Ask to return units of ``order_id`` (the caller may: the edge checked it); answer the
    ``requested`` return. 409 before anything shipped or after the window; 400 naming the
    field for more units than shipped and not yet returned or asked for."""
    note = _text("note", note, rules.NOTE_LENGTH)
    with db.transaction():
        orders.lock(order_id)
        order = _order(order_id)
        started = store.window_start(order_id)
        days = current_app.config["RETURN_WINDOW_DAYS"]
        rules.check_open(started, days, now(), order["number"])
        if order["status"] not in rules.ORDER_STATUSES:
            raise Conflict(f"Order {order['number']} is {order['status']}: it cannot be returned.")
        shipped = store.shipped(order_id)
        left = rules.returnable(shipped, store.taken(order_id))
        asked = rules.asked_lines(lines, left, set(shipped))
        return_id, moment = db.new_id(), now_iso()
        store.insert(
            {"id": return_id, "order_id": order_id, "note": note, "now": moment}
            | {"by_kind": actor.kind, "by_id": actor.id, "by_label": actor.label},
            asked,
        )
        return _announce("requested", return_id, order_id, actor)


def _expect(return_id: str, expected: str) -> dict:
    """The return (404 if none), 409 unless it is ``expected``; under its order's lock."""
    found = db.value("SELECT order_id FROM returns WHERE id = :id", {"id": return_id})
    if found is None:
        raise NotFound("Return not found.")
    orders.lock(found)
    shown = store.load(return_id)
    if shown["status"] != expected:
        raise Conflict(
            f"The return of order {shown['order_number']} is {shown['status']}: only a"
            f" {expected} one can be {_DONE[expected]}."
        )
    return shown


_DONE = {"requested": "approved or rejected", "approved": "received"}


def approve(return_id: str, instructions: str | None, actor: Actor) -> dict:
    """Approve a requested return; its instructions are mailed to the customer."""
    instructions = _text("instructions", instructions, INSTRUCTIONS_LENGTH)
    return _decide(return_id, "approved", actor, instructions=instructions)


def reject(return_id: str, reason: str | None, actor: Actor) -> dict:
    """Reject a requested return with a reason (required), mailed to the customer; its
    units may be asked for again."""
    reason = _text("reason", reason, rules.REASON_LENGTH, required=True)
    return _decide(return_id, "rejected", actor, reject_reason=reason)


def _decide(return_id: str, status: str, actor: Actor, **fields) -> dict:
    """Move a requested return to ``status`` (approved or rejected) with ``fields``."""
    with db.transaction():
        shown = _expect(return_id, "requested")
        moment = now_iso()
        if not store.move(return_id, "requested", status, moment, decided_at=moment, **fields):
            raise Conflict("The return was moved meanwhile; reload it.")
        return _announce(status, return_id, shown["order_id"], actor)


def receive(return_id: str, lines: list[dict] | None, restock: bool, refund: bool, caller) -> dict:
    """Record that an approved return arrived (``lines``: the units that did; None: every
    unit requested), put them back on the shelf (``restock``) and refund their share
    (``refund``, which needs ``orders.refund`` too), each once.

    A receive of a return already received whose restock or refund is not recorded yet (the
    payment provider was unreachable, or a concurrent receive is making it) makes that same
    refund (by its key) and answers the return; otherwise it is a 409.
    """
    if not isinstance(restock, bool) or not isinstance(refund, bool):
        raise Invalid("restock, refund: give true or false.")
    if refund:
        require(caller, "orders.refund", purpose="refund a return")
    with db.transaction():
        try:
            shown = _expect(return_id, "approved")
        except Conflict:
            shown = store.load(return_id)
            if not _unsettled(shown):
                raise
        else:
            units = rules.arrived(shown["lines"], lines)
            if refund:
                _some_money_back(shown, units)
            moment = now_iso()
            if not store.move(
                return_id,
                "approved",
                "received",
                moment,
                restock=int(restock),
                refund=int(refund),
                received_at=moment,
            ):
                raise Conflict("The return was moved meanwhile; reload it.")
            store.set_received(return_id, units)
            _announce("received", return_id, shown["order_id"], caller.actor)
    return _settle(store.load(return_id), caller)


def _some_money_back(shown: dict, units: dict[int, int]) -> None:
    """400 before anything is written when a refund of ``units`` (units per line) would
    give no money back
    because a credit paid for them (an order made by an exchange): their value goes back
    as credit, by receiving without refund and exchanging (docs/payments.md)."""
    preview = refunds.preview(shown["order_id"])
    if not preview["credit_cents"]:
        return
    money = {line["line"]: line["refundable_cents"] for line in preview["lines"]}
    if not any(money.get(line) for line, count in units.items() if count):
        raise Invalid(
            f"refund: order {shown['order_number']} was paid with credit, not money: there is"
            " no money to give back for these units. Receive them without refund and exchange"
            " the return to give their value back as credit."
        )


def _arrived(shown: dict) -> list[dict]:
    return [
        {"line": line["line"], "quantity": line["received"]}
        for line in shown["lines"]
        if line["received"]
    ]


def _unsettled(shown: dict) -> bool:
    """A received return whose restock or refund is asked and not recorded yet."""
    return (
        shown["status"] == "received"
        and shown["refund_id"] is None
        and (shown["restock"] or shown["refund"])
        and bool(_arrived(shown))
    )


def _settle(shown: dict, caller) -> dict:
    """Make a received return's restock and refund: one refund request, keyed by the return."""
    if not _unsettled(shown):
        return shown
    if shown["refund"]:
        require(caller, "orders.refund", purpose="refund a return")
    units = _arrived(shown)
    request = RefundRequest(
        lines=units if shown["refund"] else None,
        restock=units if shown["restock"] else None,
        reason=f"Return of order {shown['order_number']}",
    )
    made, _created = refunds.create_refund(
        shown["order_id"], request, caller, f"return-{shown['id']}"
    )
    store.link_refund(shown["id"], made["id"])
    return store.load(shown["id"])


def refundable_value(return_id: str) -> int:
    """What a received return is worth back, in the order's minor units: the refund
    preview's share of the units that arrived (``pricing.refund_share``, within what is left
    to refund), or 0 when it was refunded (or has not arrived). The credit an exchange
    gives."""
    shown = store.load(return_id)
    if shown is None:
        raise NotFound("Return not found.")
    if shown["status"] != "received" or (shown["refund_id"] and shown["refund"]):
        return 0
    preview = refunds.preview(shown["order_id"])
    by_line = {line["line"]: line for line in preview["lines"]}
    value = 0
    for item in _arrived(shown):
        line = by_line[item["line"]]
        count = min(item["quantity"], line["refundable_quantity"])
        value += pricing.refund_share(
            line["total_cents"], line["quantity"], line["refunded_quantity"], count
        )
    return min(value, refunds.value_left(shown["order_id"]))  # whole: credit goes back as credit


# -- events and mails ---------------------------------------------------------------------

_SUBJECTS = {
    "requested": "we have your return request",
    "approved": "your return is approved",
    "rejected": "your return request was declined",
    "received": "we have received your return",
}


def _announce(step: str, return_id: str, order_id: str, actor: Actor) -> dict:
    """The audit entry, the ``return.<step>`` event and the customer's mail of a move (in
    its transaction); answer the return."""
    shown = store.load(return_id)
    audit.record(
        f"return.{step}",
        {"return_id": return_id, "order_id": order_id, "number": shown["order_number"]},
        actor=actor,
    )
    webhooks.emit(f"return.{step}", return_id, lambda _id: shown)
    order = orders.load(order_id)
    recipient = order["customer"]["email"]
    if recipient:
        currency = order["currency"]
        mail.queue_rendered(
            recipient,
            f"Order {order['number']}: {_SUBJECTS[step]}",
            "return",
            step=step,
            name=order["customer"].get("name"),
            number=order["number"],
            ret=shown,
            money=lambda cents: money.display(cents, currency),
        )
    return shown
