"""Invoices and credit notes (issue 40), through HTTP on both engines: gap-free numbers
under concurrent payments, the PDF per role, frozen snapshots, a credit note per refund, the
accountant's list and export."""

import csv
import io
import threading
from datetime import datetime

import pytest

from tests.orders_helpers import ADDRESS, add_product, basket, set_setting

YEAR = None  # set per test from the app's clock


def _created(response):
    assert response.status_code == 201, response.json
    return response.json


@pytest.fixture
def taxed(app, owner_client):
    """A VAT shop (prices include tax) with a 20 % rate in France and a shipping method."""
    set_setting(app, "prices_include_tax", True)
    set_setting(app, "address", "1 Rue de la Paix\n75002 Paris")
    set_setting(app, "vat_id", "FR12345678901")
    _created(owner_client.post("/tax-rates", json={"country": "FR", "rate": "20", "name": "TVA"}))
    method = _created(
        owner_client.post(
            "/shipping-methods", json={"name": "Colissimo", "countries": ["FR"], "price_cents": 600}
        )
    )
    return method["id"]


def _order(app, customer, method_id, lines=((1200, 2),)):
    products = [add_product(app, price_cents=price, stock=50) for price, _ in lines]
    body = basket(*[(p, qty) for p, (_, qty) in zip(products, lines, strict=True)])
    body["shipping_method_id"] = method_id
    return _created(customer.post("/payments/checkout", json=body))


def _guest_order(app, method_id) -> tuple[dict, str]:
    """A guest's order (a cart completed without an account) and its token."""
    guest = app.test_client()
    product = add_product(app, price_cents=1200, stock=50)
    cart = _created(guest.post("/carts"))
    _created(guest.post(f"/carts/{cart['id']}/lines", json={"product_id": product, "quantity": 1}))
    details = {
        "email": "guest@example.com",
        "shipping_address": ADDRESS,
        "shipping_method_id": method_id,
    }
    assert guest.patch(f"/carts/{cart['id']}", json=details).status_code == 200
    done = _created(guest.post(f"/carts/{cart['id']}/complete", json={"payment_method": "manual"}))
    return done["order"], done["order_token"]


def _pay(owner, order_id):
    moved = owner.patch(f"/orders/{order_id}/status", json={"status": "paid"})
    assert moved.status_code == 200, moved.json
    return moved.json


def _year(clock) -> int:
    return clock().year


def test_an_order_is_invoiced_when_paid_and_shows_its_number(
    app, clock, owner_client, customer_client, taxed
):
    order = _order(app, customer_client, taxed)
    assert order["invoice_number"] is None and order["invoiced_at"] is None
    early = owner_client.get(f"/orders/{order['id']}/invoice")
    assert early.status_code == 409 and "no invoice yet" in early.json["message"]
    paid = _pay(owner_client, order["id"])
    assert paid["invoice_number"] == f"INV-{_year(clock)}-000001"
    assert paid["invoiced_at"] is not None
    shown = customer_client.get(f"/orders/{order['id']}").json
    assert shown["invoice_number"] == paid["invoice_number"]
    listed = owner_client.get("/orders").json["items"][0]
    assert listed["invoice_number"] == paid["invoice_number"]
    # Moving on (shipped) issues nothing more.
    owner_client.patch(f"/orders/{order['id']}/status", json={"status": "shipped"})
    assert (
        owner_client.get(f"/orders/{order['id']}").json["invoice_number"] == paid["invoice_number"]
    )
    page = owner_client.get("/invoices").json
    assert [item["number"] for item in page["items"]] == [paid["invoice_number"]]
    item = page["items"][0]
    # 2 x 12.00 + 6.00 shipping, VAT included at 20 %: 30.00 gross, 5.00 tax.
    assert (item["total_cents"], item["tax_cents"], item["net_cents"]) == (3000, 500, 2500)
    assert item["tax_by_rate"] == [
        {"rate": "20", "name": "TVA", "net_cents": 2500, "tax_cents": 500, "gross_cents": 3000}
    ]


