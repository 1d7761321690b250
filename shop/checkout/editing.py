"""Editing an order before it ships (issue 41): ``edit_order`` applies an ``EditRequest``
(``orders/edits.py``) in one transaction under the order's lock.

The new basket is priced by the quote's own function (``pricing.baskets.price_basket``
with the order's address, shipping method and discount code), so the edited order's totals
are what ``POST /payments/quote`` answers for it. The stock moves both ways in the same
transaction (products locked first, in id order; a take is the checkout's guarded
decrement, so an edit never oversells, and a refused edit writes nothing). On a paid order
a lower total refunds the difference through the refund path (``payments/refunds.py``), a
higher one is left due (``balance_due_cents``; a card order's with a pay link,
``orders/balance_link.py``). The customer is mailed the edit. An invoiced order's invoice
is credited and a new one issued (``invoices/credit_notes.py``). Rules: docs/orders.md,
"Editing an order".
"""

import json

from shop import audit, db, idempotency, webhooks
from shop.catalogue import stock, variants
from shop.checkout.placing import PRICING_KEYS, _take_stock
from shop.clock import now_iso
from shop.discounts import codes as discounts
from shop.errors import Conflict, Invalid, NotFound
from shop.invoices import credit_notes
from shop.orders import balance_link, edits, payment_sides
from shop.orders import lifecycle as orders
from shop.payments import refunds
from shop.pricing import baskets

# Statuses an order may be edited in: before its first shipment, not cancelled or refunded.
EDITABLE = ("pending", "paid")


def edit_order(order_id: str, request: edits.EditRequest, caller, key: str | None):
    """Apply ``request`` to the order as ``caller`` (who holds ``orders.edit``); answer
    ``(the edit with its order, created)``. A replay of ``key`` with the same body answers
    the first edit (False) and retries its pending refund; with another body, a 409."""
    request = request.checked()
    body = request.body()
    actor = caller.actor
    with db.transaction():
        orders.lock(order_id)
        found = edits.by_key(order_id, key) if key is not None else None
        if found is not None and not idempotency.same_body(found["request_hash"], body):
            raise Conflict(
                "This Idempotency-Key was already used with another body; use a new key."
            )
        edit_id = found["id"] if found else _edit(order_id, request, actor, key, body)
    edit = edits.load(edit_id)
    if edit["refund"] is not None:  # a card refund is sent after the commit; a replay retries
        refund = refunds.finish(order_id, edit["refund"]["id"], actor)
        edit["refund"] = {key: refund[key] for key in edits.REFUND}
    return {**edit, "order": orders.load(order_id)}, found is None


def preview(order_id: str, request: edits.EditRequest) -> dict:
    """What ``request`` would make of the order's totals (the console's preview), writing
    nothing: the edit's own checks and pricing, rolled back."""
    request = request.checked()
    try:
        with db.transaction():
            orders.lock(order_id)
            _order, _row, priced, refund, balance = _apply(order_id, request, write=False)
            raise _Preview(priced, refund, balance)
    except _Preview as shown:
        return edits.totals(shown.priced) | {
            "refund_cents": shown.refund,
            "balance_due_cents": shown.balance,
            "changes": shown.priced["changes"],
        }


def variant_by_sku(sku: str) -> str | None:
    """The variant whose SKU is ``sku`` (SKUs are unique), or None: the console adds by it."""
    return db.value("SELECT id FROM product_variants WHERE sku = :sku", {"sku": sku})


def exists(order_id: str) -> None:
    """404 unless the order exists (staff read any order)."""
    if not db.value("SELECT 1 FROM orders WHERE id = :id", {"id": order_id}):
        raise NotFound("Order not found.")


