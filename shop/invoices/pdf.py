"""An invoice or credit note as a PDF, drawn from its snapshot alone (fpdf2).

Deterministic: the document's creation date is the snapshot's issue date and nothing else
varies, so the same snapshot gives the same bytes (the tests compare them). Uncompressed, so
its text can be read back without a PDF library. The built-in Helvetica writes Windows-1252
(Western European letters, the euro sign); any other character prints as ``?``: a shop
selling in other scripts needs a Unicode font (docs/invoicing.md).
"""

from babel.dates import format_date

from shop import money
from shop.clock import parse

_ENCODING = "windows-1252"
_TITLES = {"invoice": "Invoice", "credit_note": "Credit note"}


def _text(value) -> str:
    """``value`` as Helvetica can print it (characters outside Windows-1252: ``?``)."""
    return str(value if value is not None else "").encode(_ENCODING, "replace").decode(_ENCODING)


class _Document:
    """One page flow of label/value rows and a table of lines."""

    def __init__(self, shot: dict):
        # fpdf2 is imported with the first document a process draws: ~18 MB (with the font
        # tools it brings) that a web worker which never serves a PDF does not hold.
        from fpdf import FPDF

        self.shot = shot
        self.pdf = FPDF(format="A4")
        self.pdf.core_fonts_encoding = _ENCODING
        self.pdf.set_compression(False)
        self.pdf.set_creation_date(parse(shot["issued_at"]))
        self.pdf.set_title(_text(f"{_TITLES[shot['kind']]} {shot['number']}"))
        self.pdf.set_author(_text(shot["seller"]["name"]))
        self.pdf.set_auto_page_break(True, margin=15)
        self.pdf.add_page()
        self.font = None  # (style, size) last set: fpdf2 pays for a set_font even unchanged

    def money(self, minor: int) -> str:
        return money.display(minor, self.shot["currency"], self.shot["locale"])

    def date(self, stamp: str) -> str:
        return format_date(parse(stamp).date(), format="medium", locale=self.shot["locale"])

    def set_font(self, bold: bool, size: int) -> None:
        font = ("B" if bold else "", size)
        if font != self.font:
            self.pdf.set_font("helvetica", *font)
            self.font = font

    def line(self, text: str, size: int = 10, bold: bool = False, height: float = 5) -> None:
        """A paragraph, wrapped when it is wider than the page. A line that fits is one
        ``cell``: the same bytes as ``multi_cell`` draws for it, without its line breaking
        (a third of a document's drawing)."""
        self.set_font(bold, size)
        text = _text(text)
        if self.pdf.get_string_width(text) <= self.pdf.epw - 2 * self.pdf.c_margin:
            self.pdf.cell(0, height, text, new_x="LMARGIN", new_y="NEXT")
        else:
            self.pdf.multi_cell(0, height, text, new_x="LMARGIN", new_y="NEXT")

    def row(self, cells: list[tuple[str, float, str]], bold: bool = False) -> None:
        """Cells of (text, width in mm, alignment) on one line."""
        self.set_font(bold, 9)
        for text, width, align in cells:
            self.pdf.cell(width, 6, _text(text), align=align)
        self.pdf.ln(6)

    def gap(self, height: float = 4) -> None:
        self.pdf.ln(height)


def render(shot: dict) -> bytes:
    """The PDF of a snapshot (``issuing.snapshot`` or ``credit_notes.snapshot``)."""
    doc = _Document(shot)
    seller, buyer = shot["seller"], shot["buyer"]
    doc.line(seller["name"], size=16, bold=True, height=8)
    for text in (seller["address"] or "").splitlines():
        doc.line(text)
    if seller["vat_id"]:
        doc.line(f"VAT id: {seller['vat_id']}")
    if seller["email"]:
        doc.line(seller["email"])
    doc.gap(6)
    doc.line(f"{_TITLES[shot['kind']]} {shot['number']}", size=14, bold=True, height=7)
    doc.line(f"Date: {doc.date(shot['issued_at'])}")
    if shot["kind"] == "credit_note":
        invoice = shot["invoice"]
        doc.line(f"For invoice {invoice['number']} of {doc.date(invoice['issued_at'])}")
        if shot["refund"]["reason"]:
            doc.line(f"Reason: {shot['refund']['reason']}")
    order = shot["order"]
    doc.line(f"Order {order['number']} of {doc.date(order['placed_at'])}")
    if shot.get("payment_method"):
        doc.line(f"Payment: {shot['payment_method']}")
    doc.gap()
    doc.line("Bill to", bold=True)
    for text in _buyer_lines(buyer):
        doc.line(text)
    doc.gap()
    _lines_table(doc, shot)
    doc.gap()
    _rates_table(doc, shot)
    return bytes(doc.pdf.output())


def _buyer_lines(buyer: dict) -> list[str]:
    address = buyer["address"] or {}
    city = " ".join(part for part in (address.get("postal_code"), address.get("city")) if part)
    parts = [buyer["name"], address.get("line1"), address.get("line2"), city]
    parts += [address.get("region"), address.get("country"), buyer["email"]]
    return [part for part in parts if part]


def _lines_table(doc: _Document, shot: dict) -> None:
    doc.row(
        [("Item", 80, "L"), ("SKU", 30, "L"), ("Qty", 15, "R"), ("Rate", 20, "R")]
        + [("Amount", 35, "R")],
        bold=True,
    )
    for line in shot["lines"]:
        options = ", ".join(f"{k}: {v}" for k, v in sorted((line["options"] or {}).items()))
        name = f"{line['name']} ({options})" if options else line["name"]
        rate = f"{line['tax_rate']}%" if line["tax_rate"] is not None else "-"
        doc.row(
            [(name[:48], 80, "L"), ((line["sku"] or "")[:18], 30, "L")]
            + [(str(line["quantity"]), 15, "R"), (rate, 20, "R")]
            + [(doc.money(line["total_cents"]), 35, "R")]
        )
    shipping = shot["shipping"]
    if shipping["total_cents"]:
        rate = f"{shipping['rate']}%" if shipping["rate"] is not None else "-"
        label = f"Shipping: {shipping['method']}" if shipping["method"] else "Shipping"
        doc.row(
            [(label[:48], 80, "L"), ("", 30, "L"), ("", 15, "R"), (rate, 20, "R")]
            + [(doc.money(shipping["total_cents"]), 35, "R")]
        )
    discount = shot.get("discount") or {}
    if discount.get("amount_cents"):
        code = f" ({discount['code']})" if discount.get("code") else ""
        doc.line(f"Discounts included above{code}: {doc.money(discount['amount_cents'])}", size=9)


def _rates_table(doc: _Document, shot: dict) -> None:
    doc.row(
        [("Tax rate", 60, "L"), ("Net", 40, "R"), ("Tax", 40, "R"), ("Gross", 40, "R")],
        bold=True,
    )
    for group in shot["tax_by_rate"]:
        label = f"{group['name'] or 'Tax'} {group['rate']}%" if group["rate"] else "No tax"
        doc.row(
            [(label, 60, "L"), (doc.money(group["net_cents"]), 40, "R")]
            + [(doc.money(group["tax_cents"]), 40, "R"), (doc.money(group["gross_cents"]), 40, "R")]
        )
    totals = shot["totals"]
    doc.row(
        [("Total", 60, "L"), (doc.money(totals["net_cents"]), 40, "R")]
        + [(doc.money(totals["tax_cents"]), 40, "R"), (doc.money(totals["total_cents"]), 40, "R")],
        bold=True,
    )
    if shot["prices_include_tax"]:
        doc.line("Prices include tax.", size=8)
