"""Lists an integration syncs: ``updated_after`` (and ``created_after``) on every list but
``GET /products`` (its own, with search) and one's own sessions, sorted by ``updated_at``,
then ``id``, oldest first, so a sync fetches only what changed since its last run."""

import secrets

import pytest

from shop.clock import iso
from tests.conftest import PASSWORD

# Lists without updated_after, and why: records that never change (created_after only), or
# not a sync's business.
# listInvoices: an invoice is issued once and never changed (issue 40).
CREATED_ONLY = {
    "listApiKeys",
    "listAuditLog",
    "listInvoices",
}  # no updated_at: changes are audited events
NOT_SYNCED = {"listProducts", "listSessions", "listMyAddresses"}  # search; own sessions, addresses


def _lists(spec):
    for path, item in spec["paths"].items():
        get = item.get("get", {})
        schema = get.get("responses", {}).get("200", {}).get("content", {})
        ref = schema.get("application/json", {}).get("schema", {}).get("$ref", "")
        if ref.endswith("Page"):
            yield path, get


def test_every_list_documents_its_sync_parameters(client):
    """Derived from the description: a list added later must say how it is synced."""
    spec = client.get("/openapi.json").json
    lists = dict((get["operationId"], get) for _path, get in _lists(spec))
    assert len(lists) >= 12
    for operation_id, get in lists.items():
        names = {p["name"] for p in get.get("parameters", []) if p["in"] == "query"}
        if operation_id in NOT_SYNCED:
            continue
        assert "created_after" in names, operation_id
        assert ("updated_after" in names) is (operation_id not in CREATED_ONLY), operation_id


def _new(client, path, body):
    response = client.post(path, json=body)
    assert response.status_code == 201, response.json
    return response.json["id"]


def _name() -> str:
    return f"n{secrets.token_hex(3)}"


def _customer(app):
    other = app.test_client()
    body = {"email": f"{_name()}@example.com", "password": PASSWORD, "name": "C"}
    response = other.post("/auth/register", json=body)
    assert response.status_code == 201
    return response.json["id"]


def _order(app, owner, product_id):
    buyer = app.test_client()
    body = {"email": f"{_name()}@example.com", "password": PASSWORD, "name": "B"}
    assert buyer.post("/auth/register", json=body).status_code == 201
    checkout = {
        "items": [{"product_id": product_id, "quantity": 1}],
        "shipping_address": {
            "name": "B",
            "line1": "1 Main St",
            "city": "Berlin",
            "postal_code": "10115",
            "country": "DE",
        },
        "payment_method": "manual",
    }
    return _new(buyer, "/payments/checkout", checkout)


# path: (make a record, change it) through the API, as the owner (or whoever may).
def _cases(app, owner):
    made = []

    def product():
        if not made:
            made.append(_new(owner, "/products", {"name": "Tea", "price_cents": 1, "stock": 50}))
        return made[0]

    countries = iter(["DE", "FR", "AT", "NL"])  # one tax rate each
    return {
        "/shipping-methods": (
            lambda: _new(owner, "/shipping-methods", {"name": _name(), "price_cents": 490}),
            lambda i: owner.put(f"/shipping-methods/{i}", json={"name": _name()}),
        ),
        "/tax-rates": (
            lambda: _new(
                owner, "/tax-rates", {"country": next(countries), "name": "VAT", "rate": "19"}
            ),
            lambda i: owner.put(f"/tax-rates/{i}", json={"name": _name()}),
        ),
        "/discounts": (
            lambda: _new(owner, "/discounts", {"code": _name(), "kind": "free_shipping"}),
            lambda i: owner.patch(f"/discounts/{i}", json={"usage_limit": 5}),
        ),
        "/categories": (
            lambda: _new(owner, "/categories", {"name": _name()}),
            lambda i: owner.put(f"/categories/{i}", json={"name": _name()}),
        ),
        "/collections": (
            lambda: _new(owner, "/collections", {"title": _name()}),
            lambda i: owner.put(f"/collections/{i}", json={"title": _name()}),
        ),
        "/customers": (
            lambda: _customer(app),
            lambda i: owner.patch(f"/customers/{i}", json={"name": _name()}),
        ),
        "/orders": (
            lambda: _order(app, owner, product()),
            lambda i: owner.patch(f"/orders/{i}/status", json={"status": "paid"}),
        ),
        "/users": (
            lambda: _new(
                owner,
                "/users",
                {"email": f"{_name()}@example.com", "name": "U", "password": PASSWORD}
                | {"role": "editor"},
            ),
            lambda i: owner.patch(f"/users/{i}", json={"name": _name()}),
        ),
        "/roles": (
            lambda: _new(owner, "/roles", {"name": _name(), "permissions": ["orders.read"]}),
            lambda i: owner.put(f"/roles/{i}", json={"permissions": ["customers.read"]}),
        ),
        "/webhooks": (
            lambda: _new(
                owner,
                "/webhooks",
                {"url": f"https://{_name()}.example.com/h", "events": ["product.created"]},
            ),
            lambda i: owner.patch(f"/webhooks/{i}", json={"description": _name()}),
        ),
    }