def record_balance(order_id: str, note: str | None, actor) -> dict:
    """The balance an edit left due was received (bank transfer or cash, seen by a person):
    it is cleared and added to the payment, with a history entry and an audit entry; answer
    the order. 409 when nothing is due, or for a card order (its balance is paid by card,
    through the pay link: ``orders/balance_link.py``)."""
    with db.transaction():
        orders.lock(order_id)
        row = db.one(
            "SELECT o.number, o.status, o.balance_due_cents, p.provider FROM orders o"
            " LEFT JOIN payments p ON p.order_id = o.id WHERE o.id = :id",
            {"id": order_id},
        )
        if row is None:
            raise NotFound("Order not found.")
        due = row["balance_due_cents"]
        if due <= 0:
            raise Conflict(
                f"Order {row['number']} has no balance due.",
                withheld=(orders.READ, "The order has no balance due."),
            )
        if not payment_sides.side(row["provider"], every=True).paid_by_hand:
            raise Conflict(
                f"Order {row['number']} is paid through {row['provider']}: its balance is"
                " paid by card with the pay link (POST /orders/{id}/balance/link mails it),"
                " not recorded by hand.",
                withheld=(orders.READ, "The order's balance cannot be recorded by hand."),
            )
        moment = now_iso()
        db.execute(
            "UPDATE orders SET balance_due_cents = 0, updated_at = :now"
            " WHERE id = :id AND balance_due_cents = :due",
            {"now": moment, "id": order_id, "due": due},
        )
        db.execute(
            "UPDATE payments SET amount_cents = amount_cents + :due, updated_at = :now"
            " WHERE order_id = :id",
            {"due": due, "now": moment, "id": order_id},
        )
        text = f"Balance of {due} received" + (f" ({note})" if note else "")
        orders.record_history(order_id, row["status"], text, moment, actor)
        audit.record(
            "order.balance_received",
            {"order_id": order_id, "number": row["number"], "amount_cents": due},
            actor=actor,
        )
        return orders.load(order_id)


class _Preview(Exception):
    """Rolls the preview's transaction back, carrying what it priced."""

    def __init__(self, priced, refund, balance):
        super().__init__("preview")
        self.priced, self.refund, self.balance = priced, refund, balance


_ORDER = (
    "SELECT o.id, o.number, o.status, o.payment_status, o.fulfillment_status,"
    " o.balance_due_cents, o.credit_cents, p.provider,"
    " (SELECT COUNT(*) FROM refunds r WHERE r.order_id = o.id AND r.edit_id IS NULL"
    "  AND r.status <> 'failed') AS refunds"
    " FROM orders o LEFT JOIN payments p ON p.order_id = o.id WHERE o.id = :id"
)


def _check(row: dict) -> None:
    """409 unless the order may be edited now; its status named only to a reader."""
    where = f"Order {row['number']} is {row['status']}"

    def refuse(why: str, generic: str) -> None:
        raise Conflict(f"{where}: {why}", withheld=(orders.READ, generic))

    if row["fulfillment_status"] != "unfulfilled":
        refuse(
            "it has shipped (in part): edits are before the first shipment.",
            "The order can no longer be edited.",
        )
    if row["status"] in ("cancelled", "refunded"):
        refuse("a final status: it cannot be edited.", "The order can no longer be edited.")
    if (
        row["status"] not in EDITABLE
        or row["payment_status"] not in ("pending", "paid")
        or row["refunds"]
    ):
        refuse(
            "it has refunds or a payment under review: it can no longer be edited.",
            "The order can no longer be edited.",
        )
    if (
        row["status"] == "pending"
        and not payment_sides.side(row["provider"], every=True).paid_by_hand
    ):
        refuse(
            f"its {row['provider']} payment was started for its total: edit it once it is paid,"
            " or cancel it.",
            "The order cannot be edited while its payment is under way.",
        )


