"""The console's return pages through the test client, on both engines: the list by status,
a return's page with approve / reject / receive, the order page's Returns block, the nav
link, and the permissions they need."""

import pytest
from admin_helpers import console_client, hidden_fields

from tests.orders_helpers import product_row
from tests.returns.test_returns import _ask, _order


@pytest.fixture
def owner(app, owner_client):
    return console_client(app, owner_client.email)


def _post(client, return_id, action, **fields):
    page = client.get(f"/admin/returns/{return_id}")
    assert page.status_code == 200
    return client.post(
        f"/admin/returns/{return_id}/{action}", data={**hidden_fields(page.text), **fields}
    )


def test_list_approve_receive_and_reject_in_the_console(app, owner, customer_client, owner_client):
    order, (teapot,) = _order(app, customer_client, owner_client, lines=((1200, 2),))
    first = _ask(customer_client, order["id"], (1, 2)).json
    listed = owner.get("/admin/returns?status=requested")
    assert listed.status_code == 200 and f"Return of {order['number']}" in listed.text
    assert 'href="/admin/returns"' in owner.get("/admin/orders").text  # the nav link
    assert "No received returns." in owner.get("/admin/returns?status=received").text
    order_page = owner.get(f"/admin/orders/{order['id']}").text
    assert f'href="/admin/returns/{first["id"]}"' in order_page and "requested" in order_page

    done = _post(owner, first["id"], "approve", instructions="Post it to 1 Quay Street")
    assert done.status_code == 303, done.text
    page = owner.get(done.headers["Location"]).text
    assert "Return approved" in page and "1 Quay Street" in page and 'id="receive"' in page
    again = owner.post(
        f"/admin/returns/{first['id']}/approve", data=hidden_fields(page)
    )  # a second approve: refused, on the page
    assert again.status_code == 409 and 'id="action-error"' in again.text

    done = _post(
        owner, first["id"], "receive", **{"received-1": "1", "restock": "1", "refund": "1"}
    )
    assert done.status_code == 303, done.text
    page = owner.get(done.headers["Location"]).text
    assert "Return received." in page and "restocked, refunded" in page
    assert product_row(app, teapot)["stock"] == 9
    refunds = owner_client.get(f"/orders/{order['id']}/refunds").json["items"]
    assert [r["amount_cents"] for r in refunds] == [1200]

    second = _ask(customer_client, order["id"], (1, 1)).json
    blank = _post(owner, second["id"], "reject", reason="  ")
    assert blank.status_code == 400 and "Reason: required" in blank.text
    done = _post(owner, second["id"], "reject", reason="Opened and used")
    assert done.status_code == 303
    assert "Opened and used" in owner.get(done.headers["Location"]).text


def test_the_pages_need_returns_read_and_the_actions_returns_update(
    app, make_admin, customer_client, owner_client
):
    order, _ = _order(app, customer_client, owner_client)
    ret = _ask(customer_client, order["id"], (1, 1)).json
    editor = console_client(app, make_admin("editor").email)
    assert editor.get("/admin/returns").status_code == 403
    assert editor.get(f"/admin/returns/{ret['id']}").status_code == 403
    sessions = editor.get("/admin/sessions")
    assert sessions.status_code == 200 and 'href="/admin/returns"' not in sessions.text
    reader = console_client(app, make_admin("editor", permissions=["returns.read"]).email)
    page = reader.get(f"/admin/returns/{ret['id']}")
    assert page.status_code == 200 and 'id="approve"' not in page.text
    refused = reader.post(f"/admin/returns/{ret['id']}/approve", data=hidden_fields(page.text))
    assert refused.status_code == 403
    assert owner_client.get(f"/returns/{ret['id']}").json["status"] == "requested"
