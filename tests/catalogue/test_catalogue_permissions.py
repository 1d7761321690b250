"""The permission matrix of the catalogue, content and settings routes, generated from the
OpenAPI description: each operation's ``x-permission`` and ``x-scopes`` (set by the route
guards) decide what an anonymous caller, a customer, an administrator without and with the
permission, and an API key without and with the scope must get."""

import io

import pytest

from shop.permissions import ALL_SCOPES
from tests.catalogue_helpers import Catalogue, image_bytes

PREFIXES = ("/products", "/categories", "/collections", "/content", "/settings")

# How to call each route with a valid request: (path, JSON body). Targets are made fresh for
# every call, so a successful DELETE never breaks the next caller's request.
SIZES = [{"name": "Size", "values": ["S", "M"]}]
REQUESTS = {
    ("get", "/products"): lambda c: ("/products", None),
    ("get", "/products/facets"): lambda c: ("/products/facets", None),
    ("post", "/products"): lambda c: ("/products", {"name": "New", "price_cents": 5}),
    ("get", "/products/{product_id}"): lambda c: (f"/products/{c.product()['id']}", None),
    ("put", "/products/{product_id}"): lambda c: (
        f"/products/{c.product()['id']}",
        {"stock": 5},
    ),
    ("patch", "/products/{product_id}"): lambda c: (
        f"/products/{c.product()['id']}",
        {"stock": 5},
    ),
    ("delete", "/products/{product_id}"): lambda c: (f"/products/{c.product()['id']}", None),
    ("get", "/products/{product_id}/variants"): lambda c: (
        f"/products/{c.product()['id']}/variants",
        None,
    ),
    ("post", "/products/{product_id}/variants"): lambda c: (
        f"/products/{c.product(options=SIZES)['id']}/variants",
        {"options": {"Size": "M"}},
    ),
    ("post", "/products/{product_id}/variants/generate"): lambda c: (
        f"/products/{c.product(options=SIZES)['id']}/variants/generate",
        {},
    ),
    ("patch", "/products/{product_id}/variants/{variant_id}"): lambda c: (
        "/products/{0}/variants/{0}".format(c.product()["id"]),  # the default variant's id
        {"stock": 2},
    ),
    ("delete", "/products/{product_id}/variants/{variant_id}"): lambda c: (
        "/products/{0}/variants/{0}".format(c.product(options=SIZES, generate=True)["id"]),
        None,
    ),
    ("get", "/products/{product_id}/variants/{variant_id}/price-history"): lambda c: (
        "/products/{0}/variants/{0}/price-history".format(c.product()["id"]),
        None,
    ),
    ("get", "/products/{product_id}/images"): lambda c: (
        f"/products/{c.product()['id']}/images",
        None,
    ),
    ("post", "/products/{product_id}/images"): lambda c: (
        f"/products/{c.product()['id']}/images",
        {"file": (io.BytesIO(image_bytes()), "a.png")},
    ),
    ("patch", "/products/{product_id}/images/{image_id}"): lambda c: (
        c.image_path(),
        {"alt": "Changed"},
    ),
    ("delete", "/products/{product_id}/images/{image_id}"): lambda c: (c.image_path(), None),
    ("get", "/products/export"): lambda c: ("/products/export", None),
    ("post", "/products/import"): lambda c: (  # a JSON object is a one-line JSON Lines file
        "/products/import",
        {"product_slug": c.product()["slug"], "variant_stock": 3},
    ),
    ("get", "/categories"): lambda c: ("/categories", None),
    ("post", "/categories"): lambda c: ("/categories", {"name": "New"}),
    ("get", "/categories/{category_id}"): lambda c: (f"/categories/{c.category()['id']}", None),
    ("put", "/categories/{category_id}"): lambda c: (
        f"/categories/{c.category()['id']}",
        {"position": 2},
    ),
    ("delete", "/categories/{category_id}"): lambda c: (
        f"/categories/{c.category()['id']}",
        None,
    ),
    ("get", "/collections"): lambda c: ("/collections", None),
    ("post", "/collections"): lambda c: ("/collections", {"title": "New"}),
    ("get", "/collections/{collection_id}"): lambda c: (
        f"/collections/{c.collection()['id']}",
        None,
    ),
    ("put", "/collections/{collection_id}"): lambda c: (
        f"/collections/{c.collection()['id']}",
        {"title": "Renamed"},
    ),
    ("delete", "/collections/{collection_id}"): lambda c: (
        f"/collections/{c.collection()['id']}",
        None,
    ),
    ("get", "/content/registry"): lambda c: ("/content/registry", None),
    ("post", "/content/sync"): lambda c: ("/content/sync", {"entries": []}),
    ("get", "/content/{key}"): lambda c: (f"/content/{c.entry()['key']}", None),
    ("put", "/content/{key}"): lambda c: (
        f"/content/{c.entry()['key']}",
        {"type": "page", "data": {"changed": True}, "published": True},
    ),
    ("delete", "/content/{key}"): lambda c: (f"/content/{c.entry()['key']}", None),
    ("get", "/settings"): lambda c: ("/settings", None),
    ("patch", "/settings"): lambda c: ("/settings", {"shop_name": "Renamed"}),
    ("get", "/settings/public"): lambda c: ("/settings/public", None),
}