def _edit(order_id: str, request: edits.EditRequest, actor, key, body) -> str:
    """The edit's writes, in the caller's transaction; answer the edit's id."""
    order, row, priced, refund, balance = _apply(order_id, request, write=True)
    moment, edit_id = now_iso(), db.new_id()
    removed = request.discount_code is None
    if removed:  # its use back, then the order forgets it
        discounts.give_back_use(order_id)
    moved = db.execute(
        "UPDATE orders SET subtotal_cents = :subtotal, discount_cents = :discount,"
        " shipping_cents = :shipping, tax_cents = :tax, total_cents = :total,"
        " pricing = :pricing, balance_due_cents = :balance, updated_at = :now,"
        " discount_id = CASE WHEN :removed = 1 THEN NULL ELSE discount_id END"
        " WHERE id = :id AND status = :expected",
        {
            "subtotal": priced["subtotal_cents"],
            "discount": priced["discount_cents"],
            "shipping": priced["shipping_cents"],
            "tax": priced["tax_cents"],
            "total": priced["total_cents"],
            "pricing": json.dumps({k: priced[k] for k in PRICING_KEYS}, sort_keys=True),
            "balance": balance,
            "now": moment,
            "removed": 1 if removed else 0,
            "id": order_id,
            "expected": row["status"],
        },
    )
    if not moved:  # under the order's lock this cannot happen; say so if it ever does
        raise Conflict("The order changed meanwhile; reload it and try again.")
    if row["status"] == "pending":  # an unpaid order's payment asks for the new total
        db.execute(  # less the credit that paid for part of it
            "UPDATE payments SET amount_cents = :total, updated_at = :now WHERE order_id = :id",
            {"total": priced["total_cents"] - row["credit_cents"], "now": moment, "id": order_id},
        )
    changes = priced["changes"]
    text = _describe(changes, order["discount_code"] if removed else None)
    note = f"Edited: {text}" + (f" ({request.note})" if request.note else "")
    refund_id = None
    if refund:
        reason = f"Order {order['number']} edited: {text}"
        refund_id = refunds.take_for_edit(order_id, edit_id, refund, reason, actor)
    orders.record_history(order_id, row["status"], note, moment, actor)
    credit_notes.issue_for_edit(order_id, edit_id, note, orders.load)
    after = edits.totals(priced)
    edits.record(
        {
            "id": edit_id,
            "order_id": order_id,
            "changes": changes,
            "note": request.note,
            "before_totals": edits.totals(order),
            "after_totals": after,
            "refund_id": refund_id,
            "balance_due_cents": balance,
            "created_at": moment,
            "by_kind": actor.kind,
            "by_id": actor.id,
            "by_label": actor.label,
            "idempotency_key": key,
            "request_hash": idempotency.body_hash(body) if key is not None else None,
        }
    )
    # The customer hears of it: the new totals, the refund, or the balance and its pay link.
    balance_link.mail_edit(order_id, refund, balance)
    details = {"order_id": order_id, "number": order["number"], "edit_id": edit_id}
    details |= {"from_cents": order["total_cents"], "to_cents": priced["total_cents"]}
    details |= {"refund_cents": refund, "balance_due_cents": balance}
    audit.record("order.edited", details, actor=actor)
    webhooks.emit(
        "order.edited", order_id, lambda oid: {**orders.load(oid), "edit": edits.load(edit_id)}
    )
    return edit_id


def _apply(order_id: str, request: edits.EditRequest, write: bool):
    """Check, move the stock, price the new basket and (``write``) rewrite the lines; answer
    ``(order before, its row, the priced basket with its changes, refund, balance due)``."""
    row = db.one(_ORDER, {"id": order_id})
    if row is None:
        raise NotFound("Order not found.")
    _check(row)
    order = orders.load(order_id)
    if order["shipping_address"] is None:
        raise Conflict("The order's address was erased: it cannot be repriced.")
    before = [{k: item[k] for k in ("line", "variant_id", "quantity")} for item in order["items"]]
    after, changes = edits.new_lines(before, request)
    code = order["discount_code"]
    if request.discount_code is None and code is None:
        raise Invalid("discount_code: the order has no code to remove.")
    discount = discounts.terms(code) if code and request.discount_code is not None else None
    _for_sale(after, {change["line"] for change in changes if change["kind"] == "add"})
    _move_stock(edits.stock_moves(before, after))
    lines = baskets.product_lines(
        [{"variant_id": line["variant_id"], "quantity": line["quantity"]} for line in after]
    )
    # A kept line keeps the unit price it was sold at; an added one takes today's.
    sold = {item["line"]: item["unit_price_cents"] for item in order["items"]}
    for line, priced_line in zip(after, lines, strict=True):
        priced_line["unit_price_cents"] = sold.get(line["line"], priced_line["unit_price_cents"])
    method = (order["shipping_method"] or {}).get("id")
    priced = baskets.price_basket(
        lines, order["shipping_address"], method, discount, require_method=False
    )
    priced["changes"] = changes
    if priced["total_cents"] < row["credit_cents"]:  # the credit is never paid out as money
        raise Conflict(
            f"Order {row['number']}: the edit brings its total under the credit that paid"
            f" for it ({row['credit_cents']} minor units, an exchange's): the credit cannot be"
            " given back as money. Keep the total at or above it, or cancel the order.",
            withheld=(orders.READ, "The edit brings the total under the order's credit."),
        )
    paid = row["payment_status"] == "paid"
    refund, balance = edits.settle(
        paid, order["total_cents"], row["balance_due_cents"], priced["total_cents"]
    )
    if write:
        _rewrite_lines(order_id, before, after, priced["lines"])
    return order, row, priced, refund, balance


