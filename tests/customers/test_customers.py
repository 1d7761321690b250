"""Customers as administrators manage them: list, detail with order count, deactivate,
erase (orders stay, anonymised)."""

from tests.conftest import PASSWORD
from tests.orders_helpers import add_product, basket


def checkout(app, client, status_client=None, to=None):
    """Place an order for ``client``; optionally move it along with ``status_client``."""
    product = add_product(app)
    order = client.post("/payments/checkout", json=basket((product, 1))).json
    for step in to or ():
        response = status_client.patch(f"/orders/{order['id']}/status", json={"status": step})
        assert response.status_code == 200, response.json
    return order


def test_customers_list_newest_first_with_search(owner_client, make_customer, clock):
    make_customer(email="ada@example.com", name="Ada Lovelace")
    clock.advance(10)
    make_customer(email="grace@example.com", name="Grace Hopper")
    clock.advance(10)
    make_customer(email="alan@turing.example", name="Alan")
    listed = owner_client.get("/customers").json
    assert [c["email"] for c in listed["items"]] == [
        "alan@turing.example",
        "grace@example.com",
        "ada@example.com",
    ]
    assert listed["total"] == 3
    item = listed["items"][0]
    assert set(item) == {"id", "email", "name", "active", "order_count", "created_at", "updated_at"}
    assert "password_hash" not in str(listed)

    def emails(q):
        listed = owner_client.get("/customers", query_string={"q": q}).json
        return [c["email"] for c in listed["items"]]

    assert emails("HOPPER") == ["grace@example.com"]
    assert emails("example.com") == ["grace@example.com", "ada@example.com"]
    assert emails("turing") == ["alan@turing.example"]
    assert emails("%") == []


def test_customer_detail_counts_orders(app, owner_client, customer_client):
    customer_id = customer_client.user["id"]
    assert owner_client.get(f"/customers/{customer_id}").json["order_count"] == 0
    checkout(app, customer_client)
    checkout(app, customer_client)
    detail = owner_client.get(f"/customers/{customer_id}").json
    assert detail["order_count"] == 2
    assert detail["email"] == "customer@example.com"
    assert owner_client.get("/customers/nope").status_code == 404


def test_customer_renames_themselves(customer_client, owner_client):
    response = customer_client.patch("/auth/me", json={"name": "Casey Renamed"})
    assert response.status_code == 200
    detail = owner_client.get(f"/customers/{customer_client.user['id']}").json
    assert detail["name"] == "Casey Renamed"


def test_deactivating_a_customer_ends_their_sessions(app, owner_client, customer_client):
    customer_id = customer_client.user["id"]
    response = owner_client.patch(f"/customers/{customer_id}", json={"active": False})
    assert response.status_code == 200
    assert response.json["active"] is False
    assert customer_client.get("/auth/me").status_code == 401
    product = add_product(app)
    assert customer_client.post("/payments/checkout", json=basket((product, 1))).status_code == 401
    login = app.test_client().post(
        "/auth/login", json={"email": "customer@example.com", "password": PASSWORD}
    )
    assert login.status_code == 401
    owner_client.patch(f"/customers/{customer_id}", json={"active": True, "name": "Back"})
    login = app.test_client().post(
        "/auth/login", json={"email": "customer@example.com", "password": PASSWORD}
    )
    assert login.status_code == 200
    assert login.json["name"] == "Back"
    log = owner_client.get("/audit-log", query_string={"event": "customer.updated"}).json
    assert [entry["details"].get("active") for entry in log["items"]] == [True, False]


def test_patch_validates_fields(owner_client, customer_client):
    url = f"/customers/{customer_client.user['id']}"
    assert owner_client.patch(url, json={"name": "  "}).status_code == 400
    assert owner_client.patch(url, json={"email": "x@example.com"}).status_code == 400
    assert owner_client.patch(url, json={"active": 0}).status_code == 400
    assert owner_client.patch("/customers/nope", json={"name": "X"}).status_code == 404


def test_deleting_a_customer_erases_them_and_keeps_orders_anonymised(
    app, owner_client, customer_client
):
    customer_id = customer_client.user["id"]
    order = checkout(app, customer_client, owner_client, to=["paid", "shipped", "delivered"])
    mistyped = app.test_client().post(
        "/auth/login",
        json={"email": "Customer@Example.com", "password": "wrong-password"},
        headers={"User-Agent": "Ada's phone"},
    )
    assert mistyped.status_code == 401
    assert owner_client.delete(f"/customers/{customer_id}").status_code == 204
    assert owner_client.get(f"/customers/{customer_id}").status_code == 404
    assert owner_client.delete(f"/customers/{customer_id}").status_code == 404
    assert owner_client.get("/customers").json["total"] == 0
    log = owner_client.get("/audit-log", query_string={"page_size": 100}).json["items"]
    assert "customer@example.com" not in str(log).lower() and "Ada's phone" not in str(log)
    failed = [entry for entry in log if entry["event"] == "login.failed"]
    assert [entry["details"] for entry in failed] == [{"email": None}]
    assert customer_client.get("/auth/me").status_code == 401
    login = app.test_client().post(
        "/auth/login", json={"email": "customer@example.com", "password": PASSWORD}
    )
    assert login.status_code == 401
    kept = owner_client.get(f"/orders/{order['id']}").json
    assert kept["customer"] == {"id": customer_id, "email": None, "name": None}
    assert kept["shipping_address"] is None
    assert kept["items"] == order["items"] and kept["total_cents"] == order["total_cents"]
    assert kept["status"] == "delivered"
    assert all(h["by"]["label"] != "customer@example.com" for h in kept["status_history"])
    # The email is free again.
    again = app.test_client().post(
        "/auth/register", json={"email": "customer@example.com", "password": PASSWORD, "name": "C"}
    )
    assert again.status_code == 201


def test_customer_with_an_open_order_cannot_be_erased(app, owner_client, customer_client):
    customer_id = customer_client.user["id"]
    order = checkout(app, customer_client, owner_client, to=["paid"])
    response = owner_client.delete(f"/customers/{customer_id}")
    assert response.status_code == 409
    assert order["number"] in response.json["message"]
    assert owner_client.get(f"/customers/{customer_id}").status_code == 200
    owner_client.patch(f"/orders/{order['id']}/status", json={"status": "refunded"})
    assert owner_client.delete(f"/customers/{customer_id}").status_code == 204


def test_customer_routes_need_their_permissions(make_admin, make_key, customer_client, client):
    customer_id = customer_client.user["id"]
    editor = make_admin("editor")
    assert editor.get("/customers").status_code == 403
    assert editor.patch(f"/customers/{customer_id}", json={"name": "X"}).status_code == 403
    assert editor.delete(f"/customers/{customer_id}").status_code == 403
    assert customer_client.get("/customers").status_code == 403
    assert client.get("/customers").status_code == 401
    support = make_admin("support")
    assert support.get(f"/customers/{customer_id}").status_code == 200
    reader = make_key("read:customer")
    assert reader.get("/customers").json["total"] == 1
    assert reader.delete(f"/customers/{customer_id}").status_code == 403