METHODS = ("get", "post", "put", "patch", "delete")


def operations(client) -> dict:
    """(method, path) -> OpenAPI operation, for every route of the catalogue issue."""
    spec = client.get("/openapi.json").json
    return {
        (method, path): operation
        for path, item in spec["paths"].items()
        if path.startswith(PREFIXES)
        for method, operation in item.items()
        if method in METHODS
    }


def test_the_matrix_covers_every_route(client):
    assert set(operations(client)) == set(REQUESTS)


@pytest.fixture
def callers(app, owner_client, customer_client, make_admin, make_key):
    """Who calls: a function of the route's permission and scopes, answering (label, client,
    expected status class)."""
    response = owner_client.post("/roles", json={"name": "nobody", "permissions": []})
    assert response.status_code == 201, response.json

    def for_route(permission, scopes):
        if permission is None:  # public: everybody gets through
            yield "anonymous", app.test_client(), 2
            yield "customer", customer_client, 2
            yield "admin without rights", make_admin("nobody"), 2
            yield "key", make_key("read:order"), 2
            return
        yield "anonymous", app.test_client(), 401
        yield "customer", customer_client, 403
        yield "admin without the permission", make_admin("nobody"), 403
        yield "admin with the permission", make_admin("nobody", [permission]), 2
        yield "key without the scope", make_key(*(s for s in ALL_SCOPES if s not in scopes)), 403
        for scope in scopes:
            yield f"key with {scope}", make_key(scope), 2

    return for_route


@pytest.mark.parametrize("route", sorted(REQUESTS), ids=lambda r: f"{r[0].upper()} {r[1]}")
def test_route_answers_each_caller_as_documented(route, client, owner_client, callers):
    operation = operations(client)[route]
    permission, scopes = operation.get("x-permission"), operation.get("x-scopes", [])
    if permission is None:
        # Public; credentials optional ({}) where they show more (inactive products, drafts).
        assert operation["security"] in ([], [{}, {"adminSession": []}, {"apiKey": []}])
    else:
        assert scopes, "every catalogue write is open to a scoped API key"
        assert permission in operation["description"]
        assert all(scope in operation["description"] for scope in scopes)
    catalogue = Catalogue(owner_client)
    method = route[0]
    for label, caller, expected in callers(permission, scopes):
        path, body = REQUESTS[route](catalogue)
        multipart = isinstance(body, dict) and "file" in body
        response = getattr(caller, method)(path, **{"data" if multipart else "json": body})
        status = response.status_code
        if expected == 2:
            assert 200 <= status < 300, (label, status, response.json)
            assert str(status) in operation["responses"], (label, status)
        else:
            assert status == expected, (label, status, response.json)
            assert set(response.json) == {"message"}
