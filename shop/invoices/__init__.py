"""Invoices and credit notes (issue 40): gap-free numbers, frozen snapshots, their PDFs and
the accountant's list. Below orders in the map: the lifecycle and refunds call in, in their
own transactions; nothing here imports orders or payments (an order comes in as the dict
``orders.lifecycle.load`` answers). Rules: docs/invoicing.md."""
