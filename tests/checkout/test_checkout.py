"""Checkout: prices from the database, stock taken in one transaction, idempotent retries,
the rate limit."""

import json
import secrets

import pytest

from tests.conftest import REDIS_URL
from tests.orders_helpers import ADDRESS, add_product, basket, count, product_row, set_setting

ORDER_TABLES = ("orders", "order_items", "payments", "order_status_history", "idempotency_keys")


def UNTAXED(total):  # noqa: N802 - reads as the constant it stands for
    """The pricing fields of a line with no discount and no tax rate (issue 26)."""
    return {"discount_cents": 0, "tax_cents": 0, "tax_rate": None, "total_cents": total}


def snapshot(app):
    """How many rows each order table holds."""
    return {table: count(app, table) for table in ORDER_TABLES}


def test_checkout_places_a_pending_order_priced_from_the_database(app, customer_client):
    teapot = add_product(app, "Teapot", price_cents=2500, stock=10, sku="TP-1")
    cups = add_product(app, "Cups", price_cents=799, stock=4)
    response = customer_client.post("/payments/checkout", json=basket((teapot, 2), (cups, 3)))
    assert response.status_code == 201, response.json
    order = response.json
    assert order["number"] == "SO-000001"
    assert order["status"] == "pending"
    assert order["customer"] == {
        "id": customer_client.user["id"],
        "email": "customer@example.com",
        "name": "Casey Customer",
    }
    assert order["items"] == [
        {
            "line": 1,
            "product_id": teapot,
            "variant_id": teapot,  # the default variant has the product's id
            "name": "Teapot",
            "sku": "TP-1",
            "options": {},
            "unit_price_cents": 2500,
            "quantity": 2,
            "line_total_cents": 5000,
            **UNTAXED(5000),
        },
        {
            "line": 2,
            "product_id": cups,
            "variant_id": cups,
            "name": "Cups",
            "sku": None,
            "options": {},
            "unit_price_cents": 799,
            "quantity": 3,
            "line_total_cents": 2397,
            **UNTAXED(2397),
        },
    ]
    assert order["subtotal_cents"] == order["total_cents"] == 7397
    assert order["shipments"] == []
    assert order["currency"] == "EUR"
    assert order["shipping_address"] == {**ADDRESS, "line2": None, "region": None}
    assert order["payment"] == {
        "provider": "manual",
        "amount_cents": 7397,
        "status": "pending",
        "reference": "SO-000001",
        "client_secret": None,
    }
    [entry] = order["status_history"]
    assert entry["status"] == "pending"
    assert entry["by"]["kind"] == "customer" and entry["by"]["id"] == customer_client.user["id"]
    assert entry["at"].endswith("Z") and order["created_at"].endswith("Z")
    assert product_row(app, teapot)["stock"] == 8
    assert product_row(app, cups)["stock"] == 1
    assert customer_client.get(f"/orders/{order['id']}").json == order


def test_prices_cannot_come_from_the_request(app, customer_client):
    teapot = add_product(app, price_cents=2500)
    body = basket((teapot, 1))
    body["items"][0]["unit_price_cents"] = 1
    response = customer_client.post("/payments/checkout", json=body)
    assert response.status_code == 400
    assert "unit_price_cents" in response.json["message"]
    assert count(app, "orders") == 0


def test_order_numbers_increase_with_the_settings_prefix_and_currency(app, make_customer):
    set_setting(app, "order_number_prefix", "ACME-")
    set_setting(app, "currency", "USD")
    teapot = add_product(app, stock=5)
    numbers = []
    for _ in range(3):
        response = make_customer().post("/payments/checkout", json=basket((teapot, 1)))
        assert response.status_code == 201, response.json
        assert response.json["currency"] == "USD"
        numbers.append(response.json["number"])
    assert numbers == ["ACME-000001", "ACME-000002", "ACME-000003"]


