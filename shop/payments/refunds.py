"""Refunds: money back (an amount, or lines priced by ``pricing.refund_share``, and the
shipping) and stock back (``restock``), independently of each other, under the order's lock.

One command (``RefundRequest``, checked here) serves the API and the console. What can be
refunded is what was paid minus ``orders.refunded_cents``, bumped by one guarded ``UPDATE``.
A card order is refunded through its provider (``Provider.refund``) after the refund row is
written (``pending``, its amount reserved), outside the transaction, keyed by the refund's
id; a refund made at the provider is recorded once from its event (``record_external``).
The order reacts to a refund's money back (``payment_reports.Refunded``). Rules and
decisions: docs/payments.md and docs/orders.md.
"""

import contextlib
import json

from shop import audit, db, idempotency, mail, money, webhooks
from shop.actor import Actor
from shop.clock import now_iso
from shop.errors import Conflict, Invalid, NotFound, ProviderRefused
from shop.invoices import credit_notes
from shop.orders import lifecycle as orders
from shop.orders import payment_reports, restocks
from shop.payments import providers, refund_parts
from shop.payments.providers import RefundRefused
from shop.payments.refund_request import RefundRequest
from shop.pricing import rules as pricing

# The statuses an order can be refunded from (partially_shipped: the shipments branch).
REFUNDABLE = ("paid", "partially_shipped", "shipped", "delivered", "partially_refunded")
FIELDS = (
    "id, order_id, amount_cents, currency, lines, shipping, restock, reason, provider,"
    " reference, status, created_at, by_kind, by_id, by_label, failure_reason, edit_id"
)


def _order(order_id: str) -> dict:
    row = db.one(
        "SELECT o.id, o.number, o.status, o.total_cents, o.currency, o.refunded_cents,"
        " o.shipping_cents, o.pricing, COALESCE(c.email, o.guest_email) AS email, c.name,"
        " o.balance_due_cents, o.edit_refunded_cents, o.credit_cents, p.provider,"
        " p.reference FROM orders o LEFT JOIN customers c ON c.id = o.customer_id"
        " LEFT JOIN payments p ON p.order_id = o.id WHERE o.id = :id",
        {"id": order_id},
    )
    if row is None:
        raise NotFound("Order not found.")
    return row


def _paid(order: dict) -> int:
    """The money received for the order: its total, less a balance an edit left due, plus
    what edits gave back (counted in ``refunded_cents`` too), so what is left to refund is
    the order as it stands now (``checkout/editing.py``)."""
    if order["status"] not in REFUNDABLE + ("refunded",):
        return 0
    return order["total_cents"] - order["balance_due_cents"] + order["edit_refunded_cents"]


def _so_far(order_id: str) -> tuple[dict, int, int, int]:
    """By earlier refunds: units refunded per line, shipping refunded, what went back to
    credit (an exchange's), and the credit share money refunds took back unpaid."""
    refunded, shipping, to_credit, kept = {}, 0, 0, 0
    for row in db.query(
        "SELECT lines, shipping, provider, amount_cents, credit_cents FROM refunds"
        " WHERE order_id = :id AND status <> 'failed'",
        {"id": order_id},
    ):
        for item in json.loads(row["lines"]):
            refunded[item["line"]] = refunded.get(item["line"], 0) + item["quantity"]
        shipping += row["shipping"]
        to_credit += row["amount_cents"] if row["provider"] == "credit" else 0
        kept += row["credit_cents"]
    return refunded, shipping, to_credit, kept


