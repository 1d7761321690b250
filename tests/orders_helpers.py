"""Helpers for the customer, checkout and order tests.

Products and settings are made through the API, as an integration would: with a Bearer key
that ``flask api-keys create`` made for the app under test.
"""

from shop import db

ADDRESS = {
    "name": "Casey Customer",
    "line1": "1 Market Street",
    "city": "Lyon",
    "postal_code": "69001",
    "country": "FR",
}


def catalogue_client(app):
    """A test client with a CLI-made key for products and settings (one key per app)."""
    client = app.extensions.get("tests.catalogue_client")
    if client is None:
        result = app.test_cli_runner().invoke(
            args=[
                "api-keys",
                "create",
                "--name",
                "test catalogue",
                "--scopes",
                "read:product write:product read:setting write:setting",
            ]
        )
        assert result.exit_code == 0, result.output
        client = app.test_client()
        client.environ_base["HTTP_AUTHORIZATION"] = f"Bearer {result.output.split()[-1]}"
        app.extensions["tests.catalogue_client"] = client
    return client


def add_product(app, name="Teapot", price_cents=2500, stock=10, sku=None, active=True) -> str:
    """Create a product through ``POST /products``; answer its id."""
    body = {"name": name, "price_cents": price_cents, "stock": stock, "active": active}
    if sku is not None:
        body["sku"] = sku
    response = catalogue_client(app).post("/products", json=body)
    assert response.status_code == 201, response.json
    return response.json["id"]


def product_row(app, product_id) -> dict:
    """A product as ``GET /products/<id>`` answers it to a key with ``read:product``."""
    response = catalogue_client(app).get(f"/products/{product_id}")
    assert response.status_code == 200, response.json
    return response.json


def set_setting(app, key, value) -> None:
    """Change a site setting through ``PATCH /settings``."""
    response = catalogue_client(app).patch("/settings", json={key: value})
    assert response.status_code == 200, response.json


def count(app, table) -> int:
    """Rows in one of the order tables (to prove that nothing was written)."""
    allowed = ("orders", "order_items", "payments", "order_status_history", "idempotency_keys")
    assert table in allowed
    with app.app_context():
        return db.value(f"SELECT COUNT(*) FROM {table}")


def basket(*lines, address=None, method="manual") -> dict:
    """A checkout body from ``(product_id, quantity)`` pairs."""
    return {
        "items": [{"product_id": pid, "quantity": qty} for pid, qty in lines],
        "shipping_address": dict(address or ADDRESS),
        "payment_method": method,
    }


def return_for_console(app, admin_email: str) -> dict:
    """A requested return of a shipped order by another new customer (through the API, as
    the shop would): for the console-wide page checks."""
    from conftest import PASSWORD, login

    customer, admin = app.test_client(), app.test_client()
    body = {"email": "mary.returns@example.com", "password": PASSWORD, "name": "Mary Jackson"}
    assert customer.post("/auth/register", json=body).status_code == 201
    kettle = add_product(app, "Kettle", price_cents=4500, stock=5, sku="KET-1")
    placed = customer.post("/payments/checkout", json=basket((kettle, 1)))
    assert placed.status_code == 201, placed.json
    order_id = placed.json["id"]
    login(admin, admin_email)
    moved = admin.patch(f"/orders/{order_id}/status", json={"status": "paid"})
    assert moved.status_code == 200, moved.json
    shipped = admin.post(
        f"/orders/{order_id}/shipments", json={"carrier": "UPS", "tracking_number": "1Z42"}
    )
    assert shipped.status_code == 201, shipped.json
    asked = customer.post(
        f"/orders/{order_id}/returns", json={"lines": [{"line": 1, "quantity": 1}]}
    )
    assert asked.status_code == 201, asked.json
    return asked.json


def order_for_console(app, admin_email: str, to=("paid",)) -> dict:
    """An order of two lines by a new customer, moved along ``to`` by ``admin_email``
    (through the API, as the shop would): for the console's browser tests."""
    from conftest import PASSWORD

    customer, admin = app.test_client(), app.test_client()
    body = {"email": "ada@example.com", "password": PASSWORD, "name": "Ada Lovelace"}
    assert customer.post("/auth/register", json=body).status_code == 201
    teapot = add_product(app, "Teapot", price_cents=3200, stock=10, sku="TEA-1")
    cup = add_product(app, "Cup", price_cents=900, stock=10, sku="CUP-1")
    response = customer.post("/payments/checkout", json=basket((teapot, 2), (cup, 3)))
    assert response.status_code == 201, response.json
    login = {"email": admin_email, "password": PASSWORD}
    assert admin.post("/auth/login", json=login).status_code == 200
    for status in to:
        moved = admin.patch(f"/orders/{response.json['id']}/status", json={"status": status})
        assert moved.status_code == 200, moved.json
    return response.json
