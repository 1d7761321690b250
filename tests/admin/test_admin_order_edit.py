"""The console's "Edit order" page (issue 41) through the test client: preview then confirm
(one edit under a resent form), the refused edit's message, and ``orders.edit``."""

from admin_helpers import console_client, hidden_fields

from tests.orders_helpers import add_product, basket, product_row


def _paid(app, customer_client, owner_client):
    teapot = add_product(app, "Teapot", price_cents=2500, stock=10, sku="TEA-1")
    cup = add_product(app, "Cup", price_cents=900, stock=10, sku="CUP-1")
    order = customer_client.post("/payments/checkout", json=basket((teapot, 2), (cup, 1))).json
    marked = owner_client.patch(f"/orders/{order['id']}/status", json={"status": "paid"})
    assert marked.status_code == 200
    return order, teapot, cup


def test_preview_then_confirm_edits_once(app, customer_client, owner_client, make_admin):
    order, teapot, cup = _paid(app, customer_client, owner_client)
    owner = console_client(app, owner_client.email)
    page = owner.get(f"/admin/orders/{order['id']}")
    assert 'id="edit-order-link"' in page.text
    url = f"/admin/orders/{order['id']}/edit"
    form = owner.get(url)
    assert form.status_code == 200 and 'id="quantity-1"' in form.text
    fields = {**hidden_fields(form.text), "quantity-1": "1", "quantity-2": "0"}
    fields |= {"add_sku": "CUP-1", "action": "preview"}
    refused = owner.post(url, data=fields)  # the cup is line 2 already
    assert refused.status_code == 400 and "line 2 already" in refused.text
    fields["add_sku"] = ""
    preview = owner.post(url, data=fields)
    assert preview.status_code == 200, preview.text[preview.text.find("alert") :][:300]
    assert 'id="confirm-edit"' in preview.text
    assert "€25.00" in preview.text and 'id="edit-refund"' in preview.text
    confirm = {**hidden_fields(preview.text), "quantity-1": "1", "quantity-2": "0"}
    confirm["action"] = "confirm"
    done = owner.post(url, data=confirm)
    assert done.status_code == 303, done.text
    again = owner.post(url, data=confirm)  # the same form resent: the same edit
    assert again.status_code == 303
    assert "Order edited." in owner.get(done.headers["Location"]).text
    assert len(owner_client.get(f"/orders/{order['id']}/edits").json["items"]) == 1
    assert [
        r["amount_cents"] for r in owner_client.get(f"/orders/{order['id']}/refunds").json["items"]
    ] == [3400]
    assert product_row(app, teapot)["stock"] == 9 and product_row(app, cup)["stock"] == 10
    reader = console_client(app, make_admin("support", email="s@example.com").email)
    assert reader.get(url).status_code == 200  # support holds orders.edit
    viewer = owner_client.post("/roles", json={"name": "viewer", "permissions": ["orders.read"]})
    assert viewer.status_code == 201
    looker = console_client(app, make_admin("viewer", email="v@example.com").email)
    assert 'id="edit-order-link"' not in looker.get(f"/admin/orders/{order['id']}").text
    assert looker.get(url).status_code == 403