def test_three_orders_paid_concurrently_get_three_consecutive_numbers(
    app, clock, owner_client, make_customer, make_key, taxed
):
    customer = make_customer()
    orders = [_order(app, customer, taxed)["id"] for _ in range(3)]
    key = make_key("read:order", "write:order")
    start, results = threading.Barrier(3), {}

    def pay(order_id):
        client = app.test_client()
        client.environ_base["HTTP_AUTHORIZATION"] = key.environ_base["HTTP_AUTHORIZATION"]
        start.wait(timeout=30)
        response = client.patch(f"/orders/{order_id}/status", json={"status": "paid"})
        results[order_id] = (response.status_code, response.json)

    threads = [threading.Thread(target=pay, args=(order_id,)) for order_id in orders]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert all(status == 200 for status, _ in results.values()), results
    numbers = sorted(body["invoice_number"] for _, body in results.values())
    year = _year(clock)
    assert numbers == [f"INV-{year}-00000{n}" for n in (1, 2, 3)]


def test_the_pdf_per_role(app, owner_client, customer_client, make_customer, make_key, taxed):
    order = _order(app, customer_client, taxed)
    _pay(owner_client, order["id"])
    url = f"/orders/{order['id']}/invoice"
    for reader in (owner_client, customer_client, make_key("read:order")):
        response = reader.get(url)
        assert response.status_code == 200
        assert response.mimetype == "application/pdf" and response.data.startswith(b"%PDF-")
        assert "INV-" in response.headers["Content-Disposition"]
    assert make_customer().get(url).status_code == 404  # another customer's: no such order
    assert make_key("read:product").get(url).status_code == 403
    anonymous = app.test_client()
    assert anonymous.get(url).status_code == 401
    assert anonymous.get(url + "?token=not-the-token").status_code == 404
    missing = owner_client.get("/orders/nosuchorder/invoice")
    assert missing.status_code == 404
    # A guest reads their own order's invoice with the order's token (issue 38's carts).
    guest_order, token = _guest_order(app, taxed)
    _pay(owner_client, guest_order["id"])
    guest_url = f"/orders/{guest_order['id']}/invoice"
    assert anonymous.get(guest_url + f"?token={token}").status_code == 200
    assert anonymous.get(guest_url + "?token=" + "x" * len(token)).status_code == 404
    assert anonymous.get(url + f"?token={token}").status_code == 404  # not that order's


def test_an_issued_invoice_does_not_change_with_the_settings_or_products(
    app, owner_client, customer_client, taxed
):
    order = _order(app, customer_client, taxed)
    _pay(owner_client, order["id"])
    url = f"/orders/{order['id']}/invoice"
    before = owner_client.get(url).data
    assert b"1 Rue de la Paix" in before and b"FR12345678901" in before
    assert b"\x8030.00" in before or b"30.00" in before  # Babel's amount, Windows-1252 euro
    set_setting(app, "address", "99 Avenue Nouvelle\n69001 Lyon")
    set_setting(app, "shop_name", "Renamed Shop")
    product = order["items"][0]["product_id"]
    assert (
        owner_client.put(
            f"/products/{product}", json={"name": "Other", "price_cents": 999}
        ).status_code
        == 200
    )
    after = owner_client.get(url).data
    assert after == before  # the same bytes: drawn from the snapshot as issued
    assert b"Avenue Nouvelle" not in after
    # The next invoice has the new address.
    second = _order(app, customer_client, taxed)
    _pay(owner_client, second["id"])
    assert b"Avenue Nouvelle" in owner_client.get(f"/orders/{second['id']}/invoice").data


def test_a_credit_note_per_refund_with_its_tax_share(
    app, clock, owner_client, customer_client, taxed
):
    order = _order(app, customer_client, taxed, lines=((1200, 3),))
    _pay(owner_client, order["id"])
    url = f"/orders/{order['id']}/refunds"
    first = _created(owner_client.post(url, json={"lines": [{"line": 1, "quantity": 1}]}))
    second = _created(owner_client.post(url, json={"amount_cents": 600}))
    year = _year(clock)
    pdf = owner_client.get(f"{url}/{first['id']}/credit-note")
    assert pdf.status_code == 200 and pdf.mimetype == "application/pdf"
    assert f"CN-{year}-000001".encode() in pdf.data
    assert f"INV-{year}-000001".encode() in pdf.data  # it refers to the invoice
    assert (
        f"CN-{year}-000002".encode() in owner_client.get(f"{url}/{second['id']}/credit-note").data
    )
    assert customer_client.get(f"{url}/{first['id']}/credit-note").status_code == 200
    assert owner_client.get(f"{url}/nosuchrefund/credit-note").status_code == 404
    # A restock alone gives no money back: no credit note.
    restock = _created(owner_client.post(url, json={"restock": [{"line": 1, "quantity": 1}]}))
    assert owner_client.get(f"{url}/{restock['id']}/credit-note").status_code == 409
    export = owner_client.get("/invoices/export")
    assert export.status_code == 200 and export.mimetype == "text/csv"
    rows = list(csv.DictReader(io.StringIO(export.get_data(as_text=True))))
    assert [(r["type"], r["number"]) for r in rows] == [
        ("invoice", f"INV-{year}-000001"),
        ("credit_note", f"CN-{year}-000001"),
        ("credit_note", f"CN-{year}-000002"),
    ]
    invoice, unit, amount = rows
    # 3 x 12.00 + 6.00 = 42.00 gross with 7.00 of tax; one unit back: 12.00, 2.00 of tax.
    assert (invoice["net_20"], invoice["tax_20"], invoice["gross"]) == ("35.00", "7.00", "42.00")
    assert (unit["net_20"], unit["tax_20"], unit["gross"]) == ("-10.00", "-2.00", "-12.00")
    assert unit["invoice"] == f"INV-{year}-000001"
    assert (amount["net_20"], amount["tax_20"], amount["gross"]) == ("-5.00", "-1.00", "-6.00")
    assert unit["customer"] == "Casey Customer" and unit["email"] == "customer@example.com"