@pytest.mark.parametrize(
    "path",
    [
        "/categories",
        "/collections",
        "/customers",
        "/orders",
        "/users",
        "/roles",
        "/webhooks",
        "/shipping-methods",
        "/tax-rates",
        "/discounts",
    ],
)
def test_updated_after_gives_what_changed_oldest_first(app, owner_client, clock, path):
    make, change = _cases(app, owner_client)[path]
    changed, untouched = make(), make()
    clock.advance(60)
    since = iso(clock.moment)
    assert change(changed).status_code == 200
    clock.advance(60)
    made = make()
    page = owner_client.get(path, query_string={"updated_after": since, "page_size": 100}).json
    assert [item["id"] for item in page["items"]] == [changed, made]
    assert page["total"] == 2 and untouched not in [item["id"] for item in page["items"]]
    stamps = [(item["updated_at"], item["id"]) for item in page["items"]]
    assert stamps == sorted(stamps)
    created = owner_client.get(path, query_string={"created_after": since}).json["items"]
    assert [item["id"] for item in created] == [made]


def test_the_content_registry_syncs_by_key(owner_client, clock):
    for key in ("a", "b"):
        owner_client.put(f"/content/{key}", json={"type": "page", "data": {"v": 1}})
    clock.advance(60)
    since = iso(clock.moment)
    owner_client.put("/content/b", json={"type": "page", "data": {"v": 2}})
    owner_client.put("/content/c", json={"type": "page", "data": {"v": 1}})
    page = owner_client.get("/content/registry", query_string={"updated_after": since}).json
    assert [entry["key"] for entry in page["items"]] == ["b", "c"]
    created = owner_client.get("/content/registry", query_string={"created_after": since}).json
    assert [entry["key"] for entry in created["items"]] == ["c"]


def test_deliveries_sync_by_updated_after(owner_client, clock):
    hook = _new(
        owner_client,
        "/webhooks",
        {"url": "https://hooks.example.com/h", "events": ["product.created"]},
    )
    _new(owner_client, "/products", {"name": "Old", "price_cents": 1})
    clock.advance(60)
    since = iso(clock.moment)
    _new(owner_client, "/products", {"name": "New", "price_cents": 1})
    path = f"/webhooks/{hook}/deliveries"
    page = owner_client.get(path, query_string={"updated_after": since}).json
    assert len(page["items"]) == 1 and page["items"][0]["updated_at"] >= since
    assert owner_client.get(path, query_string={"created_after": since}).json["total"] == 1
    assert owner_client.get(path).json["total"] == 2


def test_keys_and_the_audit_log_filter_by_created_after(owner_client, clock):
    owner_client.post("/api-keys", json={"label": "old", "scopes": ["read:product"]})
    clock.advance(60)
    since = iso(clock.moment)
    owner_client.post("/api-keys", json={"label": "new", "scopes": ["read:product"]})
    keys = owner_client.get("/api-keys", query_string={"created_after": since}).json["items"]
    assert [key["label"] for key in keys] == ["new"]
    query = {"created_after": since, "event": "api_key.created"}
    entries = owner_client.get("/audit-log", query_string=query).json["items"]
    assert len(entries) == 1 and entries[0]["at"] >= since
    refused = owner_client.get("/api-keys", query_string={"updated_after": since})
    assert refused.status_code == 400  # not offered where nothing is updated
