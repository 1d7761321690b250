"""The console's Orders pages (issue 27) through the test client: the list's filter, search
and pages; the order page; mark paid, ship and cancel with their CSRF tokens; the same
permissions as the JSON API."""

import pytest
from admin_helpers import console_client, hidden_fields, submit

from tests.orders_helpers import add_product, basket


@pytest.fixture
def owner(app, owner_client):
    """The owner, signed in to the console."""
    return console_client(app, owner_client.email)


@pytest.fixture
def order(app, customer_client):
    """A pending order of 2 teapots and 1 cup."""
    teapot, cup = add_product(app, "Teapot", stock=10), add_product(app, "Cup", stock=10)
    response = customer_client.post("/payments/checkout", json=basket((teapot, 2), (cup, 1)))
    assert response.status_code == 201, response.json
    return response.json


def page_of(order) -> str:
    return f"/admin/orders/{order['id']}"


def act(client, order, action, **fields):
    """Post one of the order page's forms with the page's own token."""
    return submit(client, page_of(order), f"{page_of(order)}/{action}", **fields)


def test_list_filters_searches_and_pages(app, owner, owner_client, order, make_customer):
    other = make_customer(email="zed@example.org", name="Zed")
    product = add_product(app, stock=50)
    for _ in range(26):  # one more than a page
        assert other.post("/payments/checkout", json=basket((product, 1))).status_code == 201
    owner_client.patch(f"/orders/{order['id']}/status", json={"status": "paid"})
    listed = owner.get("/admin/orders")
    assert listed.status_code == 200
    assert "Page 1 of 2" in listed.text and listed.text.count('<tr id="order-') == 25
    assert 'rel="next"' in owner.get("/admin/orders").text
    assert owner.get("/admin/orders?page=2").text.count('<tr id="order-') == 2
    paid = owner.get("/admin/orders?status=paid").text
    assert paid.count('<tr id="order-') == 1 and order["number"] in paid
    assert f"order-{order['id']}" in owner.get("/admin/orders?q=CUSTOMER@EXAMPLE").text
    by_number = owner.get(f"/admin/orders?q={order['number'][-4:]}").text
    assert f"order-{order['id']}" in by_number
    assert "No order matches." in owner.get("/admin/orders?q=nobody%25").text
    # Unknown filters and pages fall back rather than fail.
    assert owner.get("/admin/orders?status=bogus&page=x").status_code == 200


def test_mark_paid_ship_in_two_parts_then_the_page_shows_it_all(app, owner, order):
    shown = owner.get(page_of(order)).text
    assert "Mark paid" in shown and "Cancel order" in shown and 'id="ship"' not in shown
    assert act(owner, order, "paid", note="Transfer 2211").status_code == 303
    shown = owner.get(page_of(order) + "?done=paid").text
    assert "Marked paid." in shown and "Transfer 2211" in shown and "Mark paid" not in shown
    line = order["items"][0]["line"]
    first = act(
        owner,
        order,
        "shipments",
        carrier="UPS",
        tracking_number="1Z1",
        tracking_url="https://ups.example/1Z1",
        partial="1",
        **{f"line-{line}": "1"},
    )
    assert first.status_code == 303, first.text
    assert owner.get(page_of(order)).text.count("partially shipped") >= 2  # status, history
    rest = act(owner, order, "shipments", carrier="DHL", tracking_number="JD2")
    assert rest.status_code == 303, rest.text
    page = owner.get(page_of(order)).text
    assert 'id="order-status">shipped' in page
    assert 'href="https://ups.example/1Z1"' in page and "JD2" in page
    assert 'id="ship"' not in page  # nothing left to ship


def test_refused_actions_show_the_message_on_the_page(owner, order):
    pending = act(owner, order, "shipments", carrier="UPS", tracking_number="1")
    assert pending.status_code == 409 and "only a paid or partially shipped" in pending.text
    assert act(owner, order, "paid").status_code == 303
    bad = act(owner, order, "shipments", carrier="UPS", tracking_number="1", tracking_url="ftp://x")
    assert bad.status_code == 400 and "Tracking link" in bad.text
    over = act(owner, order, "shipments", carrier="UPS", tracking_number="1", **{"line-1": "3"})
    assert over.status_code == 409 and "left to ship" in over.text
    # Cancelling a paid order is not a move the lifecycle allows: neither its page nor a post.
    assert owner.get(f"{page_of(order)}/cancel").status_code == 409
    assert act(owner, order, "cancel", confirm="yes").status_code == 409


def test_forged_posts_are_refused_then_cancel_works(owner, owner_client, order):
    for action in ("paid", "cancel", "shipments"):
        forged = owner.post(
            f"{page_of(order)}/{action}",
            data={"csrf_token": "0" * 64, "carrier": "X", "tracking_number": "1"},
        )
        assert forged.status_code == 403 and "did not come from this console" in forged.text
    assert owner_client.get(f"/orders/{order['id']}").json["status"] == "pending"
    # The order page's button only asks: the confirm page's own form cancels.
    asked = act(owner, order, "cancel")
    assert asked.status_code == 200 and "Yes, cancel the order" in asked.text
    assert owner_client.get(f"/orders/{order['id']}").json["status"] == "pending"
    cancel = f"{page_of(order)}/cancel"
    assert submit(owner, cancel, cancel).status_code == 303
    assert owner_client.get(f"/orders/{order['id']}").json["status"] == "cancelled"


def test_permissions_as_in_the_api(app, make_admin, owner_client, order):
    reader = make_admin("editor", permissions=["orders.read"])
    reading = console_client(app, reader.email)
    shown = reading.get(page_of(order))
    assert shown.status_code == 200 and "Mark paid" not in shown.text
    token = hidden_fields(shown.text)["csrf_token"]
    refused = reading.post(f"{page_of(order)}/paid", data={"csrf_token": token})
    assert refused.status_code == 403 and "orders.update_status" in refused.text
    assert owner_client.get(f"/orders/{order['id']}").json["status"] == "pending"
    editor = console_client(app, make_admin("editor").email)
    assert editor.get("/admin/orders").status_code == 403
    assert editor.get(page_of(order)).status_code == 403
    assert "/admin/orders" not in editor.get("/admin/api-keys").text


def test_the_pages_send_the_consoles_headers_and_no_inline_script(owner, order):
    from test_admin_console import CSP

    for response in (owner.get("/admin/orders"), owner.get(page_of(order))):
        assert response.status_code == 200
        assert response.headers["Content-Security-Policy"] == CSP
        assert response.headers["Cache-Control"] == "no-store"
        assert "<script>" not in response.text and "style=" not in response.text
