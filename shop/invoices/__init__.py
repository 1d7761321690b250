"""Invoices and credit notes (issue 40): gap-free numbers, frozen snapshots, their PDFs and
the accountant's list. Below orders in the map: the lifecycle and refunds call in, in their
own transactions; nothing here imports orders or payments (an order comes in as the dict
``orders.lifecycle.load`` answers). Rules: docs/invoicing.md."""

from shop import mail
from shop.invoices import issuing, kept
from shop.site import settings as site

# The e-mail of the move that invoices an order carries the invoice, when the shop says so
# (``invoice_attach_to_mail``): the paid e-mail, or the shipment's with ``invoice_on``
# ``shipment``.
_CARRIES = {"paid": ("paid",), "shipment": ("partially_shipped", "shipped")}


def _draw_invoice(order_id: str):
    """The invoice of ``order_id`` as an e-mail attachment: its kept PDF (drawn and kept now
    if the worker has not yet), the bytes every download serves."""
    invoice = issuing.of_order(order_id, pdf=True)
    if invoice is None:
        return None
    return f"{invoice['number']}.pdf", "application/pdf", kept.pdf_of(kept.INVOICES, invoice)


def _with_order_mail(order: dict, settings: dict | None) -> str | None:
    """``invoice:<order id>`` for the e-mail of the move that invoiced ``order``
    (``settings``: the mail's read of them, or None to read them here)."""
    if not order.get("invoice_number"):
        return None
    values = settings if settings is not None else site.current()
    if not values.get("invoice_attach_to_mail"):
        return None
    if order["status"] not in _CARRIES.get(values["invoice_on"], ()):
        return None
    return f"invoice:{order['id']}"


mail.ATTACHMENTS["invoice"] = _draw_invoice
mail.ORDER_MAIL_ATTACHMENTS.append(_with_order_mail)
