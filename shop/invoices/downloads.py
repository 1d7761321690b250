"""Downloading an order's invoices and credit notes, and who may: the one check
(``check_may_read``) for the API and any other edge that serves them. An order has one
current invoice (``GET /orders/{id}/invoice``); an edited one also has superseded invoices,
each credited in full by its edit's credit note: all are listed and downloadable by id or
number.

Staff (administrators, API keys) with ``orders.read``; the customer whose order it is; a
guest holding the order's token (``_guest_token_matches``). Anybody else is told the order
does not exist.
"""

from shop import db
from shop.auth.caller import Caller, require
from shop.errors import Conflict, NotFound, Unauthenticated
from shop.invoices import credit_notes, issuing, kept

READ = "orders.read"  # orders.lifecycle.READ: the right to read any order


def _guest_token_matches(order: dict, token: str | None) -> bool:
    """Whether ``token`` is ``order``'s guest token (``orders.token_hash``, constant time:
    the check ``orders/guests.holds`` makes too)."""
    return db.hash_matches(order.get("token_hash"), token)


def check_may_read(caller: Caller | None, order: dict | None, token: str | None = None) -> None:
    """Refuse unless ``caller`` (None: nobody signed in) may read ``order``'s documents
    (``order``: a row with ``id`` and ``customer_id``; None: no such order): 404 for no such
    order or somebody else's, 401 for nobody with no token, 403 for staff without
    ``orders.read``."""
    if order is not None and token is not None and _guest_token_matches(order, token):
        return
    if caller is None:
        if token is None:
            raise Unauthenticated(
                "Authentication required: sign in, send an API key or the order's token."
            )
        raise NotFound("Order not found.")
    if caller.kind == "customer":
        if order is None or order["customer_id"] != caller.id:
            raise NotFound("Order not found.")
        return
    require(caller, READ)
    if order is None:
        raise NotFound("Order not found.")


def _order(order_id: str) -> dict | None:
    return db.one("SELECT id, customer_id, token_hash FROM orders WHERE id = :id", {"id": order_id})


def invoice_pdf(order_id: str, caller: Caller | None, token: str | None = None) -> tuple:
    """``(number, PDF bytes)`` of the order's invoice, for a caller who may read it; 409
    when the order has no invoice (yet)."""
    check_may_read(caller, _order(order_id), token)
    invoice = issuing.of_order(order_id, pdf=True)
    if invoice is None:
        raise Conflict(
            "This order has no invoice yet: it is invoiced when it becomes paid (or at its"
            " first shipment, by the shop's settings)."
        )
    return invoice["number"], kept.pdf_of(kept.INVOICES, invoice)


def credit_note_pdf(
    order_id: str, refund_id: str, caller: Caller | None, token: str | None = None
) -> tuple:
    """``(number, PDF bytes)`` of a refund's credit note; 404 for no such refund of the
    order, 409 when the refund has none (not succeeded yet, failed, or no money back)."""
    check_may_read(caller, _order(order_id), token)
    if not db.value(
        "SELECT 1 FROM refunds WHERE id = :id AND order_id = :order_id",
        {"id": refund_id, "order_id": order_id},
    ):
        raise NotFound("Refund not found.")
    note = credit_notes.of_refund(order_id, refund_id, pdf=True)
    if note is None:
        raise Conflict(
            "This refund has no credit note: one is issued when a refund that gives money back"
            " succeeds."
        )
    return note["number"], kept.pdf_of(kept.CREDIT_NOTES, note)


def _readable(order_id: str, caller: Caller | None, token: str | None) -> None:
    """Refuse unless ``caller`` (or ``token``) may read the order's documents; 404 for no
    such order."""
    check_may_read(caller, _order(order_id), token)


def _one(found, table: str, what: str) -> tuple:
    if found is None:
        raise NotFound(f"{what} not found.")
    return found["number"], kept.pdf_of(table, found)


# An id (24 characters) or a number (a prefix of up to 20, the year, six digits).
_KEY_LENGTH = 64


def _key(key: str) -> str | None:
    return key if len(key) <= _KEY_LENGTH else None


def credit_notes_of(order_id: str, caller: Caller | None, token: str | None = None) -> list:
    """The order's credit notes, a refund's or an edit's, oldest first."""
    _readable(order_id, caller, token)
    return credit_notes.of_order(order_id)


def credit_note_by(order_id: str, key: str, caller: Caller | None, token=None) -> tuple:
    """``(number, PDF bytes)`` of the order's credit note whose id or number is ``key``;
    404 for none of this order."""
    _readable(order_id, caller, token)
    found = credit_notes.find(order_id, key, pdf=True) if _key(key) else None
    return _one(found, kept.CREDIT_NOTES, "Credit note")


def invoices_of(order_id: str, caller: Caller | None, token: str | None = None) -> list:
    """The order's invoices, superseded ones included, oldest first."""
    _readable(order_id, caller, token)
    return issuing.all_of_order(order_id)


def invoice_by(order_id: str, key: str, caller: Caller | None, token=None) -> tuple:
    """``(number, PDF bytes)`` of the order's invoice, current or superseded, whose id or
    number is ``key``; 404 for none of this order."""
    _readable(order_id, caller, token)
    found = issuing.find(order_id, key, pdf=True) if _key(key) else None
    return _one(found, kept.INVOICES, "Invoice")