def test_address_is_tidied(app, customer_client):
    teapot = add_product(app)
    address = {**ADDRESS, "city": "  Lyon ", "line2": "Flat 2"}
    response = customer_client.post("/payments/checkout", json=basket((teapot, 1), address=address))
    assert response.status_code == 201, response.json
    assert response.json["shipping_address"]["country"] == "FR"
    assert response.json["shipping_address"]["city"] == "Lyon"
    assert response.json["shipping_address"]["line2"] == "Flat 2"


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda b: b["items"][0].update(quantity=0), "items.0.quantity"),
        (lambda b: b["items"][0].update(quantity=1.5), "items.0.quantity"),
        (lambda b: b["items"][0].update(quantity="2"), "items.0.quantity"),
        (lambda b: b["items"][0].pop("product_id"), "items.0.product_id"),
        (lambda b: b.update(items=[]), "items"),
        (lambda b: b["items"].append(dict(b["items"][0])), "items"),
        (lambda b: b["shipping_address"].update(country="XX"), "shipping_address.country"),
        (lambda b: b["shipping_address"].update(country="FRA"), "shipping_address.country"),
        (lambda b: b["shipping_address"].update(country="fr"), "shipping_address.country"),
        (lambda b: b["shipping_address"].pop("postal_code"), "shipping_address.postal_code"),
        (lambda b: b["shipping_address"].update(name="   "), "shipping_address.name"),
        (lambda b: b.update(payment_method="bitcoin"), "payment_method"),
        (lambda b: b.pop("payment_method"), "payment_method"),
        (lambda b: b.update(coupon="FREE"), "coupon"),
    ],
)
def test_invalid_basket_is_400_naming_the_field(app, customer_client, change, field):
    teapot = add_product(app, stock=3)
    body = basket((teapot, 1))
    change(body)
    response = customer_client.post("/payments/checkout", json=body)
    assert response.status_code == 400
    assert f"{field}:" in response.json["message"]
    assert count(app, "orders") == 0
    assert product_row(app, teapot)["stock"] == 3


def test_unknown_or_inactive_product_is_400_naming_it(app, customer_client):
    teapot = add_product(app, stock=3)
    hidden = add_product(app, "Hidden", stock=3, active=False)
    before = snapshot(app)
    for missing in ("no-such-product", hidden):
        response = customer_client.post(
            "/payments/checkout", json=basket((teapot, 1), (missing, 1))
        )
        assert response.status_code == 400
        assert missing in response.json["message"]
    assert snapshot(app) == before
    assert product_row(app, teapot)["stock"] == 3
    assert product_row(app, hidden)["stock"] == 3


def test_not_enough_stock_is_409_naming_it_and_takes_nothing(app, customer_client):
    plenty = add_product(app, "Plenty", stock=50)
    scarce = add_product(app, "Scarce", stock=2)
    before = snapshot(app)
    response = customer_client.post("/payments/checkout", json=basket((plenty, 5), (scarce, 3)))
    assert response.status_code == 409
    assert scarce in response.json["message"] and "Scarce" in response.json["message"]
    assert snapshot(app) == before
    assert product_row(app, plenty)["stock"] == 50
    assert product_row(app, scarce)["stock"] == 2
    assert customer_client.post("/payments/checkout", json=basket((scarce, 2))).status_code == 201
    assert product_row(app, scarce)["stock"] == 0


def test_checkout_needs_a_signed_in_customer(app, client, owner_client):
    teapot = add_product(app)
    assert client.post("/payments/checkout", json=basket((teapot, 1))).status_code == 401
    response = owner_client.post("/payments/checkout", json=basket((teapot, 1)))
    assert response.status_code == 403
    assert product_row(app, teapot)["stock"] == 10


# -- Idempotency-Key ---------------------------------------------------------------------


def test_retry_with_the_same_key_returns_the_same_order_and_writes_nothing(
    app, customer_client, sql_count
):
    teapot = add_product(app, stock=5)
    body = basket((teapot, 2))
    first = customer_client.post("/payments/checkout", json=body, headers={"Idempotency-Key": "k1"})
    assert first.status_code == 201
    before = snapshot(app)
    # The same body with its keys in another order and other spacing is the same request.
    raw = json.dumps(dict(reversed(list(body.items()))), indent=2)
    with sql_count() as counted:
        retry = customer_client.post(
            "/payments/checkout",
            data=raw,
            headers={"Idempotency-Key": "k1", "Content-Type": "application/json"},
        )
    assert retry.status_code == 200
    assert retry.json == first.json
    assert counted["writes"] == 0
    assert snapshot(app) == before
    assert product_row(app, teapot)["stock"] == 3