def _preview(order: dict) -> dict:
    """What is left to refund. An order a credit paid in part (``credit_cents``) gives back
    in money only what money paid: the money (its total less the credit) is spread over the
    lines and the shipping by their totals (``pricing.spread``), each unit's money share
    taken by ``refund_share`` as usual; the credit goes back only as credit, whole (an
    exchange's refund ``to_credit``). Keys starting ``_`` are for ``_price`` only."""
    refunded, shipping_done, to_credit, kept = _so_far(order["id"])
    restocked = restocks.back(order["id"])
    paid, credit = _paid(order), order["credit_cents"]
    value_left = paid - order["refunded_cents"] - kept  # not yet taken back, any way
    money_left = paid - credit - (order["refunded_cents"] - to_credit)
    remaining = max(min(value_left, money_left), 0)
    stored = json.loads(order["pricing"]) if order["pricing"] else {}
    shipping = pricing.shipping_charged(
        order["shipping_cents"],
        stored.get("shipping_tax_cents", 0),
        stored.get("prices_include_tax", False),
    )
    items = db.query(
        "SELECT line, name, variant_id, product_id, quantity,"
        " COALESCE(total_cents, line_total_cents) AS total_cents FROM order_items"
        " WHERE order_id = :id ORDER BY line",
        {"id": order["id"]},
    )
    totals = [item["total_cents"] for item in items] + [shipping]
    shares = pricing.spread(order["total_cents"] - credit, totals) if credit else totals
    lines = []
    for item, share in zip(items, shares, strict=False):
        done = refunded.get(item["line"], 0)
        left = item["quantity"] - done
        value = pricing.refund_share(share, item["quantity"], done, left)
        lines.append(
            {
                **item,
                "refunded_quantity": done,
                "refundable_quantity": left,
                "refundable_cents": min(value, remaining),
                "restocked_quantity": restocked.get(item["line"], 0),
                "_money_cents": share,
            }
        )
    shipping_left = max(shipping - shipping_done, 0)
    money_shipping = (
        pricing.refund_share(shares[-1], shipping, shipping_done, shipping_left)
        if credit
        else shipping_left
    )
    return {
        "order_id": order["id"],
        "currency": order["currency"],
        "paid_cents": max(paid - credit, 0),  # an unpaid order: 0, not minus its credit
        "credit_cents": credit,
        "refunded_cents": order["refunded_cents"],
        "refundable_cents": remaining,
        "shipping_refundable_cents": min(money_shipping, remaining),
        "lines": lines,
        "_value_left": max(value_left, 0),
        "_shipping_left": shipping_left,
    }


def preview(order_id: str) -> dict:
    """The most that can be refunded, per line and in total."""
    order = _order(order_id)
    shown = _preview(order)
    for line in shown["lines"]:
        line.pop("variant_id"), line.pop("product_id"), line.pop("_money_cents")
    return {key: value for key, value in shown.items() if not key.startswith("_")}


def value_left(order_id: str) -> int:
    """What is left to take back of the order any way, money or credit: the most a refund
    to credit (an exchange's) may give."""
    return _preview(_order(order_id))["_value_left"]


def list_refunds(order_id: str) -> list[dict]:
    """An order's refunds, oldest first."""
    _order(order_id)
    return [
        _present(row)
        for row in db.query(
            f"SELECT {FIELDS} FROM refunds WHERE order_id = :id ORDER BY created_at, id",
            {"id": order_id},
        )
    ]


def _present(row: dict) -> dict:
    return {
        **{k: row[k] for k in ("id", "order_id", "amount_cents", "currency", "reason")},
        **{k: row[k] for k in ("provider", "reference", "status", "failure_reason")},
        "created_at": row["created_at"],
        "edit_id": row["edit_id"],
        "lines": json.loads(row["lines"]),
        "restock": json.loads(row["restock"]),
        "shipping": bool(row["shipping"]),
        "by": {"kind": row["by_kind"], "id": row["by_id"], "label": row["by_label"]}
        if row["by_kind"]
        else None,
    }


def _load(refund_id: str) -> dict:
    return _present(db.one(f"SELECT {FIELDS} FROM refunds WHERE id = :id", {"id": refund_id}))


