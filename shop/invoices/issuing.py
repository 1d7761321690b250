"""Issuing an order's invoice: once, numbered, frozen.

The lifecycle calls ``on_move`` in the transaction of every status move (under the order's
lock): the move that makes the order due, by the ``invoice_on`` setting, issues it. A refund
of an order not yet invoiced (``invoice_on`` = ``shipment``) issues it first (``ensure``),
so its credit note has an invoice to refer to. The snapshot holds everything the PDF shows,
read from the order and the settings at that moment; nothing later changes it.
"""

import json

from shop import db
from shop.clock import iso, now
from shop.invoices import numbering
from shop.pricing.rules import shipping_charged
from shop.site import settings as site

# When an order is invoiced (setting ``invoice_on``): the statuses that make it due.
INVOICE_ON = ("paid", "shipment")
_DUE = {
    "paid": frozenset({"paid", "partially_shipped", "shipped", "delivered"}),
    "shipment": frozenset({"partially_shipped", "shipped", "delivered"}),
}
# An order never paid here has nothing to invoice (a card payment that landed on a cancelled
# order and was refunded).
_NEVER_SOLD = frozenset({"pending", "cancelled"})

COLUMNS = "id, order_id, number, issued_at, customer_id, currency, total_cents, snapshot"


def on_move(order_id: str, status: str, load) -> dict | None:
    """In the transaction of a move to ``status``: issue the invoice if this move makes the
    order due and it has none; ``load(order_id)`` reads the order. Answer the new invoice."""
    if status not in _DUE["paid"]:  # the widest: no setting makes a cancel or refund due
        return None
    values = site.current()
    if status not in _DUE.get(values["invoice_on"], _DUE["paid"]):
        return None
    if of_order(order_id) is not None:
        return None
    return issue(load(order_id), values)


def ensure(order_id: str, load) -> dict | None:
    """The order's invoice, issued now if it has none yet (a refund before the first
    shipment); None for an order never sold (``pending``, ``cancelled``)."""
    found = of_order(order_id)
    if found is not None:
        return found
    order = load(order_id)
    if order is None or order["status"] in _NEVER_SOLD:
        return None
    return issue(order, site.current())


def of_order(order_id: str, pdf: bool = False) -> dict | None:
    """The order's invoice row (its snapshot parsed), or None; ``pdf``: with its kept PDF
    (``kept.pdf_of``), which no other read carries."""
    row = db.one(
        f"SELECT {COLUMNS}{', pdf' if pdf else ''} FROM invoices"
        " WHERE order_id = :id AND superseded_at IS NULL",
        {"id": order_id},
    )
    return None if row is None else {**row, "snapshot": json.loads(row["snapshot"])}


def all_of_order(order_id: str) -> list[dict]:
    """Every invoice of the order, oldest first: an edited order's superseded ones
    (``superseded_at`` set) and its current one, each with its amounts."""
    rows = db.query(
        "SELECT id, number, issued_at, superseded_at, currency, total_cents, snapshot"
        " FROM invoices WHERE order_id = :id ORDER BY issued_at, number",
        {"id": order_id},
    )
    listed = []
    for row in rows:
        totals = json.loads(row.pop("snapshot"))["totals"]
        listed.append(
            row
            | {"current": row["superseded_at"] is None}
            | {"net_cents": totals["net_cents"], "tax_cents": totals["tax_cents"]}
        )
    return listed


def find(order_id: str, key: str, pdf: bool = False) -> dict | None:
    """The order's invoice, current or superseded, whose id or number is ``key`` (its
    snapshot parsed), or None; ``pdf``: with its kept PDF."""
    row = db.one(
        f"SELECT {COLUMNS}{', pdf' if pdf else ''} FROM invoices WHERE order_id = :order_id"
        " AND (id = :key OR number = :key)",
        {"order_id": order_id, "key": key},
    )
    return None if row is None else {**row, "snapshot": json.loads(row["snapshot"])}


def issue(order: dict, values: dict) -> dict:
    """Number and store ``order``'s invoice with ``values`` (the settings), in the caller's
    transaction (holding the order's lock); answer its row."""
    moment = now()
    number = numbering.take(numbering.INVOICE, values["invoice_prefix"], moment.year)
    shot = snapshot(order, values, number, iso(moment))
    row = {
        "id": db.new_id(),
        "order_id": order["id"],
        "number": number,
        "issued_at": shot["issued_at"],
        "customer_id": order["customer"]["id"],
        "currency": order["currency"],
        "total_cents": order["total_cents"],
        "snapshot": json.dumps(shot, ensure_ascii=False, sort_keys=True),
    }
    db.execute(
        f"INSERT INTO invoices ({COLUMNS}) VALUES (:id, :order_id, :number, :issued_at,"
        " :customer_id, :currency, :total_cents, :snapshot)",
        row,
    )
    return {**row, "snapshot": shot}


