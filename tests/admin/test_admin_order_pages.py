"""The console's finished order pages and dashboard (issue 37) through the test client: the
list's payment, fulfilment and date filters and the search by customer name; the order
page's order of actions, Mark delivered, internal notes, resending the e-mail, the packing
slip and the cancel that asks first; the dashboard's figures."""

import pytest
from admin_helpers import console_client, hidden_fields, submit

from shop import db
from tests.admin.test_admin_orders import act, page_of
from tests.orders_helpers import ADDRESS, add_product, basket, catalogue_client


@pytest.fixture
def owner(app, owner_client):
    """The owner, signed in to the console."""
    return console_client(app, owner_client.email)


def _order(app, customer, owner_client, to=("paid",), sku="TEA-9") -> dict:
    """An order of 2 teapots (SKU ``sku``) and 1 cup, moved along ``to`` through the API."""
    teapot = add_product(app, "Teapot", price_cents=3200, stock=10, sku=sku)
    cup = add_product(app, "Cup", price_cents=900, stock=10)
    placed = customer.post("/payments/checkout", json=basket((teapot, 2), (cup, 1)))
    assert placed.status_code == 201, placed.json
    for status in to:
        moved = owner_client.patch(f"/orders/{placed.json['id']}/status", json={"status": status})
        assert moved.status_code == 200, moved.json
    return placed.json


def _listed(client, query: str) -> str:
    response = client.get("/admin/orders?" + query)
    assert response.status_code == 200, response.text
    return response.text


def test_ship_comes_before_refund_and_a_refunded_shipped_order_stays_shipped(
    app, owner, owner_client, customer_client
):
    order = _order(app, customer_client, owner_client)
    page = owner.get(page_of(order)).text
    assert page.index('id="ship"') < page.index('id="refund"')
    assert 'id="deliver"' not in page
    assert act(owner, order, "shipments", carrier="UPS", tracking_number="1Z").status_code == 303
    refund = owner_client.post(
        f"/orders/{order['id']}/refunds", json={"lines": [{"line": 2, "quantity": 1}]}
    )
    assert refund.status_code == 201, refund.json
    page = owner.get(page_of(order)).text
    assert 'id="payment-status">partially refunded' in page
    assert 'id="fulfillment-status">shipped' in page
    assert 'id="ship"' not in page  # nothing left to ship: no empty form
    assert 'id="deliver"' in page
    assert f"order-{order['id']}" in _listed(owner, "fulfillment=shipped")
    assert f"order-{order['id']}" not in _listed(owner, "fulfillment=to_ship")
    assert act(owner, order, "delivered").status_code == 303
    page = owner.get(page_of(order) + "?done=delivered").text
    assert "Marked delivered." in page and 'id="fulfillment-status">delivered' in page
    assert 'id="deliver"' not in page
    # Delivered, refunded in part: the shipped filter still finds it.
    assert f"order-{order['id']}" in _listed(owner, "fulfillment=shipped")
    assert f"order-{order['id']}" in _listed(owner, "fulfillment=delivered")
    assert f"order-{order['id']}" in _listed(owner, "payment=partially_refunded")
    assert f"order-{order['id']}" not in _listed(owner, "payment=paid")


def test_cancel_asks_first(app, owner, owner_client, customer_client):
    order = _order(app, customer_client, owner_client, to=())
    page = owner.get(page_of(order)).text
    assert (
        'id="cancel-link"' in page
        and 'action="/admin/orders/' + order["id"] + '/cancel"' not in page
    )
    asked = owner.get(page_of(order) + "/cancel")
    assert asked.status_code == 200 and "cannot be undone" in asked.text
    assert 'name="confirm" value="yes"' in asked.text
    # A post without the confirm page's answer shows the question again and changes nothing.
    again = owner.post(page_of(order) + "/cancel", data=hidden_fields(page))
    assert again.status_code == 200 and "Yes, cancel the order" in again.text
    assert owner_client.get(f"/orders/{order['id']}").json["status"] == "pending"
    done = submit(owner, page_of(order) + "/cancel", page_of(order) + "/cancel", note="Phoned")
    assert done.status_code == 303
    shown = owner_client.get(f"/orders/{order['id']}").json
    assert (shown["status"], shown["payment_status"]) == ("cancelled", "voided")
    assert shown["status_history"][-1]["note"] == "Phoned"