def _price(body: dict, shown: dict) -> tuple[int, list, int, int]:
    """The amount a request asks for, its lines, the shipping part, and the credit share
    of those not paid out (an order a credit paid in part; 400 when wrong). A refund to
    credit gives the units' whole value; a money refund their money share."""
    by_line = {line["line"]: line for line in shown["lines"]}
    whole = bool(body.get("to_credit")) or not shown["credit_cents"]
    amount, lines, kept = 0, [], 0
    for item in body.get("lines") or []:
        line = by_line.get(item["line"])
        if line is None:
            raise Invalid(f"lines: the order has no line {item['line']}.")
        if item["quantity"] > line["refundable_quantity"]:
            raise Invalid(
                f"lines: line {item['line']} has {line['refundable_quantity']} units left to"
                f" refund; {item['quantity']} asked.",
                withheld=(
                    orders.READ,
                    f"lines: line {item['line']} has fewer units left to refund.",
                ),
            )
        done, count = line["refunded_quantity"], item["quantity"]
        value = pricing.refund_share(line["total_cents"], line["quantity"], done, count)
        paid = pricing.refund_share(line["_money_cents"], line["quantity"], done, count)
        amount += value if whole else paid
        kept += 0 if whole else value - paid
        lines.append({"line": item["line"], "quantity": item["quantity"]})
    shipping = 0
    if body.get("shipping"):
        if whole:
            shipping = shown["shipping_refundable_cents"]
            if body.get("to_credit"):
                shipping = min(shown["_shipping_left"], shown["_value_left"])
            amount += shipping
        else:  # the whole shipping taken back, its money share paid
            shipping = shown["_shipping_left"]
            amount += shown["shipping_refundable_cents"]
            kept += shipping - shown["shipping_refundable_cents"]
    if "amount_cents" in body:
        if lines or body.get("shipping"):
            raise Invalid("amount_cents: give an amount, or lines and shipping, not both.")
        amount, kept = body["amount_cents"], 0
    return amount, lines, shipping, min(kept, max(shown["_value_left"] - amount, 0))


def _restock_lines(body: dict, order: dict) -> list:
    """The units ``body`` puts back, each within what is still out (400 otherwise)."""
    left = restocks.left(order["id"])
    wanted = []
    for item in body.get("restock") or []:
        if item["line"] not in left:
            raise Invalid(f"restock: the order has no line {item['line']}.")
        if item["quantity"] > left[item["line"]]:
            raise Invalid(
                f"restock: line {item['line']} has {left[item['line']]} units left to put back.",
                withheld=(
                    orders.READ,
                    f"restock: line {item['line']} has fewer units left to put back.",
                ),
            )
        left[item["line"]] -= item["quantity"]
        wanted.append({"line": item["line"], "quantity": item["quantity"]})
    return wanted


def create_refund(order_id: str, request: RefundRequest, caller, idempotency_key: str | None):
    """Refund (and/or restock) as ``request`` asks (checked here); answer ``(refund, created)``.

    A replay of ``idempotency_key`` with the same body answers the first refund (False);
    with another body it is a 409. The provider unreachable: 503, the refund stays
    ``pending`` and the same key retries it. The provider refusing it: 409 (502 for the
    shop's key) naming its reason, the refund ``failed`` and its amount released; its replay
    is the same 409.
    """
    body = request.checked()
    body_hash = idempotency.body_hash(body)
    with db.transaction():
        orders.lock(order_id)
        order = _order(order_id)
        existing = _replayed(order_id, idempotency_key, body)
        if existing is None:
            refund_id = _take(order, body, caller, idempotency_key, body_hash)
        else:
            refund_id = existing["id"]
    row = db.one(
        "SELECT status, failure_reason, provider FROM refunds WHERE id = :id", {"id": refund_id}
    )
    if row["status"] == "pending":
        _through_provider(
            order, refund_id, providers.get(row["provider"], every=True), caller.actor
        )
    elif row["status"] == "failed":
        label = providers.get(row["provider"], every=True).label
        raise Conflict(
            f"This refund failed: {label} refused it ({row['failure_reason']}). Retry with a"
            " new Idempotency-Key.",
        )
    return _load(refund_id), existing is None


