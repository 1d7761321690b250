"""Rights at their edges: every action against what the caller may do now, roles that change
their holders, write without read, the console's key ids, refused requests that count."""

import hashlib
import hmac

from admin_helpers import console_client, hidden_fields
from conftest import PASSWORD
from orders_helpers import ADDRESS, add_product, basket

from shop import db


def make_role(owner_client, name, permissions) -> str:
    response = owner_client.post("/roles", json={"name": name, "permissions": permissions})
    assert response.status_code == 201, response.json
    return response.json["id"]


def role_id(owner_client, name) -> str:
    roles = owner_client.get("/roles?page_size=100").json["items"]
    return next(r["id"] for r in roles if r["name"] == name)


def audit_count(app) -> int:
    with app.app_context():
        return db.value("SELECT COUNT(*) FROM audit_log")


# Content sync -------------------------------------------------------------------------------


def test_sync_checks_update_against_the_owners_current_rights(owner_client, make_admin, make_key):
    content = ["content.read", "content.create", "content.update", "content.delete"]
    writer_role = make_role(owner_client, "writer", [*content, "api_key.create"])
    writer = make_admin("writer")
    key = make_key("write:content", by=writer)
    entry = {"key": "home", "type": "page", "data": {"v": 1}}
    assert key.put("/content/home", json={"type": "page", "data": {"v": 1}}).status_code == 201
    # The owner of the key loses content.update, keeping create and delete.
    kept = [p for p in content if p != "content.update"] + ["api_key.create"]
    assert owner_client.put(f"/roles/{writer_role}", json={"permissions": kept}).status_code == 200

    assert key.put("/content/home", json={"type": "page", "data": {"v": 2}}).status_code == 403
    response = key.post("/content/sync", json={"entries": [{**entry, "data": {"v": 2}}]})
    assert response.status_code == 403, response.json
    assert "content.update" in response.json["message"]
    assert owner_client.get("/content/home").json["data"] == {"v": 1}
    # What it may still do goes through: creating a new entry, leaving home unchanged.
    response = key.post("/content/sync", json={"entries": [entry, {**entry, "key": "about"}]})
    assert response.status_code == 200, response.json
    assert response.json["keys"]["created"] == ["about"]


# Roles and their holders --------------------------------------------------------------------


def test_nobody_changes_a_role_held_by_someone_who_holds_more_than_they_do(
    owner_client, make_admin
):
    catalogue = [f"products.{a}" for a in ("read", "create", "update", "delete")]
    make_role(owner_client, "rolemgr", ["roles.read", "roles.update", *catalogue])
    manager = make_admin("rolemgr")
    make_admin("admin")  # holds far more than the manager
    admin_role = role_id(owner_client, "admin")
    before = owner_client.get(f"/roles/{admin_role}").json["permissions"]

    stripped = [p for p in before if p != "products.delete"]
    response = manager.put(f"/roles/{admin_role}", json={"permissions": stripped})
    assert response.status_code == 403, response.json
    assert owner_client.get(f"/roles/{admin_role}").json["permissions"] == before

    # A custom role whose holder has an extra permission the manager lacks: not renamed.
    shelf = make_role(owner_client, "shelf", ["products.read"])
    make_admin("shelf", permissions=["orders.read"])
    response = manager.put(f"/roles/{shelf}", json={"name": "shelves"})
    assert response.status_code == 403, response.json
    assert owner_client.get(f"/roles/{shelf}").json["name"] == "shelf"

    # A role whose holders hold nothing beyond the manager's rights may be changed.
    stock = make_role(owner_client, "stock", ["products.read"])
    make_admin("stock")
    response = manager.put(f"/roles/{stock}", json={"name": "stockroom"})
    assert response.status_code == 200, response.json
    response = manager.put(f"/roles/{stock}", json={"permissions": catalogue})
    assert response.status_code == 200, response.json


# Write does not imply read ------------------------------------------------------------------


def test_a_settings_writer_without_read_gets_204(app, owner_client, make_key, make_admin):
    key = make_key("write:setting")
    response = key.patch("/settings", json={"shop_name": "Renamed"})
    assert response.status_code == 204 and response.data == b""
    assert owner_client.get("/settings").json["shop_name"] == "Renamed"

    make_role(owner_client, "settings-writer", ["settings.update"])
    session = make_admin("settings-writer")
    response = session.patch("/settings", json={"address": "1 Quay"})
    assert response.status_code == 204 and response.data == b""
    # With read, the whole record as before.
    response = make_key("read:setting", "write:setting").patch("/settings", json={"address": None})
    assert response.status_code == 200 and response.json["shop_name"] == "Renamed"


