"""Every document of an order can be listed and downloaded (issue 41's loose end): an edit's
credit note (no refund of its own) and an edited order's superseded invoice, through HTTP on
both engines, by the invoice's readers (staff with ``orders.read``, the order's customer, a
guest with the order's token)."""

from tests.invoices.test_invoices import _created, _guest_order, _order, _pay, _year, taxed  # noqa: F401

PDF = "application/pdf"


def _edit(client, order_id, body):
    response = client.post(f"/orders/{order_id}/edits", json=body)
    assert response.status_code == 201, response.json
    return response.json


def _pdf(client, url, number):
    response = client.get(url)
    assert response.status_code == 200, (url, response.status_code, response.data[:200])
    assert response.mimetype == PDF and number.encode() in response.data
    assert f'filename="{number}.pdf"' in response.headers["Content-Disposition"]
    return response.data


def test_an_edited_orders_credit_notes_and_invoices_are_listed_and_downloadable(
    app,
    clock,
    owner_client,
    customer_client,
    make_customer,
    make_key,
    taxed,  # noqa: F811
):
    year = _year(clock)
    order = _order(app, customer_client, taxed, lines=((1200, 2), (500, 1)))
    _pay(owner_client, order["id"])
    base = f"/orders/{order['id']}"
    first_invoice = owner_client.get(f"{base}/invoice").data
    # Down (a line removed: a refund of the difference) and up (a unit added: a balance due).
    down = _edit(owner_client, order["id"], {"remove": [{"line": 2}]})
    up = _edit(owner_client, order["id"], {"set_quantity": [{"line": 1, "quantity": 3}]})
    assert up["balance_due_cents"] > 0
    refund = _created(owner_client.post(f"{base}/refunds", json={"amount_cents": 300}))

    listed = owner_client.get(f"{base}/credit-notes")
    assert listed.status_code == 200, listed.json
    notes = listed.json["items"]
    assert [n["number"] for n in notes] == [f"CN-{year}-00000{k}" for k in (1, 2, 3)]
    assert [(n["edit_id"], n["refund_id"]) for n in notes] == [
        (down["id"], None),
        (up["id"], None),
        (None, refund["id"]),
    ]
    # 2 x 12.00 + 5.00 + 6.00 shipping = 35.00 credited by the first edit, then 30.00.
    assert [n["total_cents"] for n in notes] == [3500, 3000, 300]
    assert [n["invoice_number"] for n in notes] == [f"INV-{year}-00000{k}" for k in (1, 2, 3)]
    assert all(n["net_cents"] + n["tax_cents"] == n["total_cents"] for n in notes)
    assert all(n["currency"] == "EUR" and n["issued_at"].endswith("Z") for n in notes)
    for note in notes:  # by number and by id: the same document
        by_number = _pdf(owner_client, f"{base}/credit-notes/{note['number']}", note["number"])
        assert _pdf(owner_client, f"{base}/credit-notes/{note['id']}", note["number"]) == by_number
    # A refund's credit note is the same document by the older route.
    assert _pdf(
        owner_client, f"{base}/refunds/{refund['id']}/credit-note", notes[2]["number"]
    ) == _pdf(owner_client, f"{base}/credit-notes/{notes[2]['number']}", notes[2]["number"])
    # The invoices: the current one is the order's invoice; the superseded stay downloadable,
    # unchanged.
    invoices = owner_client.get(f"{base}/invoices").json["items"]
    assert [(i["number"], i["current"]) for i in invoices] == [
        (f"INV-{year}-000001", False),
        (f"INV-{year}-000002", False),
        (f"INV-{year}-000003", True),
    ]
    assert invoices[0]["superseded_at"] and invoices[2]["superseded_at"] is None
    assert [i["total_cents"] for i in invoices] == [3500, 3000, 4200]
    current = owner_client.get(f"{base}/invoice")
    assert f"INV-{year}-000003".encode() in current.data
    assert owner_client.get(f"{base}").json["invoice_number"] == f"INV-{year}-000003"
    assert _pdf(owner_client, f"{base}/invoices/INV-{year}-000001", invoices[0]["number"]) == (
        first_invoice
    )
    assert _pdf(owner_client, f"{base}/invoices/{invoices[1]['id']}", invoices[1]["number"])

    # Who may: as the invoice.
    other = _order(app, customer_client, taxed)
    _pay(owner_client, other["id"])
    other_invoice = owner_client.get(f"/orders/{other['id']}/invoices").json["items"][0]
    note_url = f"{base}/credit-notes/{notes[0]['number']}"
    for reader in (customer_client, make_key("read:order")):
        assert reader.get(f"{base}/credit-notes").status_code == 200
        assert reader.get(f"{base}/invoices").status_code == 200
        _pdf(reader, note_url, notes[0]["number"])
    for url in (f"{base}/credit-notes", note_url, f"{base}/invoices"):
        assert make_customer().get(url).status_code == 404
        assert make_key("read:product").get(url).status_code == 403
        assert app.test_client().get(url).status_code == 401
        assert app.test_client().get(url + "?token=not-the-token").status_code == 404
    # Another order's document, or no such one, under this order: 404.
    assert owner_client.get(f"{base}/invoices/{other_invoice['number']}").status_code == 404
    assert owner_client.get(f"{base}/credit-notes/CN-{year}-999999").status_code == 404
    assert owner_client.get(f"{base}/credit-notes/{'x' * 300}").status_code == 404
    assert owner_client.get("/orders/nosuchorder/credit-notes").status_code == 404
    assert owner_client.get(f"/orders/{other['id']}/credit-notes").json["items"] == []


def test_a_guest_lists_and_downloads_their_edited_orders_credit_note(
    app,
    owner_client,
    taxed,  # noqa: F811
):
    order, token = _guest_order(app, taxed)
    _pay(owner_client, order["id"])
    _edit(owner_client, order["id"], {"set_quantity": [{"line": 1, "quantity": 2}]})
    guest, base = app.test_client(), f"/orders/{order['id']}"
    (note,) = guest.get(f"{base}/credit-notes?token={token}").json["items"]
    _pdf(guest, f"{base}/credit-notes/{note['number']}?token={token}", note["number"])
    first = guest.get(f"{base}/invoices?token={token}").json["items"][0]
    _pdf(guest, f"{base}/invoices/{first['number']}?token={token}", first["number"])
    assert guest.get(f"{base}/credit-notes/{note['number']}").status_code == 401
    wrong = "x" * len(token)
    assert guest.get(f"{base}/credit-notes/{note['number']}?token={wrong}").status_code == 404