def _replayed(order_id: str, key: str | None, body: dict) -> dict | None:
    if key is None:
        return None
    row = db.one(
        "SELECT id, request_hash FROM refunds WHERE order_id = :id AND idempotency_key = :key",
        {"id": order_id, "key": key},
    )
    if row is not None and not idempotency.same_body(row["request_hash"], body):
        raise Conflict("This Idempotency-Key was already used with another body; use a new key.")
    return row


def _take(order: dict, body: dict, caller, key, body_hash) -> str:
    """Check, reserve and write the refund in the caller's transaction; answer its id."""
    if order["status"] not in REFUNDABLE:
        raise Conflict(
            f"Order {order['number']} is {order['status']}: there is nothing to refund.",
            withheld=(orders.READ, "The order's status leaves nothing to refund."),
        )
    shown = _preview(order)
    amount, lines, shipping, kept = _price(body, shown)
    restock = _restock_lines(body, order)
    most = shown["_value_left"] if body.get("to_credit") else shown["refundable_cents"]
    if (lines or shipping) and not amount and kept:
        raise Invalid(
            f"lines: order {order['number']} was paid with credit, not money: there is no"
            " money to give back for these. Exchange the return to give their value back as"
            " credit, or send restock alone.",
            withheld=(orders.READ, "lines: these were paid with credit, not money."),
        )
    if amount > most:
        raise Invalid(
            f"amount_cents: {amount} is more than can be refunded; the maximum is {most}"
            f" ({money.display(most, order['currency'])}).",
            withheld=(orders.READ, "amount_cents: more than can be refunded."),
        )
    if amount == 0 and not restock:
        raise Invalid(
            "Nothing to refund or restock: give amount_cents, lines, shipping or restock."
        )
    taken = db.execute(
        "UPDATE orders SET refunded_cents = refunded_cents + :amount WHERE id = :id"
        " AND refunded_cents + :amount <= total_cents - balance_due_cents + edit_refunded_cents",
        {"amount": amount, "id": order["id"]},
    )
    if not taken:
        raise Conflict("Another refund of this order was taken meanwhile; reload the preview.")
    provider = providers.get(order["provider"], every=True) if order["provider"] else None
    through = provider is not None and provider.refunds_through_provider and amount > 0
    credit = bool(body.get("to_credit"))  # kept as a credit (an exchange): no money moves
    through = through and not credit
    refund_id, actor = db.new_id(), caller.actor
    parts = refund_parts.split(order["id"], provider.name, amount) if through else None
    _insert(
        {
            "id": refund_id,
            "order_id": order["id"],
            "amount_cents": amount,
            "currency": order["currency"],
            "lines": json.dumps(lines),
            "shipping": shipping,
            "restock": json.dumps(restock),
            "reason": body.get("reason"),
            "provider": "credit" if credit else provider.name if through else "manual",
            "reference": None,
            "status": "pending" if through else "succeeded",
            "idempotency_key": key,
            "request_hash": body_hash,
            "by_kind": actor.kind,
            "by_id": actor.id,
            "by_label": actor.label,
            "credit_cents": kept,
            "parts": parts,
        }
    )
    restocks.put_back(order["id"], {item["line"]: item["quantity"] for item in restock})
    if not through:
        _complete(order["id"], refund_id, actor)
    return refund_id