def test_same_key_with_another_body_is_409(app, customer_client):
    teapot = add_product(app, stock=5)
    headers = {"Idempotency-Key": "k1"}
    assert (
        customer_client.post(
            "/payments/checkout", json=basket((teapot, 1)), headers=headers
        ).status_code
        == 201
    )
    before = snapshot(app)
    response = customer_client.post("/payments/checkout", json=basket((teapot, 2)), headers=headers)
    assert response.status_code == 409
    assert "Idempotency-Key" in response.json["message"]
    assert snapshot(app) == before
    assert product_row(app, teapot)["stock"] == 4


def test_keys_last_24_hours_and_belong_to_one_customer(app, make_customer, clock):
    teapot = add_product(app, stock=5)
    alice, bob = make_customer(), make_customer()
    headers = {"Idempotency-Key": "same"}
    body = basket((teapot, 1))
    first = alice.post("/payments/checkout", json=body, headers=headers)
    other = bob.post("/payments/checkout", json=body, headers=headers)
    assert first.status_code == other.status_code == 201
    assert first.json["id"] != other.json["id"]
    clock.advance(24 * 3600 - 1)
    assert (
        alice.post("/payments/checkout", json=body, headers=headers).json["id"]
        == (first.json["id"])
    )
    clock.advance(2)
    later = alice.post("/payments/checkout", json=body, headers=headers)
    assert later.status_code == 201
    assert later.json["id"] != first.json["id"]
    assert product_row(app, teapot)["stock"] == 2


def test_failed_checkout_does_not_use_up_the_key(app, customer_client):
    teapot = add_product(app, stock=1)
    headers = {"Idempotency-Key": "retry-me"}
    body = basket((teapot, 2))
    assert customer_client.post("/payments/checkout", json=body, headers=headers).status_code == (
        409
    )
    with app.app_context():
        from shop import db

        db.execute("UPDATE products SET stock = 2 WHERE id = :id", {"id": teapot})
    assert customer_client.post("/payments/checkout", json=body, headers=headers).status_code == (
        201
    )


def test_overlong_idempotency_key_is_400(app, customer_client):
    teapot = add_product(app)
    response = customer_client.post(
        "/payments/checkout", json=basket((teapot, 1)), headers={"Idempotency-Key": "k" * 256}
    )
    assert response.status_code == 400
    assert "Idempotency-Key" in response.json["message"]
    assert count(app, "orders") == 0


# -- rate limit --------------------------------------------------------------------------


@pytest.mark.parametrize("storage", ["memory", "redis"])
def test_eleventh_checkout_in_a_minute_is_429(make_app, storage):
    overrides = {"RATELIMIT_ENABLED": True, "RATELIMIT_KEY_PREFIX": f"t5-{secrets.token_hex(6)}"}
    if storage == "redis":
        if not REDIS_URL:
            pytest.skip("Redis case: SHOP_TEST_REDIS_URL is not set")
        overrides["REDIS_URL"] = REDIS_URL
    app = make_app(**overrides)
    teapot = add_product(app, stock=100)
    client = app.test_client()
    response = client.post(
        "/auth/register",
        json={"email": "limit@example.com", "password": "correct horse battery", "name": "L"},
    )
    assert response.status_code == 201
    # Invalid requests count too.
    for i in range(10):
        body = basket((teapot, 1)) if i % 2 else {"items": []}
        response = client.post("/payments/checkout", json=body)
        assert response.status_code == (201 if i % 2 else 400)
    response = client.post("/payments/checkout", json=basket((teapot, 1)))
    assert response.status_code == 429
    assert set(response.json) == {"message"}
    assert int(response.headers["Retry-After"]) >= 1
    assert product_row(app, teapot)["stock"] == 95
    # Another address has its own allowance.
    other = client.post(
        "/payments/checkout", json=basket((teapot, 1)), environ_base={"REMOTE_ADDR": "10.9.9.9"}
    )
    assert other.status_code == 201