def test_an_empty_patch_is_400_and_writes_nothing(app, owner_client, customer_client):
    customer_id = customer_client.user["id"]
    before = owner_client.get(f"/customers/{customer_id}").json
    entries = audit_count(app)
    for path in ("/settings", f"/customers/{customer_id}"):
        response = owner_client.patch(path, json={})
        assert response.status_code == 400, (path, response.json)
        assert set(response.json) == {"message"}
    assert owner_client.get(f"/customers/{customer_id}").json == before
    assert audit_count(app) == entries


def test_customer_and_order_writers_without_read_get_204(
    app, owner_client, customer_client, make_key
):
    customer_id = customer_client.user["id"]
    key = make_key("write:customer")
    response = key.patch(f"/customers/{customer_id}", json={"name": "Renamed"})
    assert response.status_code == 204 and response.data == b""
    assert owner_client.get(f"/customers/{customer_id}").json["name"] == "Renamed"

    product = add_product(app)
    order = customer_client.post("/payments/checkout", json=basket((product, 1))).json
    key = make_key("write:order")
    response = key.patch(f"/orders/{order['id']}/status", json={"status": "paid"})
    assert response.status_code == 204 and response.data == b""
    assert owner_client.get(f"/orders/{order['id']}").json["status"] == "paid"


# The console's key ids ----------------------------------------------------------------------


def test_the_console_never_names_another_administrators_key(app, owner_client, make_admin):
    secret_label = "payroll export for the board"
    response = owner_client.post(
        "/api-keys", json={"label": secret_label, "scopes": ["read:order"]}
    )
    assert response.status_code == 201
    owners_key = response.json["id"]
    editor = make_admin("editor")
    browser = console_client(app, editor.email, PASSWORD)
    form = hidden_fields(browser.get("/admin/api-keys/new").text)
    # The form's signature is derived from the editor's own token: they can sign any id.
    signature = hmac.new(
        form["csrf_token"].encode(), f"new key {owners_key}".encode(), hashlib.sha256
    ).hexdigest()
    response = browser.post(
        "/admin/api-keys",
        data={
            **form,
            "key_id": owners_key,
            "key_sig": signature,
            "label": "mine",
            "scopes": ["read:product"],
        },
    )
    assert response.status_code == 409
    assert secret_label not in response.text


# Refused requests count against rate limits -------------------------------------------------


def test_anonymous_checkouts_are_rate_limited(make_app):
    client = make_app(RATELIMIT_ENABLED=True).test_client()
    statuses = [
        client.post("/payments/checkout", json=basket(("0" * 24, 1), address=ADDRESS)).status_code
        for _ in range(12)
    ]
    assert statuses[:10] == [401] * 10
    assert statuses[10:] == [429, 429]


# What a refused key is told -----------------------------------------------------------------


def test_every_403_to_a_key_names_the_scope_it_needs(owner_client, make_admin, make_key):
    """Route guards, a public route's extra, a view's further check and the webhooks' events
    check tell an API key the scope (``read:order``), never only the permission."""
    key = make_key("read:product", "write:webhook")
    for response, needed in (
        (key.get("/orders"), "Access denied: this API key needs the scope read:order."),
        (
            key.get("/customers"),
            "Access denied: this API key needs the scope read:customer.",
        ),
        (
            make_key("read:order").get("/products?active=false"),
            "Access denied: to filter on active this API key needs the scope read:product.",
        ),
        (
            key.post(
                "/webhooks", json={"url": "https://example.com/hook", "events": ["order.placed"]}
            ),
            "Access denied: to subscribe to order.placed this API key needs the scope read:order.",
        ),
    ):
        assert response.status_code == 403, response.json
        assert response.json["message"] == needed
    # A key that holds the scope while its owner lost the permission is told that instead.
    content = ["content.read", "content.create", "content.update", "content.delete"]
    writer_role = make_role(owner_client, "pruner", [*content, "api_key.create"])
    key = make_key("write:content", by=make_admin("pruner"))
    assert key.put("/content/old", json={"type": "page", "data": {}}).status_code == 201
    kept = [p for p in content if p != "content.delete"] + ["api_key.create"]
    assert owner_client.put(f"/roles/{writer_role}", json={"permissions": kept}).status_code == 200
    pruned = key.post("/content/sync", json={"entries": [], "prune": True, "allow_empty": True})
    assert pruned.status_code == 403
    assert pruned.json["message"] == (
        "Access denied: to prune entries this API key's scope write:content no longer carries"
        " content.delete: the key's owner does not hold it now."
    )
    # People are told the permission.
    editor = make_admin("editor")
    assert editor.get("/orders").json["message"] == (
        "Access denied: this needs the permission orders.read."
    )