def take_for_edit(order_id: str, edit_id: str, amount: int, reason: str, actor: Actor) -> str:
    """An edit lowered a paid order's total: refund the difference, ``amount``, in the edit's
    transaction (holding the order's lock); answer the refund's id.

    A plain amount refund by the refund path: a manual one succeeds at once, a card one is
    written ``pending`` for ``finish`` to send after the commit. It counts in
    ``refunded_cents`` and in ``edit_refunded_cents`` (money that no longer belongs to the
    order, not refundable again); the order keeps its status and the edit issues the
    documents (a credit note of the whole invoice and a new one), so the refund issues none.
    """
    order = _order(order_id)
    provider = providers.get(order["provider"], every=True) if order["provider"] else None
    through = provider is not None and provider.refunds_through_provider
    db.execute(
        "UPDATE orders SET refunded_cents = refunded_cents + :amount,"
        " edit_refunded_cents = edit_refunded_cents + :amount WHERE id = :id",
        {"amount": amount, "id": order_id},
    )
    refund_id = db.new_id()
    parts = refund_parts.split(order_id, provider.name, amount) if through else None
    _insert(
        {
            "id": refund_id,
            "order_id": order_id,
            "amount_cents": amount,
            "currency": order["currency"],
            "lines": "[]",
            "shipping": 0,
            "restock": "[]",
            "reason": reason,
            "provider": provider.name if through else "manual",
            "reference": None,
            "status": "pending" if through else "succeeded",
            "idempotency_key": None,
            "request_hash": None,
            "by_kind": actor.kind,
            "by_id": actor.id,
            "by_label": actor.label,
            "edit_id": edit_id,
            "parts": parts,
        }
    )
    if not through:
        _complete(order_id, refund_id, actor)
    return refund_id


def finish(order_id: str, refund_id: str, actor: Actor) -> dict:
    """Outside any transaction: send a ``pending`` refund to its provider (a replay retries
    it); answer the refund. Unreachable: 503, it stays pending. Refused: it is ``failed``
    (``_fail``), answered, not raised: the caller's own change has committed."""
    refund = _load(refund_id)
    if refund["status"] == "pending":
        provider = providers.get(refund["provider"], every=True)
        with contextlib.suppress(ProviderRefused):  # recorded as failed by ``_fail``
            _through_provider(_order(order_id), refund_id, provider, actor)
        refund = _load(refund_id)
    return refund


def _insert(values: dict) -> None:
    moment = now_iso()
    db.execute(
        "INSERT INTO refunds (id, order_id, amount_cents, currency, lines, shipping, restock,"
        " reason, provider, reference, status, idempotency_key, request_hash, created_at,"
        " updated_at, by_kind, by_id, by_label, edit_id, credit_cents, parts) VALUES (:id,"
        " :order_id, :amount_cents, :currency, :lines, :shipping, :restock, :reason, :provider,"
        " :reference, :status, :idempotency_key, :request_hash, :now, :now, :by_kind, :by_id,"
        " :by_label, :edit_id, :credit_cents, :parts)",
        {"edit_id": None, "credit_cents": 0, "parts": None, **values, "now": moment},
    )


def _through_provider(
    order: dict, refund_id: str, provider: providers.Provider, actor: Actor
) -> None:
    """Outside any transaction: the provider gives a pending refund's money back, one part
    per capture it is split over (``refund_parts``), each keyed by the refund and its part."""
    row = db.one(
        "SELECT amount_cents, reference, parts FROM refunds WHERE id = :id", {"id": refund_id}
    )
    parts = refund_parts.of(row, order["reference"])
    try:
        for number, part in enumerate(parts):
            if part["reference"] is None:  # a part an earlier try sent is not sent again
                part["reference"] = provider.refund(
                    part["intent"], part["amount_cents"], refund_id, order["id"], number
                )
    except RefundRefused as refusal:
        sent = sum(part["amount_cents"] for part in parts if part["reference"] is not None)
        if sent:
            _keep_sent(order, refund_id, parts, sent, refusal.reason, actor)
            raise ProviderRefused(
                f"{provider.label} refused part of the refund ({refusal.reason}) after"
                f" {money.display(sent, order['currency'])} of it went back. The refund stays"
                " pending with the parts sent: retry it with the same Idempotency-Key to send"
                " the rest, and do not refund it again with a new one.",
                ours=refusal.ours,
            ) from None
        _fail(order, refund_id, refusal.reason, actor)
        raise ProviderRefused(
            f"{provider.label} refused the refund ({refusal.reason}). The refund is failed and"
            " its amount can be refunded again; retry with a new Idempotency-Key.",
            ours=refusal.ours,
        ) from None
    made = parts[0]["reference"]
    with db.transaction():
        orders.lock(order["id"])
        done = db.execute(
            "UPDATE refunds SET status = 'succeeded', reference = :ref, parts = :parts,"
            " updated_at = :now WHERE id = :id AND status = 'pending'",
            {"ref": made, "parts": json.dumps(parts), "now": now_iso(), "id": refund_id},
        )
        if done:  # a concurrent replay may have completed it
            _complete(order["id"], refund_id, actor)


