"""Credit notes: one per succeeded refund, in its own gap-free series, referring to the
order's invoice, with the refund's tax share.

Refunds call ``issue`` in the transaction that records a refund's money back (holding the
order's lock). Its amounts are what was refunded, split by rate with the refunds' own
arithmetic (``pricing.refund_share``): units of a line give back their cumulative share of
the line's total and of its tax; the shipping part its share of the shipping's tax; a plain
amount is spread over the invoice's rates in proportion to their gross
(``pricing.spread``), each part carrying its rate's share of tax.
"""

import json

from shop import db
from shop.clock import iso, now
from shop.invoices import issuing, numbering
from shop.pricing.rules import refund_share, spread
from shop.site import settings as site

COLUMNS = "id, refund_id, order_id, invoice_id, number, issued_at, currency, total_cents, snapshot"


def issue(order_id: str, refund_id: str, load) -> dict | None:
    """The refund's credit note, issued once, in the caller's transaction (invoicing the
    order first if it has no invoice yet, ``issuing.ensure``); None when the order was never
    invoiced (never sold) or the refund gave no money back."""
    existing = of_refund(order_id, refund_id)
    if existing is not None:
        return existing
    refund = db.one(
        "SELECT id, amount_cents, lines, shipping, reason, created_at FROM refunds"
        " WHERE id = :id AND order_id = :order_id AND status = 'succeeded'",
        {"id": refund_id, "order_id": order_id},
    )
    if refund is None or not refund["amount_cents"]:
        return None
    invoice = issuing.ensure(order_id, load)
    if invoice is None:
        return None
    values, moment = site.current(), now()
    number = numbering.take(numbering.CREDIT_NOTE, values["credit_note_prefix"], moment.year)
    shot = snapshot(invoice["snapshot"], refund, _earlier(invoice["id"]), values)
    shot.update(number=number, issued_at=iso(moment))
    return _store(shot, order_id, invoice["id"], refund_id=refund_id)


def issue_for_edit(order_id: str, edit_id: str, reason: str | None, load) -> dict | None:
    """An edit changed an invoiced order: credit its current invoice in full (what earlier
    credit notes left of it), supersede it and issue the edited order's, in the edit's
    transaction (holding the order's lock); ``load(order_id)`` reads the order as it now
    stands. Answer the new invoice, or None for an order not invoiced (nothing to correct)."""
    invoice = issuing.of_order(order_id)
    if invoice is None:
        return None
    values, moment = site.current(), now()
    shot = invoice["snapshot"]
    earlier = _earlier(invoice["id"])
    lines = [
        {"line": line["line"], "quantity": line["quantity"] - earlier["units"].get(line["line"], 0)}
        for line in shot["lines"]
    ]
    whole = {
        "id": None,
        "amount_cents": invoice["total_cents"],
        "lines": json.dumps([line for line in lines if line["quantity"] > 0]),
        "shipping": shot["shipping"]["total_cents"] - earlier["shipping"],
        "reason": reason,
        "created_at": iso(moment),
    }
    number = numbering.take(numbering.CREDIT_NOTE, values["credit_note_prefix"], moment.year)
    note = snapshot(shot, whole, earlier, values)
    note.update(number=number, issued_at=iso(moment), edit={"id": edit_id})
    _store(note, order_id, invoice["id"], edit_id=edit_id)
    db.execute(
        "UPDATE invoices SET superseded_at = :now WHERE id = :id AND superseded_at IS NULL",
        {"now": iso(moment), "id": invoice["id"]},
    )
    return issuing.issue(load(order_id), values)


def _store(shot: dict, order_id: str, invoice_id: str, refund_id=None, edit_id=None) -> dict:
    """Write a credit note (a refund's or an edit's); answer its row."""
    row = {
        "id": db.new_id(),
        "refund_id": refund_id,
        "edit_id": edit_id,
        "order_id": order_id,
        "invoice_id": invoice_id,
        "number": shot["number"],
        "issued_at": shot["issued_at"],
        "currency": shot["currency"],
        "total_cents": shot["totals"]["total_cents"],
        "snapshot": json.dumps(shot, ensure_ascii=False, sort_keys=True),
    }
    db.execute(
        f"INSERT INTO credit_notes ({COLUMNS}, edit_id) VALUES (:id, :refund_id, :order_id,"
        " :invoice_id, :number, :issued_at, :currency, :total_cents, :snapshot, :edit_id)",
        row,
    )
    return {**row, "snapshot": shot}


def of_refund(order_id: str, refund_id: str, pdf: bool = False) -> dict | None:
    """A refund's credit note (its snapshot parsed), or None; ``pdf``: with its kept PDF."""
    row = db.one(
        f"SELECT {COLUMNS}{', pdf' if pdf else ''} FROM credit_notes"
        " WHERE refund_id = :id AND order_id = :order_id",
        {"id": refund_id, "order_id": order_id},
    )
    return None if row is None else {**row, "snapshot": json.loads(row["snapshot"])}


