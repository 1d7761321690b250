"""The console's invoices (issue 40) through the test client: the order page's Documents
block with the invoice and credit-note downloads, the invoices list with its period and its
CSV export, the nav link, and the same permission as the JSON API."""

import pytest
from admin_helpers import console_client

from tests.orders_helpers import add_product, basket


@pytest.fixture
def owner(app, owner_client):
    return console_client(app, owner_client.email)


def _paid_order(app, customer_client, owner_client):
    product = add_product(app, "Teapot", price_cents=2500, stock=10)
    order = customer_client.post("/payments/checkout", json=basket((product, 2))).json
    paid = owner_client.patch(f"/orders/{order['id']}/status", json={"status": "paid"})
    assert paid.status_code == 200
    return paid.json


def test_the_order_page_links_the_invoice_and_credit_notes(
    app, owner, owner_client, customer_client
):
    order = _paid_order(app, customer_client, owner_client)
    refund = owner_client.post(f"/orders/{order['id']}/refunds", json={"amount_cents": 500})
    assert refund.status_code == 201
    page = owner.get(f"/admin/orders/{order['id']}").text
    assert 'id="documents"' in page and f"Invoice {order['invoice_number']} (PDF)" in page
    assert "Credit note CN-" in page
    invoice = owner.get(f"/admin/orders/{order['id']}/invoice.pdf")
    assert invoice.status_code == 200 and invoice.mimetype == "application/pdf"
    assert invoice.data == owner_client.get(f"/orders/{order['id']}/invoice").data
    note = owner.get(f"/admin/orders/{order['id']}/refunds/{refund.json['id']}/credit-note.pdf")
    assert note.status_code == 200 and note.data.startswith(b"%PDF-")


def test_an_edited_orders_page_links_every_invoice_and_the_edits_credit_note(
    app, owner, owner_client, customer_client
):
    order = _paid_order(app, customer_client, owner_client)
    edited = owner_client.post(
        f"/orders/{order['id']}/edits", json={"set_quantity": [{"line": 1, "quantity": 1}]}
    )
    assert edited.status_code == 201, edited.json
    page = owner.get(f"/admin/orders/{order['id']}").text
    invoices = owner_client.get(f"/orders/{order['id']}/invoices").json["items"]
    (note,) = owner_client.get(f"/orders/{order['id']}/credit-notes").json["items"]
    assert note["edit_id"] == edited.json["id"]
    assert f"Invoice {invoices[0]['number']} (PDF)" in page and "superseded by an edit" in page
    assert f"Invoice {invoices[1]['number']} (PDF)" in page
    assert f"Credit note {note['number']} (PDF)" in page and "of an edit" in page
    base = f"/admin/orders/{order['id']}"
    old = owner.get(f"{base}/invoices/{invoices[0]['id']}.pdf")
    assert old.status_code == 200
    assert old.data == owner_client.get(f"/orders/{order['id']}/invoices/{invoices[0]['id']}").data
    pdf = owner.get(f"{base}/credit-notes/{note['id']}.pdf")
    assert pdf.status_code == 200 and note["number"].encode() in pdf.data
    other = _paid_order(app, customer_client, owner_client)
    assert (
        owner.get(f"/admin/orders/{other['id']}/credit-notes/{note['id']}.pdf").status_code == 404
    )


def test_an_unpaid_order_says_it_is_not_invoiced(app, owner, customer_client):
    product = add_product(app, "Cup", price_cents=900, stock=10)
    order = customer_client.post("/payments/checkout", json=basket((product, 1))).json
    assert "Not invoiced yet" in owner.get(f"/admin/orders/{order['id']}").text
    assert owner.get(f"/admin/orders/{order['id']}/invoice.pdf").status_code == 409


def test_the_invoices_list_its_period_and_export(
    app, clock, owner, owner_client, customer_client, make_admin
):
    order = _paid_order(app, customer_client, owner_client)
    listed = owner.get("/admin/invoices")
    assert listed.status_code == 200 and order["invoice_number"] in listed.text
    assert 'href="/admin/invoices"' in listed.text  # the nav's link
    today = clock().date().isoformat()
    assert order["invoice_number"] in owner.get(f"/admin/invoices?from={today}&to={today}").text
    empty = owner.get("/admin/invoices?from=2001-01-01&to=2001-01-31").text
    assert "No invoice in this period." in empty
    assert owner.get("/admin/invoices?from=bogus&page=x").status_code == 200
    export = owner.get(f"/admin/invoices/export?from={today}")
    assert export.status_code == 200 and export.mimetype == "text/csv"
    assert order["invoice_number"] in export.get_data(as_text=True)
    # Without orders.read: refused, and no link.
    editor = console_client(app, make_admin("editor", email="editor@example.com").email)
    assert editor.get("/admin/invoices").status_code == 403
    assert editor.get(f"/admin/orders/{order['id']}/invoice.pdf").status_code == 403
