"""The accountant's view: invoices listed by issue date, and the CSV of invoices and credit
notes of a period (number, date, customer, net and tax by rate, gross).

Credit notes are written with negative amounts in the CSV, so a column's sum is the period's
net figure. Amounts are decimal text in the document's currency (``12.50``), never floats.
"""

import csv
import io
import json

from shop import db, money
from shop.catalogue.files.export import defused

# The list's columns: the snapshot is parsed for what the list shows of it.
SELECT = "SELECT id, order_id, number, issued_at, currency, total_cents, snapshot FROM invoices"


def present(row: dict) -> dict:
    """An invoice as the list shows it."""
    shot = json.loads(row["snapshot"])
    totals = shot["totals"]
    return {
        "id": row["id"],
        "number": row["number"],
        "order_id": row["order_id"],
        "order_number": shot["order"]["number"],
        "issued_at": row["issued_at"],
        "customer": {
            "id": shot["buyer"]["customer_id"],
            "name": shot["buyer"]["name"],
            "email": shot["buyer"]["email"],
        },
        "currency": row["currency"],
        "net_cents": totals["net_cents"],
        "tax_cents": totals["tax_cents"],
        "total_cents": row["total_cents"],
        "tax_by_rate": [
            {key: group[key] for key in ("rate", "name", "net_cents", "tax_cents", "gross_cents")}
            for group in shot["tax_by_rate"]
        ],
    }


def documents(start: str | None, end: str | None) -> list[dict]:
    """Invoices and credit notes issued in [``start``, ``end``) (stored timestamps; None:
    open), by issue date (an invoice before a credit note of the same moment) then number:
    each ``kind``, ``number``, ``issued_at`` and snapshot."""
    where, params = [], {}
    if start is not None:
        where.append("issued_at >= :start")
        params["start"] = start
    if end is not None:
        where.append("issued_at < :end")
        params["end"] = end
    condition = (" WHERE " + " AND ".join(where)) if where else ""
    rows = db.query(
        "SELECT 'invoice' AS kind, 0 AS rank, number, issued_at, snapshot FROM invoices"
        + condition
        + " UNION ALL SELECT 'credit_note' AS kind, 1 AS rank, number, issued_at, snapshot"
        + " FROM credit_notes"
        + condition
        + " ORDER BY issued_at, rank, number",
        params,
    )
    return [{**row, "snapshot": json.loads(row["snapshot"])} for row in rows]


def _rate_label(rate) -> str:
    return "none" if rate is None else str(rate)


def csv_text(docs: list[dict]) -> str:
    """The CSV of ``documents``: one row each, a net and a tax column per rate met."""
    rates: list = []
    for doc in docs:
        for group in doc["snapshot"]["tax_by_rate"]:
            if group["rate"] not in rates:
                rates.append(group["rate"])
    header = ["type", "number", "date", "invoice", "order", "customer", "email", "currency"]
    for rate in rates:
        header += [f"net_{_rate_label(rate)}", f"tax_{_rate_label(rate)}"]
    header += ["net", "tax", "gross"]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    for doc in docs:
        shot, sign = doc["snapshot"], -1 if doc["kind"] == "credit_note" else 1
        currency = shot["currency"]

        def amount(minor: int, currency=currency, sign=sign) -> str:
            return money.to_text(sign * minor, currency)

        groups = {group["rate"]: group for group in shot["tax_by_rate"]}
        row = [
            doc["kind"],
            doc["number"],
            doc["issued_at"][:10],
            shot["invoice"]["number"] if doc["kind"] == "credit_note" else "",
            shot["order"]["number"],
            defused(shot["buyer"]["name"] or ""),
            defused(shot["buyer"]["email"] or ""),
            currency,
        ]
        for rate in rates:
            group = groups.get(rate)
            row += [amount(group["net_cents"]), amount(group["tax_cents"])] if group else ["", ""]
        totals = shot["totals"]
        row += [amount(totals["net_cents"]), amount(totals["tax_cents"])]
        row.append(amount(totals["total_cents"]))
        writer.writerow(row)
    return out.getvalue()
