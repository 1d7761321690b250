"""Deny by default, checked over the whole route table as OpenAPI publishes it.

For every operation that names a permission (``x-permission``) and its API-key scopes
(``x-scopes``): anonymous -> 401, customer -> 403, administrator without the permission ->
403, owner -> allowed; a key with an accepted scope -> allowed, with the other scope of the
same resource -> 403, with a scope of another resource -> 403, for a key-less route -> 403.
"Allowed" means neither 401 nor 403: the fake ids and empty bodies used here may well be a
404 or a 400, which is the point of calling with them.
"""

import re

import pytest

from shop.permissions import ALL_SCOPES

FAKE_ID = "0" * 24


def operations(app):
    """(method, path, operation) for every operation of the published OpenAPI description."""
    spec = app.test_client().get("/openapi.json").json
    for template, item in sorted(spec["paths"].items()):
        path = re.sub(r"\{[^}]+\}", FAKE_ID, template)
        for method, operation in item.items():
            if method in ("get", "post", "put", "patch", "delete"):
                yield method, path, operation


def protected(operation) -> bool:
    """Whether the operation needs credentials (``{}`` among its schemes: optional)."""
    return bool(operation["security"]) and {} not in operation["security"]


def call(client, method, path):
    kwargs = {"json": {}} if method in ("post", "put", "patch") else {}
    return getattr(client, method)(path, **kwargs)


def test_every_route_is_documented_as_public_or_protected(app):
    checked = 0
    for method, path, operation in operations(app):
        assert "security" in operation, (method, path)
        if protected(operation):
            assert "Requires" in operation.get("description", ""), (method, path)
        elif operation["security"]:
            assert "Public." in operation.get("description", ""), (method, path)
        checked += 1
    assert checked >= 76  # every operation (76 when this was written; new routes add to it)


def test_protected_routes_refuse_the_anonymous(app, client):
    checked = 0
    for method, path, operation in operations(app):
        if protected(operation):
            response = call(client, method, path)
            assert response.status_code == 401, (method, path, response.json)
            assert set(response.json) == {"message"}
            checked += 1
    assert checked >= 61  # every route that needs credentials (61 when this was written)


def test_permission_routes_for_each_kind_of_human(app, owner_client, make_admin, customer_client):
    owner_client.post("/roles", json={"name": "nobody", "permissions": []})
    powerless = make_admin("nobody")
    checked = 0
    for method, path, operation in operations(app):
        permission = operation.get("x-permission")
        if not permission:
            continue
        where = (method, path, permission)
        assert call(customer_client, method, path).status_code == 403, where
        assert call(powerless, method, path).status_code == 403, where
        allowed = call(owner_client, method, path)
        assert allowed.status_code not in (401, 403), (*where, allowed.json)
        checked += 1
    assert checked >= 47  # every route that names a permission (47 when this was written)


@pytest.fixture
def keys(make_key):
    """One key per scope, made by the owner (so each holds exactly its scope)."""
    return {scope: make_key(scope) for scope in ALL_SCOPES}


def test_scope_matrix(app, keys):
    checked = 0
    for method, path, operation in operations(app):
        if "x-permission" not in operation:
            continue
        accepted = operation["x-scopes"]
        where = (method, path, operation["x-permission"])
        if not accepted:
            for scope in ("read:product", "write:content"):
                assert call(keys[scope], method, path).status_code == 403, (*where, scope)
            continue
        for scope in ALL_SCOPES:
            response = call(keys[scope], method, path)
            if scope in accepted:
                assert response.status_code not in (401, 403), (*where, scope, response.json)
            else:
                assert response.status_code == 403, (*where, scope, response.json)
                assert "scope" in response.json["message"]
        checked += 1
    assert checked >= 29  # every route that names a permission keys can hold (29 when written)
