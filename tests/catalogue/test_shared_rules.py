"""Rules kept in one place (issue 23), pinned through the API: the id format, and the filters
of the lists (``shop.db.pages.Where``), which every filtered list builds the same way."""

import re

from shop import db
from tests.catalogue_helpers import Catalogue
from tests.orders_helpers import add_product, basket

# Path ids that are capabilities, not records' ids: a guest cart's id is its key (256 random
# bits, 43 URL-safe characters: shop/carts/store.py), so it has a shape of its own.
CAPABILITIES = {"cart_id"}


def _id_patterns(spec: dict) -> set[str]:
    """The ``pattern`` of every id path parameter (``{product_id}``...) the description has,
    but for the capabilities (``CAPABILITIES``), which must not share it."""
    patterns, checked = set(), 0
    for item in spec["paths"].values():
        for parameter in item.get("parameters", []):
            if parameter["in"] == "path" and parameter["name"] in CAPABILITIES:
                continue
            if parameter["in"] == "path" and parameter["name"].endswith("_id"):
                patterns.add(parameter["schema"]["pattern"])
                checked += 1
    assert checked >= 10, checked  # the id paths are documented on the path, not the operation
    return patterns


def test_every_id_the_service_makes_has_the_one_documented_format(
    app, client, owner_client, make_customer
):
    patterns = _id_patterns(client.get("/openapi.json").json)
    assert patterns == {f"^{db.ID_PATTERN}$"}
    pattern = patterns.pop()
    catalogue = Catalogue(owner_client)
    customer = make_customer()
    product_id = add_product(app)
    order = customer.post("/payments/checkout", json=basket((product_id, 1))).json
    made = {
        "product": product_id,
        "category": catalogue.category()["id"],
        "collection": catalogue.collection()["id"],
        "customer": customer.user["id"],
        "order": order["id"],
    }
    for kind, made_id in made.items():
        assert re.fullmatch(pattern, made_id), (kind, made_id)
    # The URL converter is the same rule: a well-formed id routes, any other does not.
    assert owner_client.get(f"/products/{product_id}").status_code == 200
    for malformed in (product_id.upper(), product_id[:-1], product_id + "0"):
        response = owner_client.get(f"/products/{malformed}")
        assert response.status_code == 404
        assert response.json["message"].startswith("Not found: /products/")


def _listed(client, path: str, **query) -> tuple[list, int]:
    response = client.get(path, query_string=query)
    assert response.status_code == 200, response.json
    return response.json["items"], response.json["total"]


def test_filters_combine_with_and_and_the_total_counts_them(
    app, owner_client, make_admin, make_customer
):
    checked = 0
    catalogue = Catalogue(owner_client)
    # Products: q and in_stock, each alone matching more than both together.
    catalogue.product(name="Blue mug", stock=0)
    both = catalogue.product(name="Blue bowl", stock=4)
    catalogue.product(name="Red bowl", stock=4)
    items, total = _listed(owner_client, "/products", q="blue", in_stock="true")
    assert [p["id"] for p in items] == [both["id"]] and total == 1
    checked += 1
    # Customers: q and active (always with the hidden "not erased" condition).
    make_customer(email="ann.blue@example.com", name="Ann")
    gone = make_customer(email="bob.blue@example.com", name="Bob")
    make_customer(email="cy.red@example.com", name="Cy")
    assert owner_client.patch(
        f"/customers/{gone.user['id']}", json={"active": False}
    ).status_code in (200, 204)
    items, total = _listed(owner_client, "/customers", q="blue", active="true")
    assert [c["email"] for c in items] == ["ann.blue@example.com"] and total == 1
    checked += 1
    # Administrators: role and active.
    make_admin("support", email="s1@example.com")
    quiet = make_admin("support", email="s2@example.com")
    assert owner_client.patch(f"/users/{quiet.user_id}", json={"active": False}).status_code in (
        200,
        204,
    )
    items, total = _listed(owner_client, "/users", role="support", active="true")
    assert [u["email"] for u in items] == ["s1@example.com"] and total == 1
    checked += 1
    # Content registry: type and published.
    catalogue.entry("about", type="page", published=True)
    catalogue.entry("draft", type="page", published=False)
    catalogue.entry("banner", type="snippet", published=True)
    items, total = _listed(owner_client, "/content/registry", type="page", published="true")
    assert [e["key"] for e in items] == ["about"] and total == 1
    checked += 1
    # Orders: status and customer_id.
    buyer, other = make_customer(), make_customer()
    product_id = add_product(app, stock=10)
    placed = [
        c.post("/payments/checkout", json=basket((product_id, 1))).json for c in (buyer, buyer)
    ]
    other.post("/payments/checkout", json=basket((product_id, 1)))
    first = placed[0]["id"]
    cancelled = owner_client.patch(f"/orders/{first}/status", json={"status": "cancelled"})
    assert cancelled.status_code == 200, cancelled.json
    items, total = _listed(owner_client, "/orders", status="pending", customer_id=buyer.user["id"])
    assert [o["id"] for o in items] == [placed[1]["id"]] and total == 1
    checked += 1
    assert checked == 5  # the five filtered lists of the API