def _keep_sent(
    order: dict, refund_id: str, parts: list, sent: int, reason: str, actor: Actor
) -> None:
    """The provider refused a part of a split refund after others went back: the money sent
    is gone, so nothing is released (a new refund could send it twice); the refund stays
    ``pending`` with its parts' references, for a retry under the same key to finish."""
    with db.transaction():
        orders.lock(order["id"])
        kept = db.execute(
            "UPDATE refunds SET parts = :parts, failure_reason = :reason, updated_at = :now"
            " WHERE id = :id AND status = 'pending'",
            {"parts": json.dumps(parts), "reason": reason, "now": now_iso(), "id": refund_id},
        )
        if kept:
            audit.record(
                "refund.partly_refused",
                {"order_id": order["id"], "number": order["number"], "refund_id": refund_id}
                | {"sent_cents": sent, "currency": order["currency"], "reason": reason},
                actor=actor,
            )


def _fail(order: dict, refund_id: str, reason: str, actor: Actor) -> None:
    """The provider refused a pending refund: it fails and its reserved amount is released, once
    (a concurrent replay, or a webhook that completed it meanwhile, leaves it as it is)."""
    with db.transaction():
        orders.lock(order["id"])
        failed = db.execute(
            "UPDATE refunds SET status = 'failed', failure_reason = :reason, updated_at = :now"
            " WHERE id = :id AND status = 'pending'",
            {"reason": reason, "now": now_iso(), "id": refund_id},
        )
        if not failed:
            return
        row = db.one("SELECT amount_cents, edit_id FROM refunds WHERE id = :id", {"id": refund_id})
        amount = row["amount_cents"]
        db.execute(
            "UPDATE orders SET refunded_cents = refunded_cents - :amount WHERE id = :id",
            {"amount": amount, "id": order["id"]},
        )
        if row["edit_id"]:  # an edit's difference not given back: the shop owes it
            db.execute(
                "UPDATE orders SET edit_refunded_cents = edit_refunded_cents - :amount,"
                " balance_due_cents = balance_due_cents - :amount WHERE id = :id",
                {"amount": amount, "id": order["id"]},
            )
        audit.record(
            "refund.failed",
            {"order_id": order["id"], "number": order["number"], "refund_id": refund_id}
            | {"amount_cents": amount, "currency": order["currency"], "reason": reason},
            actor=actor,
        )


