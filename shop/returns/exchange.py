"""Exchanging a received return (issue 41): the replacement is a draft order
(``drafts.store.create``, priced by the quote's function) with the return's value as its
credit.

The value is never both credited and refunded: the exchange records the arrived units'
share on the old order as a refund **to credit** (``RefundRequest.to_credit``: no provider,
no money moves, its credit note issued as any refund's), which marks those units refunded,
so a later refund of them is refused. That refund's amount is the draft's credit. The
check, the refund (keyed ``exchange-<return id>``), the draft and its link on the return
(``exchange_draft_id``) are one transaction under the order's lock: concurrent exchanges
make one refund and one draft, and a replay answers that draft. docs/returns.md,
"Exchanges".
"""

import json

from shop import audit, db
from shop.auth.caller import require
from shop.drafts import store as drafts
from shop.errors import Conflict, Invalid, NotFound
from shop.orders import lifecycle as orders
from shop.payments import refunds
from shop.payments.refund_request import RefundRequest
from shop.returns import store
from shop.site import settings

CREATE_DRAFT = "draft_orders.create"
MOST_LINES = drafts.MAX_LINES
NOTE_LENGTH = 2000


def exchange(
    return_id: str, items: list[dict], shipping_method_id: str | None, note: str | None, caller
) -> tuple[dict, bool]:
    """Exchange a received, unrefunded return for a draft order of ``items`` (``variant_id``
    or ``product_id``, ``quantity``) for the order's customer, to its shipping address;
    answer ``(draft, created)``: the draft made before (False) on a replay. 409 when the
    return is not received, was refunded, or nothing of it is left to credit; a draft the
    quote refuses is a 400 naming its field and nothing is written."""
    require(caller, CREATE_DRAFT, purpose="exchange a return")
    with db.transaction():
        order_id = db.value("SELECT order_id FROM returns WHERE id = :id", {"id": return_id})
        if order_id is None:
            raise NotFound("Return not found.")
        orders.lock(order_id)
        shown = store.load(return_id)
        if shown["exchange_draft_id"]:
            return drafts.get(shown["exchange_draft_id"]), False
        number = shown["order_number"]
        if shown["status"] != "received":
            raise Conflict(
                f"The return of order {number} is {shown['status']}: only a received one can be"
                " exchanged."
            )
        if shown["refund"]:
            raise Conflict(f"The return of order {number} was refunded: its value is spent.")
        order = db.one(
            "SELECT customer_id, guest_email, shipping_address, currency FROM orders"
            " WHERE id = :id",
            {"id": order_id},
        )
        if order["currency"] != settings.current()["currency"]:
            raise Conflict(
                f"Order {number} is in {order['currency']}, the shop now sells in another"
                " currency: a draft cannot carry its credit."
            )
        units = _creditable(shown, order_id)
        if not units:
            raise Conflict(f"The units of this return of order {number} were refunded already.")
        request = RefundRequest(
            lines=units, reason=f"Exchange: return of order {number}", to_credit=True
        )
        try:
            made, _new = refunds.create_refund(order_id, request, caller, f"exchange-{return_id}")
        except Invalid:  # its lines are within what is left: only the order's amount is short
            raise Conflict(
                f"Less is left to refund of order {number} than these units' share (an amount"
                " was refunded): exchange it by hand."
            ) from None
        customer = (
            {"customer_id": order["customer_id"]}
            if order["customer_id"]
            else {"email": order["guest_email"]}
        )
        draft = drafts.create(
            {
                **customer,
                "items": items,
                "shipping_address": json.loads(order["shipping_address"] or "null"),
                "shipping_method_id": shipping_method_id,
                "note": note,
                "credit_cents": made["amount_cents"],
                "credit_note": f"Exchange of the return {return_id} of order {number}",
            },
            caller.actor,
        )
        store.link_exchange(return_id, draft["id"])
        audit.record(
            "return.exchanged",
            {"return_id": return_id, "order_id": order_id, "number": number}
            | {"draft_order_id": draft["id"], "refund_id": made["id"]},
            actor=caller.actor,
        )
    return draft, True


def _creditable(shown: dict, order_id: str) -> list[dict]:
    """The units that arrived, each line within what is left to refund of it (a refund of
    the order made meanwhile took its share): the exchange's refund lines."""
    preview = refunds.preview(order_id)["lines"]
    left = {line["line"]: line["refundable_quantity"] for line in preview}
    units = []
    for line in shown["lines"]:
        count = min(line["received"] or 0, left.get(line["line"], 0))
        if count:
            units.append({"line": line["line"], "quantity": count})
    return units
