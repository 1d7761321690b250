"""Administrators, roles and permissions (spec 2.4, 5.2)."""

import pytest

from tests.conftest import PASSWORD, login


def new_user(client, email="ed@example.com", role="editor", **extra):
    body = {"email": email, "name": "Ed", "password": PASSWORD, "role": role, **extra}
    return client.post("/users", json=body)


def test_permission_catalogue(owner_client, customer_client, client):
    catalogue = owner_client.get("/permissions").json
    for name in ("products.read", "orders.update_status", "api_key.create", "audit.read"):
        assert name in catalogue["permissions"]
    scopes = {s["scope"]: s["permissions"] for s in catalogue["scopes"]}
    assert scopes["write:product"] == ["products.create", "products.delete", "products.update"]
    assert scopes["write:order"] == ["orders.edit", "orders.refund", "orders.update_status"]
    assert scopes["write:return"] == ["returns.update"]
    assert not any(s.endswith((":api_key", ":user", ":role", ":audit")) for s in scopes)
    assert client.get("/permissions").status_code == 401
    assert customer_client.get("/permissions").status_code == 403


def test_builtin_roles(owner_client):
    roles = {r["name"]: r for r in owner_client.get("/roles").json["items"]}
    assert set(roles) == {"owner", "admin", "editor", "support"}
    assert all(r["builtin"] for r in roles.values())
    admin = set(roles["admin"]["permissions"])
    assert not any(p.startswith(("users.", "roles.")) for p in admin)
    assert "settings.update" in admin and "audit.read" in admin
    editor = set(roles["editor"]["permissions"])
    assert {"products.create", "content.update", "api_key.create"} <= editor
    assert "orders.read" not in editor
    support = set(roles["support"]["permissions"])
    assert {"orders.read", "orders.update_status", "customers.read"} <= support


def test_create_user_and_sign_in(owner_client, app):
    created = new_user(owner_client, email="Ed@Example.com", permissions=["orders.read"])
    assert created.status_code == 201
    user = created.json
    assert user["email"] == "ed@example.com" and user["role"] == "editor"
    assert user["permissions"] == ["orders.read"]
    assert "orders.read" in user["effective_permissions"]
    assert "password" not in user and "password_hash" not in user
    signed_in = login(app.test_client(), "ed@example.com")
    assert "orders.read" in signed_in["permissions"]


def test_user_validation(owner_client):
    assert new_user(owner_client, role="nope").status_code == 400
    assert new_user(owner_client, permissions=["products.fly"]).status_code == 400
    assert new_user(owner_client, password="short").status_code == 400
    assert new_user(owner_client).status_code == 201
    assert new_user(owner_client).status_code == 409


def test_nobody_grants_what_they_do_not_hold(make_admin):
    manager = make_admin("editor", permissions=["users.create", "users.read", "users.update"])
    assert new_user(manager, role="editor").status_code == 201
    refused = new_user(manager, email="x@example.com", role="admin")
    assert refused.status_code == 403 and "settings.update" in refused.json["message"]
    refused = new_user(manager, email="y@example.com", permissions=["orders.read"])
    assert refused.status_code == 403


def test_nobody_changes_someone_holding_more(make_admin, owner_client):
    manager = make_admin("editor", permissions=["users.read", "users.update", "users.delete"])
    owner_id = owner_client.user["id"]
    assert manager.patch(f"/users/{owner_id}", json={"active": False}).status_code == 403
    assert manager.delete(f"/users/{owner_id}").status_code == 403


def test_last_owner_is_protected(owner_client):
    me = owner_client.user["id"]
    assert owner_client.patch(f"/users/{me}", json={"role": "admin"}).status_code == 409
    assert owner_client.patch(f"/users/{me}", json={"active": False}).status_code == 409
    assert owner_client.delete(f"/users/{me}").status_code == 409
    second = new_user(owner_client, email="o2@example.com", role="owner").json
    assert owner_client.patch(f"/users/{me}", json={"role": "admin"}).status_code == 200
    assert owner_client.get("/users").status_code == 403  # demoted: users.* is gone
    assert second["role"] == "owner"


def test_deactivating_an_administrator_ends_their_sessions(owner_client, make_admin):
    editor = make_admin("editor")
    assert editor.get("/auth/me").status_code == 200
    response = owner_client.patch(f"/users/{editor.user_id}", json={"active": False})
    assert response.status_code == 200 and response.json["active"] is False
    assert editor.get("/auth/me").status_code == 401
    refused = editor.post("/auth/login", json={"email": editor.email, "password": PASSWORD})
    assert refused.status_code == 401