def _complete(order_id: str, refund_id: str, actor: Actor) -> None:
    """A refund's money is back: the order's status, events and the customer's mail."""
    order = _order(order_id)
    refund = _load(refund_id)
    if refund["amount_cents"] == 0:
        return
    if not refund["edit_id"]:  # an edit's: the order keeps its status, the edit its documents
        payment_reports.apply(payment_reports.Refunded(order_id, refund["reason"]), actor)
        credit_notes.issue(order_id, refund_id, orders.load)
    audit.record(
        "order.refunded",
        {"order_id": order_id, "number": order["number"], "refund_id": refund_id}
        | {"amount_cents": refund["amount_cents"], "currency": order["currency"]},
        actor=actor,
    )
    webhooks.emit("order.refunded", order_id, lambda oid: {**orders.load(oid), "refund": refund})
    if order["email"] and refund["provider"] != "credit":  # no money came back
        shown = money.display(refund["amount_cents"], order["currency"])
        mail.queue_rendered(
            order["email"],
            f"Order {order['number']}: {shown} refunded",
            "refund",
            name=order["name"],
            amount=shown,
            number=order["number"],
        )


def record_external(
    provider: providers.Provider,
    order_id: str,
    theirs: list[dict],
    refunded_total: int,
    actor: Actor,
    intent: str | None = None,
) -> None:
    """Record what ``provider`` says was refunded (``theirs``: its refunds of one of the
    order's captures, ``intent``, by default the first; each ``id``, ``amount``, ``status``,
    ``created``, ``metadata``; ``refunded_total``: its total refunded there), as ``actor``;
    the caller holds the order's lock, in its transaction.

    A refund of ours left ``pending`` (the provider did it, its answer was lost) is
    completed. Any other refund not known here by its own id (made in the provider's
    dashboard) is recorded by that id, once, as a refund without restock, oldest first and
    only while what we hold as done there stays within ``refunded_total``: two events read
    the same list, and a lump recorded by an earlier release under another reference is not
    counted twice.
    """
    for item in sorted(theirs, key=lambda r: (r.get("created") or 0, r["id"])):
        if item.get("status") in ("failed", "canceled"):
            continue
        ours = (item.get("metadata") or {}).get("refund_id")
        mine = ours and db.one(
            "SELECT parts FROM refunds WHERE id = :id AND order_id = :order_id",
            {"id": ours, "order_id": order_id},
        )
        if mine:
            # One part of several is not the whole refund: the path that sends the parts
            # (or its retry) completes it.
            whole = not mine["parts"] or len(json.loads(mine["parts"])) == 1
            if whole and db.execute(
                "UPDATE refunds SET status = 'succeeded', reference = :ref, updated_at = :now"
                " WHERE id = :id AND status = 'pending'",
                {"ref": item["id"], "now": now_iso(), "id": ours},
            ):
                _complete(order_id, ours, actor)
            continue
        if db.value("SELECT 1 FROM refunds WHERE reference = :ref", {"ref": item["id"]}):
            continue
        intent = intent or _order(order_id)["reference"]
        held = refund_parts.refunded(order_id, provider.name, answered_only=True)
        if held.get(intent, 0) + item["amount"] > refunded_total:
            continue
        _record_theirs(provider, order_id, item, actor, intent)


def _record_theirs(
    provider: providers.Provider, order_id: str, item: dict, actor: Actor, intent: str
) -> None:
    """A refund made at the provider, outside the shop: recorded as the provider holds it,
    against the capture it was made on."""
    order = _order(order_id)
    db.execute(
        "UPDATE orders SET refunded_cents = refunded_cents + :amount WHERE id = :id",
        {"amount": item["amount"], "id": order_id},
    )
    refund_id = db.new_id()
    _insert(
        {
            "id": refund_id,
            "order_id": order_id,
            "amount_cents": item["amount"],
            "currency": order["currency"],
            "lines": "[]",
            "shipping": 0,
            "restock": "[]",
            "reason": f"Refunded in {provider.label}, outside the shop.",
            "provider": provider.name,
            "reference": item["id"],
            "status": "succeeded",
            "idempotency_key": None,
            "request_hash": None,
            "by_kind": "system",
            "by_id": None,
            "by_label": provider.label,
            "parts": json.dumps(
                [{"intent": intent, "amount_cents": item["amount"], "reference": item["id"]}]
            ),
        }
    )
    _complete(order_id, refund_id, actor)