def test_internal_notes_stay_with_the_staff(app, owner, owner_client, customer_client, make_admin):
    order = _order(app, customer_client, owner_client)
    added = act(owner, order, "notes", body="Gift wrap, the customer phoned.\nLeave at door")
    assert added.status_code == 303, added.text
    page = owner.get(page_of(order)).text
    assert "Gift wrap, the customer phoned." in page and "Leave at door" in page
    blank = act(owner, order, "notes", body="   ")
    assert blank.status_code == 400 and "Note: must not be blank." in blank.text
    for reader in (owner_client, customer_client):
        assert "Gift wrap" not in reader.get(f"/orders/{order['id']}").text
    with app.app_context():
        assert db.value("SELECT COUNT(*) FROM order_notes") == 1
        assert db.value("SELECT COUNT(*) FROM audit_log WHERE event = 'order.note_added'") == 1
    reader = console_client(app, make_admin("editor", permissions=["orders.read"]).email)
    shown = reader.get(page_of(order))
    assert "Gift wrap" in shown.text and 'id="add-note"' not in shown.text
    form = {**hidden_fields(shown.text), "body": "x"}
    refused = reader.post(page_of(order) + "/notes", data=form)
    assert refused.status_code == 403 and "orders.update_status" in refused.text


def test_resend_the_order_mail(app, owner, owner_client, customer_client):
    order = _order(app, customer_client, owner_client)

    def mails():
        with app.app_context():
            return db.value(
                "SELECT COUNT(*) FROM mail_outbox WHERE recipient = :to",
                {"to": "customer@example.com"},
            )

    before = mails()
    assert act(owner, order, "mail").status_code == 303
    assert mails() == before + 1
    page = owner.get(page_of(order) + "?done=mailed").text
    assert "on its way to the customer again" in page


def test_the_packing_slip_has_lines_skus_and_address_and_no_prices(
    app, owner, owner_client, customer_client
):
    order = _order(app, customer_client, owner_client)
    slip = owner.get(page_of(order) + "/packing-slip")
    assert slip.status_code == 200
    text = slip.text
    assert "TEA-9" in text and "Teapot" in text and "Cup" in text
    assert ADDRESS["line1"] in text and ADDRESS["postal_code"] in text and ADDRESS["name"] in text
    for price in ("32.00", "64.00", "9.00", "73.00", "€", "$"):
        assert price not in text, price
    assert "<script>" not in text


def test_list_by_date_and_customer_name(app, owner, owner_client, make_customer, clock):
    clock.advance(-10 * 86400)  # an order of ten days ago, by a Grace who signed in then
    grace = make_customer(email="grace@example.com", name="Grace Hopper")
    old = _order(app, grace, owner_client, to=())
    clock.advance(10 * 86400)
    grace = make_customer(email="grace.h@example.com", name="Grace Hopper")
    new = _order(app, grace, owner_client, to=(), sku="TEA-10")
    assert f"order-{new['id']}" in _listed(owner, "q=hopper")
    assert f"order-{old['id']}" in _listed(owner, "q=Grace+H")
    today = _listed(owner, "placed=today")
    assert f"order-{new['id']}" in today and f"order-{old['id']}" not in today
    week = _listed(owner, "placed=7d")
    assert f"order-{new['id']}" in week and f"order-{old['id']}" not in week
    day = old["created_at"][:10]
    between = _listed(owner, f"from={day}&to={day}")
    assert f"order-{old['id']}" in between and f"order-{new['id']}" not in between
    assert "1 order" in between
    bad = _listed(owner, "from=2027-02-30&placed=range")
    assert "From: give a date as YYYY-MM-DD." in bad and f"order-{old['id']}" in bad
    backwards = _listed(owner, f"from={new['created_at'][:10]}&to={day}")
    assert "the last day comes after the first" in backwards


def test_the_dashboard(app, owner, owner_client, customer_client):
    empty = owner.get("/admin/")
    assert empty.status_code == 200 and "No orders yet." in empty.text
    low = catalogue_client(app).post(
        "/products",
        json={
            "name": "Kettle",
            "price_cents": 4000,
            "stock": 2,
            "sku": "KET-1",
            "low_stock_threshold": 3,
        },
    )
    assert low.status_code == 201, low.json
    paid = _order(app, customer_client, owner_client)  # 2 x 32.00 + 9.00
    _order(app, customer_client, owner_client, to=(), sku=None)  # pending: not in the takings
    page = owner.get("/admin/").text
    assert '<p class="figure" id="orders-today">' in page and ">2 orders<" in page
    assert "€73.00" in page
    assert 'id="to-ship"' in page and ">1 order<" in page
    assert "KET-1" in page and "Kettle" in page
    assert "mail:" in page and "webhooks:" in page
    assert f"order-{paid['id']}" in page
    # The links are the list's own filters.
    assert "/admin/orders?fulfillment=to_ship" in page and "/admin/orders?payment=review" in page
