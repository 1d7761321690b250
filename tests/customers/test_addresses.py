"""A customer's address book (issue 38): `/auth/me/addresses` with one default of each kind,
ownership in the SQL (another's address is a 404), the checkout's address rules, checkout and
quote by `shipping_address_id`, erasure, and the 400 for a country no method ships to."""

import pytest

from shop.customers import addresses
from tests.orders_helpers import ADDRESS, add_product, basket

HOME = {**ADDRESS, "line2": "Flat 3", "region": "ara"}
WORK = {"name": "Casey at work", "line1": "9 Rue Neuve", "city": "Paris", "postal_code": "75002",
        "country": "FR"}  # fmt: skip


def add(client, body, status=201) -> dict:
    response = client.post("/auth/me/addresses", json=body)
    assert response.status_code == status, response.json
    return response.json


def flags(client) -> dict:
    """Each address's name -> (default_shipping, default_billing)."""
    items = client.get("/auth/me/addresses").json["items"]
    return {a["name"]: (a["default_shipping"], a["default_billing"]) for a in items}


def test_the_address_book_keeps_one_default_of_each_kind(customer_client):
    assert customer_client.get("/auth/me/addresses").json["items"] == []
    home = add(customer_client, HOME)
    # The checkout's tidying: spaces trimmed, region in capitals; the first is both defaults.
    assert {k: home[k] for k in HOME} == {**HOME, "region": "ARA"}
    assert (home["default_shipping"], home["default_billing"]) == (True, True)
    work = add(customer_client, {**WORK, "default_shipping": True})
    assert work["line2"] is None and work["region"] is None
    assert flags(customer_client) == {
        "Casey Customer": (False, True),
        "Casey at work": (True, False),
    }
    changed = customer_client.patch(
        f"/auth/me/addresses/{work['id']}", json={"default_billing": True, "city": " Lille "}
    )
    assert changed.status_code == 200, changed.json
    assert (changed.json["city"], changed.json["line1"]) == ("Lille", "9 Rue Neuve")
    assert flags(customer_client) == {
        "Casey Customer": (False, False),
        "Casey at work": (True, True),
    }
    cleared = customer_client.patch(
        f"/auth/me/addresses/{home['id']}", json={"region": None, "line2": None}
    )
    assert (cleared.json["region"], cleared.json["line2"]) == (None, None)
    assert customer_client.get(f"/auth/me/addresses/{home['id']}").json == cleared.json
    off = customer_client.patch(
        f"/auth/me/addresses/{work['id']}", json={"default_shipping": False}
    )
    assert off.json["default_shipping"] is False
    assert customer_client.delete(f"/auth/me/addresses/{work['id']}").status_code == 204
    assert customer_client.get(f"/auth/me/addresses/{work['id']}").status_code == 404
    assert flags(customer_client) == {"Casey Customer": (False, False)}  # no default left


@pytest.mark.parametrize(
    "body, message",
    [
        ({**WORK, "country": "XX"}, "country: Use an ISO 3166-1 alpha-2 code"),
        ({k: v for k, v in WORK.items() if k != "name"}, "name: Missing data for required field."),
        ({**WORK, "city": "   "}, "city: Must not be blank."),
        ({**WORK, "default_billing": "yes"}, "default_billing: Not a valid boolean."),
        ({**WORK, "phone": "1"}, "phone: Unknown field."),
    ],
)
def test_an_address_follows_the_checkouts_rules(customer_client, body, message):
    response = customer_client.post("/auth/me/addresses", json=body)
    assert response.status_code == 400 and message in response.json["message"], response.json
    home = add(customer_client, HOME)
    for bad, said in [({}, "nothing to change"), ({"postal_code": ""}, "postal_code: Length")]:
        refused = customer_client.patch(f"/auth/me/addresses/{home['id']}", json=bad)
        assert refused.status_code == 400 and said in refused.json["message"], refused.json
    assert customer_client.get(f"/auth/me/addresses/{home['id']}").json == home  # unchanged


