"""The invoice's PDF goes with the paid e-mail when the shop says so (issue 40), drawn from
the invoice as issued when the worker sends it; never without the setting."""

import pytest

from tests.mail_helpers import deliver
from tests.orders.test_order_json import created
from tests.orders_helpers import add_product, basket


@pytest.fixture
def app(make_app, smtp):
    return make_app(SMTP_URL=smtp.url, PUBLIC_URL="https://shop.example")


def _paid_mail(app, owner_client, customer_client, smtp):
    order = created(customer_client.post("/payments/checkout", json=basket((add_product(app), 1))))
    paid = owner_client.patch(f"/orders/{order['id']}/status", json={"status": "paid"})
    assert paid.status_code == 200, paid.json
    deliver(app)
    [message] = [m for m in smtp.messages if m["Subject"].endswith(f"{order['number']} is paid")]
    return order, message


def test_the_paid_email_carries_the_invoice_when_the_shop_says_so(
    app, owner_client, customer_client, smtp
):
    changed = owner_client.patch("/settings", json={"invoice_attach_to_mail": True})
    assert changed.status_code == 200 and changed.json["invoice_attach_to_mail"] is True
    order, message = _paid_mail(app, owner_client, customer_client, smtp)
    [attached] = list(message.iter_attachments())
    invoice = owner_client.get(f"/orders/{order['id']}/invoice")
    number = invoice.headers["Content-Disposition"].split("filename=")[1].strip('"')
    assert attached.get_content_type() == "application/pdf"
    assert attached.get_filename() == number
    assert attached.get_content() == invoice.data  # the same bytes: drawn from the snapshot


def test_without_the_setting_no_email_carries_an_invoice(app, owner_client, customer_client, smtp):
    assert owner_client.get("/settings").json["invoice_attach_to_mail"] is False
    _order, message = _paid_mail(app, owner_client, customer_client, smtp)
    assert list(message.iter_attachments()) == []
    assert all(not list(m.iter_attachments()) for m in smtp.messages)