def of_order(order_id: str) -> list[dict]:
    """An order's credit notes, a refund's or an edit's, oldest first: number, date, the
    invoice each credits, its amounts and the refund or edit that issued it."""
    rows = db.query(
        "SELECT n.id, n.number, n.issued_at, n.currency, n.total_cents, n.refund_id,"
        " n.edit_id, n.snapshot, i.number AS invoice_number FROM credit_notes n"
        " JOIN invoices i ON i.id = n.invoice_id WHERE n.order_id = :id"
        " ORDER BY n.issued_at, n.number",
        {"id": order_id},
    )
    return [_listed(row) for row in rows]


def _listed(row: dict) -> dict:
    shot = json.loads(row.pop("snapshot"))
    return row | {
        "net_cents": shot["totals"]["net_cents"],
        "tax_cents": shot["totals"]["tax_cents"],
        "reason": shot["refund"]["reason"],
    }


def find(order_id: str, key: str, pdf: bool = False) -> dict | None:
    """The order's credit note whose id or number is ``key`` (its snapshot parsed), or
    None; ``pdf``: with its kept PDF."""
    row = db.one(
        f"SELECT {COLUMNS}{', pdf' if pdf else ''} FROM credit_notes WHERE order_id = :order_id"
        " AND (id = :key OR number = :key)",
        {"order_id": order_id, "key": key},
    )
    return None if row is None else {**row, "snapshot": json.loads(row["snapshot"])}


def _earlier(invoice_id: str) -> dict:
    """Units per line and shipping credited by the earlier credit notes of an invoice (an
    order edited has superseded invoices, each credited in full by its edit)."""
    units, shipping = {}, 0
    for row in db.query(
        "SELECT snapshot FROM credit_notes WHERE invoice_id = :id", {"id": invoice_id}
    ):
        shot = json.loads(row["snapshot"])
        for line in shot["lines"]:
            units[line["line"]] = units.get(line["line"], 0) + line["quantity"]
        shipping += shot["shipping"]["total_cents"]
    return {"units": units, "shipping": shipping}


def snapshot(invoice: dict, refund: dict, earlier: dict, values: dict) -> dict:
    """What a credit note shows for ``refund`` (its row: ``amount_cents``, ``lines`` JSON,
    ``shipping`` amount, ``reason``) against ``invoice`` (its snapshot), ``earlier`` credit
    notes counted (``_earlier``); pure, without number or date."""
    by_line = {line["line"]: line for line in invoice["lines"]}
    lines = []
    for item in json.loads(refund["lines"]) if refund["lines"] else []:
        line = by_line[item["line"]]
        already, count = earlier["units"].get(item["line"], 0), item["quantity"]
        total = refund_share(line["total_cents"], line["quantity"], already, count)
        tax = refund_share(line["tax_cents"], line["quantity"], already, count)
        lines.append(
            {
                "line": line["line"],
                "name": line["name"],
                "sku": line["sku"],
                "options": line["options"],
                "quantity": count,
                "tax_rate": line["tax_rate"],
                "net_cents": total - tax,
                "tax_cents": tax,
                "total_cents": total,
            }
        )
    shipped = invoice["shipping"]
    part = refund["shipping"] or 0
    shipping_tax = refund_share(
        shipped["tax_cents"], shipped["total_cents"], earlier["shipping"], part
    )
    shipping = {
        "method": shipped["method"],
        "rate": shipped["rate"],
        "net_cents": part - shipping_tax,
        "tax_cents": shipping_tax,
        "total_cents": part,
    }
    if lines or part:
        rates = issuing.by_rate(lines, shipping, [])
    else:
        rates = _spread(refund["amount_cents"], invoice["tax_by_rate"])
    names = {group["rate"]: group["name"] for group in invoice["tax_by_rate"]}
    for group in rates:
        group["name"] = names.get(group["rate"])
    total = sum(group["gross_cents"] for group in rates)
    tax = sum(group["tax_cents"] for group in rates)
    return {
        "kind": "credit_note",
        "invoice": {"number": invoice["number"], "issued_at": invoice["issued_at"]},
        "order": invoice["order"],
        "refund": {"id": refund["id"], "reason": refund["reason"], "at": refund["created_at"]},
        "seller": issuing.seller(values),
        "buyer": invoice["buyer"],
        "currency": invoice["currency"],
        "locale": values["locale"],
        "prices_include_tax": invoice["prices_include_tax"],
        "lines": lines,
        "shipping": shipping,
        "tax_by_rate": rates,
        "totals": {"net_cents": total - tax, "tax_cents": tax, "total_cents": total},
    }


def _spread(amount: int, groups: list[dict]) -> list[dict]:
    """A plain amount over the invoice's rates by their gross, each part with its share of
    its rate's tax."""
    parts = spread(amount, [group["gross_cents"] for group in groups])
    out = []
    for group, part in zip(groups, parts, strict=True):
        if not part:
            continue
        tax = refund_share(group["tax_cents"], group["gross_cents"], 0, part)
        out.append(
            {"rate": group["rate"], "name": group["name"]}
            | {"net_cents": part - tax, "tax_cents": tax, "gross_cents": part}
        )
    return out