def test_another_customers_address_is_a_404(app, customer_client, make_customer, owner_client):
    home = add(customer_client, HOME)
    other = make_customer()
    path = f"/auth/me/addresses/{home['id']}"
    assert other.get(path).status_code == 404
    assert other.patch(path, json={"city": "Nice"}).status_code == 404
    assert other.delete(path).status_code == 404
    assert other.get("/auth/me/addresses").json["items"] == []
    assert customer_client.get(path).json["city"] == "Lyon"  # untouched
    assert owner_client.get("/auth/me/addresses").status_code == 403  # customers only
    assert app.test_client().get("/auth/me/addresses").status_code == 401


def test_at_most_so_many_addresses(customer_client, monkeypatch):
    monkeypatch.setattr(addresses, "MAX_ADDRESSES", 2)
    add(customer_client, HOME)
    add(customer_client, WORK)
    refused = add(customer_client, WORK, status=409)
    assert "2 addresses" in refused["message"]


def test_checkout_and_quote_by_a_saved_address(app, customer_client, make_customer):
    teapot = add_product(app, "Teapot", price_cents=2500, stock=10)
    home = add(customer_client, HOME)
    body = {k: v for k, v in basket((teapot, 1)).items() if k != "shipping_address"}
    quote = customer_client.post(
        "/payments/quote", json={**body, "shipping_address_id": home["id"]}
    )
    assert quote.status_code == 200 and quote.json["total_cents"] == 2500, quote.json
    placed = customer_client.post(
        "/payments/checkout", json={**body, "shipping_address_id": home["id"]}
    )
    assert placed.status_code == 201, placed.json
    assert placed.json["shipping_address"] == {**HOME, "region": "ARA"}
    # The order keeps its copy: changing or deleting the saved address does not touch it.
    customer_client.delete(f"/auth/me/addresses/{home['id']}")
    kept = customer_client.get(f"/orders/{placed.json['id']}").json["shipping_address"]
    assert kept == placed.json["shipping_address"]

    work = add(make_customer(), WORK)  # another customer's
    for path in ("/payments/quote", "/payments/checkout"):
        for address_id, said in [
            (work["id"], f"shipping_address_id: {work['id']} is not one of your saved addresses."),
            (home["id"], "is not one of your saved addresses"),  # deleted
        ]:
            refused = customer_client.post(path, json={**body, "shipping_address_id": address_id})
            assert refused.status_code == 400 and said in refused.json["message"], refused.json
        both = customer_client.post(
            path, json={**body, "shipping_address_id": work["id"], "shipping_address": ADDRESS}
        )
        assert both.status_code == 400
        assert "shipping_address_id: give shipping_address or" in both.json["message"]
        neither = customer_client.post(path, json=body)
        assert neither.status_code == 400 and "shipping_address: Missing" in neither.json["message"]
    guest = app.test_client().post(
        "/payments/quote", json={**body, "shipping_address_id": work["id"]}
    )
    assert guest.status_code == 400
    assert guest.json["message"] == (
        "shipping_address_id: sign in as a customer to use a saved address."
    )


def test_erasing_a_customer_erases_their_address_book(app, owner_client, make_customer):
    from shop import db

    casey = make_customer()
    add(casey, HOME)
    add(casey, WORK)
    erased = owner_client.delete(f"/customers/{casey.user['id']}")
    assert erased.status_code == 204, erased.json
    with app.app_context():
        left = db.value(
            "SELECT COUNT(*) FROM customer_addresses WHERE customer_id = :id",
            {"id": casey.user["id"]},
        )
    assert left == 0


def test_a_country_no_method_ships_to_is_named(app, owner_client, customer_client):
    teapot = add_product(app, "Teapot", price_cents=2500, stock=10)
    for name, countries in [("DHL", ["DE"]), ("Post", ["DE", "AT"])]:
        made = owner_client.post(
            "/shipping-methods", json={"name": name, "countries": countries, "price_cents": 500}
        )
        assert made.status_code == 201, made.json
    refused = customer_client.post("/payments/checkout", json=basket((teapot, 1)))  # to FR
    assert refused.status_code == 400
    assert refused.json["message"] == "shipping_address.country: no shipping method ships to FR."
    austria = basket((teapot, 1), address={**ADDRESS, "country": "AT"})
    refused = customer_client.post("/payments/checkout", json=austria)
    # Only the methods that ship there are offered.
    assert "shipping_method_id: required: choose one of" in refused.json["message"]
    assert "Post" in refused.json["message"] and "DHL" not in refused.json["message"]