def test_invoiced_at_the_first_shipment_and_a_refund_before_it(
    app, clock, owner_client, customer_client, taxed
):
    set_setting(app, "invoice_on", "shipment")
    order = _order(app, customer_client, taxed)
    assert _pay(owner_client, order["id"])["invoice_number"] is None
    shipment = {
        "carrier": "La Poste",
        "tracking_number": "LP1",
        "lines": [{"line": 1, "quantity": 1}],
    }
    shipped = _created(owner_client.post(f"/orders/{order['id']}/shipments", json=shipment))
    assert shipped["invoice_number"] == f"INV-{_year(clock)}-000001"
    # Another order refunded before it ships: invoiced first, then credited.
    other = _order(app, customer_client, taxed)
    _pay(owner_client, other["id"])
    refund = _created(
        owner_client.post(f"/orders/{other['id']}/refunds", json={"amount_cents": 100})
    )
    assert owner_client.get(f"/orders/{other['id']}").json["invoice_number"].endswith("000002")
    note = owner_client.get(f"/orders/{other['id']}/refunds/{refund['id']}/credit-note")
    assert note.status_code == 200


def test_the_list_by_period_and_pages(app, clock, owner_client, customer_client, make_key, taxed):
    ids = []
    for _ in range(3):
        order = _order(app, customer_client, taxed)
        _pay(owner_client, order["id"])
        ids.append(order["id"])
        clock.advance(86400)
    first = owner_client.get("/invoices?page_size=2").json
    assert len(first["items"]) == 2 and first["total"] == 3 and first["next_cursor"]
    rest = owner_client.get(f"/invoices?page_size=2&cursor={first['next_cursor']}").json
    assert [i["order_id"] for i in first["items"] + rest["items"]] == ids
    middle = first["items"][1]["issued_at"]
    day = datetime.fromisoformat(middle).date().isoformat()
    narrowed = owner_client.get(f"/invoices?issued_from={day}&issued_before={middle}").json
    assert narrowed["items"] == []
    narrowed = owner_client.get(f"/invoices?issued_from={middle}").json
    assert [i["order_id"] for i in narrowed["items"]] == ids[1:]
    assert customer_client.get("/invoices").status_code == 403
    assert make_key("read:product").get("/invoices/export").status_code == 403
    assert make_key("read:order").get("/invoices").status_code == 200
    bad = owner_client.get("/invoices?issued_from=yesterday")
    assert bad.status_code == 400 and "issued_from" in bad.json["message"]


def test_a_line_wider_than_the_page_wraps_and_loses_no_word(
    app, owner_client, customer_client, taxed
):
    """A line that fits is drawn as one cell, a wider one is broken over several (the PDF's
    text stays readable: uncompressed)."""
    words = [f"Courtyard{n}" for n in range(16)]  # ~170 characters at 10 pt: wider than A4
    set_setting(app, "address", " ".join(words) + "\n75002 Paris")
    order = _order(app, customer_client, taxed)
    _pay(owner_client, order["id"])
    data = owner_client.get(f"/orders/{order['id']}/invoice").data
    shown = [chunk.split(b")")[0] for chunk in data.split(b"(")[1:] if b") Tj" in chunk]
    carrying = [text for text in shown if b"Courtyard" in text]
    assert len(carrying) >= 2  # broken over lines
    assert b" ".join(carrying).split() == [word.encode() for word in words]
    assert b"75002 Paris" in shown  # the line that fits, whole