def _for_sale(after: list[dict], added: set[int]) -> None:
    """400 naming the field when a line of the new basket is not for sale (an added
    variant unknown, or a kept line's product taken off sale since: remove it)."""
    marks, params = db.in_list("v", sorted({line["variant_id"] for line in after}))
    selling = {
        row["id"]
        for row in db.query(
            "SELECT v.id FROM product_variants v JOIN products p ON p.id = v.product_id"
            f" WHERE v.id IN {marks} AND v.active = 1 AND p.active = 1",
            params,
        )
    }
    for line in after:
        if line["variant_id"] in selling:
            continue
        if line["line"] in added:
            raise Invalid(f"add: variant {line['variant_id']} does not exist or is not for sale.")
        raise Invalid(
            f"remove: line {line['line']} (variant {line['variant_id']}) is no longer for sale;"
            " remove it in the edit."
        )


def _move_stock(moves: dict[str, int]) -> None:
    """Take (positive) and put back (negative) units per variant: the products' rows locked
    first, in id order, then the checkout's guarded decrements (409 naming a variant with
    too little stock) and the restocks' increments."""
    if not moves:
        return
    marks, params = db.in_list("v", sorted(moves))
    product_of = {
        row["id"]: row["product_id"]
        for row in db.query(
            f"SELECT id, product_id FROM product_variants WHERE id IN {marks}", params
        )
    }
    stock.lock_products(product_of.values())
    takes = [
        {"variant_id": v, "product_id": product_of[v], "quantity": units}
        for v, units in sorted(moves.items())
        if units > 0
    ]
    if takes:
        _take_stock(takes)
    backs = [
        {"variant_id": v, "product_id": product_of[v], "quantity": -units}
        for v, units in sorted(moves.items())
        if units < 0 and v in product_of  # a variant deleted since has no shelf
    ]
    for product_id in stock.put_back(backs):
        variants.refresh(product_id)


def _rewrite_lines(
    order_id: str, before: list[dict], after: list[dict], priced: list[dict]
) -> None:
    """The order's items as edited: removed lines deleted, kept ones repriced, added ones
    inserted (numbers kept: a line is named by its number)."""
    kept = {line["line"] for line in after}
    for line in before:
        if line["line"] not in kept:
            db.execute(
                "DELETE FROM order_items WHERE order_id = :id AND line = :line",
                {"id": order_id, "line": line["line"]},
            )
    old = {line["line"] for line in before}
    for line, price in zip(after, priced, strict=True):
        values = {
            **{k: price[k] for k in ("product_id", "variant_id", "name", "sku", "quantity")},
            **{k: price[k] for k in ("unit_price_cents", "line_total_cents", "discount_cents")},
            **{k: price[k] for k in ("tax_cents", "tax_rate", "total_cents")},
            "options_text": json.dumps(price["options"]),
            "order_id": order_id,
            "line": line["line"],
        }
        if line["line"] in old:
            db.execute(
                "UPDATE order_items SET name = :name, sku = :sku, options = :options_text,"
                " unit_price_cents = :unit_price_cents, quantity = :quantity,"
                " line_total_cents = :line_total_cents, discount_cents = :discount_cents,"
                " tax_cents = :tax_cents, tax_rate = :tax_rate, total_cents = :total_cents"
                " WHERE order_id = :order_id AND line = :line",
                values,
            )
        else:
            db.execute(
                "INSERT INTO order_items (order_id, line, product_id, variant_id, name, sku,"
                " options, unit_price_cents, quantity, line_total_cents, discount_cents,"
                " tax_cents, tax_rate, total_cents) VALUES (:order_id, :line, :product_id,"
                " :variant_id, :name, :sku, :options_text, :unit_price_cents, :quantity,"
                " :line_total_cents, :discount_cents, :tax_cents, :tax_rate, :total_cents)",
                values,
            )


def _describe(changes: list[dict], removed_code: str | None) -> str:
    """The edit in words, for the history, the refund's reason and the documents."""
    words = []
    for change in changes:
        line = f"line {change['line']}"
        if change["kind"] == "add":
            words.append(f"{line} added ({change['to']})")
        elif change["kind"] == "remove":
            words.append(f"{line} removed")
        else:
            words.append(f"{line} {change['from']} → {change['to']}")
    if removed_code:
        words.append(f"code {removed_code} removed")
    return ", ".join(words)