def seller(values: dict) -> dict:
    """The seller as documents print it, from the settings of the moment."""
    return {
        "name": values["shop_name"],
        "address": values["address"],
        "vat_id": values["vat_id"],
        "email": values["contact_email"],
    }


def snapshot(order: dict, values: dict, number: str, issued_at: str) -> dict:
    """Everything an invoice shows, frozen: seller, buyer, lines, shipping, discount, tax by
    rate and totals, from ``order`` (as ``orders.lifecycle.load`` answers it)."""
    inclusive = order["prices_include_tax"]
    lines = [
        {
            "line": item["line"],
            "name": item["name"],
            "sku": item["sku"],
            "options": item["options"] or {},
            "quantity": item["quantity"],
            "unit_price_cents": item["unit_price_cents"],
            "discount_cents": item["discount_cents"] or 0,
            "tax_rate": item["tax_rate"],
            "tax_cents": item["tax_cents"] or 0,
            "net_cents": item["total_cents"] - (item["tax_cents"] or 0),
            "total_cents": item["total_cents"],
        }
        for item in order["items"]
    ]
    shipping_tax = order["shipping_tax_cents"] or 0
    shipping_gross = shipping_charged(order["shipping_cents"], shipping_tax, inclusive)
    shipping = {
        "method": (order["shipping_method"] or {}).get("name"),
        "rate": _shipping_rate(order, lines, shipping_tax),
        "net_cents": shipping_gross - shipping_tax,
        "tax_cents": shipping_tax,
        "total_cents": shipping_gross,
    }
    customer, address = order["customer"], order["shipping_address"]
    return {
        "kind": "invoice",
        "number": number,
        "issued_at": issued_at,
        "order": {"id": order["id"], "number": order["number"], "placed_at": order["created_at"]},
        "seller": seller(values),
        "buyer": {
            "customer_id": customer["id"],
            "name": customer["name"] or (address or {}).get("name"),
            "email": customer["email"],
            "address": address,
        },
        "currency": order["currency"],
        "locale": values["locale"],
        "prices_include_tax": inclusive,
        "lines": lines,
        "shipping": shipping,
        "discount": {"code": order["discount_code"], "amount_cents": order["discount_cents"]},
        "tax_by_rate": by_rate(lines, shipping, order["tax_lines"]),
        "totals": {
            "subtotal_cents": order["subtotal_cents"],
            "discount_cents": order["discount_cents"],
            "shipping_cents": shipping_gross,
            "tax_cents": order["tax_cents"],
            "net_cents": order["total_cents"] - order["tax_cents"],
            "total_cents": order["total_cents"],
        },
        "payment_method": (order["payment"] or {}).get("provider"),
    }


def _shipping_rate(order: dict, lines: list[dict], shipping_tax: int) -> str | None:
    """The rate the shipping was taxed at: the order's tax line whose amount its lines do
    not account for (the order keeps the rate of its lines, and the shipping's total)."""
    if not shipping_tax:
        return None
    for tax_line in order["tax_lines"]:
        rate = tax_line["rate"]
        of_lines = sum(line["tax_cents"] for line in lines if line["tax_rate"] == rate)
        if tax_line["amount_cents"] - of_lines == shipping_tax:
            return rate
    return None


def by_rate(lines: list[dict], shipping: dict, tax_lines: list[dict]) -> list[dict]:
    """Net, tax and gross per tax rate (lines and shipping; no rate: ``rate`` null), in the
    order the rates first appear; each rate's name from the order's tax lines."""
    names = {tax_line["rate"]: tax_line["name"] for tax_line in tax_lines}
    groups: dict = {}
    parts = [*lines]
    if shipping["total_cents"]:
        parts.append({**shipping, "tax_rate": shipping["rate"]})
    for part in parts:
        group = groups.setdefault(
            part["tax_rate"],
            {"rate": part["tax_rate"], "name": names.get(part["tax_rate"])}
            | {"net_cents": 0, "tax_cents": 0, "gross_cents": 0},
        )
        group["net_cents"] += part["net_cents"]
        group["tax_cents"] += part["tax_cents"]
        group["gross_cents"] += part["total_cents"]
    return list(groups.values())