def test_deleting_an_administrator_ends_sessions_and_revokes_keys(
    owner_client, make_admin, make_key
):
    editor = make_admin("editor")
    key = make_key("read:product", by=editor)
    assert owner_client.delete(f"/users/{editor.user_id}").status_code == 204
    assert editor.get("/auth/me").status_code == 401
    assert key.get("/auth/me").status_code == 401
    listed = owner_client.get(f"/api-keys/{key.key['id']}").json
    assert listed["status"] == "revoked"
    assert owner_client.get(f"/users/{editor.user_id}").status_code == 404


def test_new_password_ends_the_administrators_sessions(owner_client, make_admin, app):
    editor = make_admin("editor")
    response = owner_client.patch(f"/users/{editor.user_id}", json={"password": "an0ther-pass"})
    assert response.status_code == 200
    assert editor.get("/auth/me").status_code == 401
    login(app.test_client(), editor.email, "an0ther-pass")


def test_users_list_filters(owner_client):
    new_user(owner_client, email="ed@example.com")
    new_user(owner_client, email="sue@example.com", role="support")
    listed = owner_client.get("/users?role=support").json
    assert [u["email"] for u in listed["items"]] == ["sue@example.com"]
    assert owner_client.get("/users?q=SUE").json["total"] == 1
    assert owner_client.get("/users?q=%25").json["total"] == 0  # wildcards are literal
    page = owner_client.get("/users?page_size=2&page=1").json
    assert page["total"] == 3 and len(page["items"]) == 2
    assert owner_client.get("/users?page_size=101").status_code == 400


def test_role_lifecycle(owner_client, make_admin):
    created = owner_client.post(
        "/roles", json={"name": "catalogue-viewer", "permissions": ["products.read"]}
    )
    assert created.status_code == 201
    role = created.json
    assert role["builtin"] is False and role["permissions"] == ["products.read"]
    updated = owner_client.put(
        f"/roles/{role['id']}", json={"permissions": ["products.read", "orders.read"]}
    )
    assert updated.json["permissions"] == ["orders.read", "products.read"]
    viewer = make_admin("catalogue-viewer")
    assert "orders.read" in viewer.user["permissions"]
    assert owner_client.delete(f"/roles/{role['id']}").status_code == 409  # still held
    assert owner_client.delete(f"/users/{viewer.user_id}").status_code == 204
    assert owner_client.delete(f"/roles/{role['id']}").status_code == 204
    assert owner_client.get(f"/roles/{role['id']}").status_code == 404


def test_role_changes_apply_to_live_sessions_at_once(owner_client, make_admin):
    support = make_admin("support")
    roles = {r["name"]: r for r in owner_client.get("/roles").json["items"]}
    assert support.get("/audit-log").status_code == 403
    permissions = [*roles["support"]["permissions"], "audit.read"]
    owner_client.put(f"/roles/{roles['support']['id']}", json={"permissions": permissions})
    assert support.get("/audit-log").status_code == 200


@pytest.mark.parametrize("change", [{"permissions": ["products.read"]}, {"name": "boss"}])
def test_owner_role_cannot_change(owner_client, change):
    owner_role = next(r for r in owner_client.get("/roles").json["items"] if r["name"] == "owner")
    assert owner_client.put(f"/roles/{owner_role['id']}", json=change).status_code == 409
    assert owner_client.delete(f"/roles/{owner_role['id']}").status_code == 409


def test_builtin_roles_cannot_be_renamed_or_deleted(owner_client):
    editor = next(r for r in owner_client.get("/roles").json["items"] if r["name"] == "editor")
    assert owner_client.put(f"/roles/{editor['id']}", json={"name": "writer"}).status_code == 409
    assert owner_client.delete(f"/roles/{editor['id']}").status_code == 409


def test_role_grant_ceiling(make_admin):
    manager = make_admin("editor", permissions=["roles.create", "roles.read", "roles.update"])
    ok = manager.post("/roles", json={"name": "helper", "permissions": ["products.read"]})
    assert ok.status_code == 201
    refused = manager.post("/roles", json={"name": "sneaky", "permissions": ["users.delete"]})
    assert refused.status_code == 403 and "users.delete" in refused.json["message"]
    assert manager.post("/roles", json={"name": "Bad Name!"}).status_code == 400


def test_user_and_role_changes_are_audited(owner_client):
    new_user(owner_client)
    owner_client.post("/roles", json={"name": "x", "permissions": []})
    events = {e["event"] for e in owner_client.get("/audit-log").json["items"]}
    assert {"user.created", "role.created", "login.succeeded"} <= events
    created = owner_client.get("/audit-log?event=user.created").json["items"][0]
    assert created["actor"]["label"] == "owner@example.com"
    assert PASSWORD not in str(created)


def test_audit_log_needs_its_permission(make_admin, make_key):
    editor = make_admin("editor")
    assert editor.get("/audit-log").status_code == 403
    key = make_key("read:product")
    assert key.get("/audit-log").status_code == 403
