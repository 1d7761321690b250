"""Machine API keys: lifecycle, scopes, rights ceiling, visibility, CLI and audit
(spec 2.1, 2.2, 3.1, 4.5, 5.3)."""

import logging
import re
from datetime import timedelta

import pytest

from shop.clock import iso
from shop.db import sha256
from shop.permissions import ALL_SCOPES
from tests.conftest import PASSWORD

SECRET_RE = re.compile(r"^eck_[A-Za-z0-9_-]{43}$")


def bearer(app, secret):
    """A client that sends ``secret`` as its Bearer token."""
    client = app.test_client()
    client.environ_base["HTTP_AUTHORIZATION"] = f"Bearer {secret}"
    return client


def in_an_hour(clock):
    return iso(clock() + timedelta(hours=1))


# -- the key itself -------------------------------------------------------------------------


def test_create_returns_the_secret_once(owner_client, app):
    response = owner_client.post(
        "/api-keys", json={"label": "deploy bot", "scopes": ["write:content", "read:product"]}
    )
    assert response.status_code == 201
    key = response.json
    assert SECRET_RE.match(key["secret"])
    assert key["label"] == "deploy bot"
    assert key["scopes"] == ["read:product", "write:content"]
    assert key["status"] == "active" and key["source"] == "admin"
    assert key["expires_at"] is None and key["last_used_at"] is None and key["revoked_at"] is None
    assert key["owner"] == {"id": owner_client.user["id"], "email": "owner@example.com"}
    listed = owner_client.get("/api-keys").get_data(as_text=True)
    one = owner_client.get(f"/api-keys/{key['id']}").get_data(as_text=True)
    for text in (listed, one):
        assert key["secret"] not in text and sha256(key["secret"]) not in text
        assert "secret" not in text and "hash" not in text
    from shop import db

    with app.app_context():
        stored = db.one("SELECT token_hash FROM api_keys WHERE id = :id", {"id": key["id"]})
    assert stored["token_hash"] == sha256(key["secret"])


@pytest.mark.parametrize(
    "body, words",
    [
        ({"label": "x", "scopes": []}, "at least one scope"),
        ({"label": "x", "scopes": ["read:api_key"]}, "'read:api_key'"),
        ({"label": "x", "scopes": ["write:user"]}, "'write:user'"),
        ({"label": "x", "scopes": ["read:role"]}, "'read:role'"),
        ({"label": "x", "scopes": ["read:audit"]}, "'read:audit'"),
        ({"label": "x", "scopes": ["admin"]}, "'admin'"),
        ({"label": "x", "scopes": ["read:product", "delete:product"]}, "'delete:product'"),
        ({"label": "", "scopes": ["read:product"]}, "label"),
        ({"label": "x" * 101, "scopes": ["read:product"]}, "label"),
        ({"label": "x", "scopes": ["read:product"], "expires_at": "tomorrow"}, "expires_at"),
        ({"label": "x", "scopes": ["read:product"], "expires_at": "2001-01-01"}, "future"),
        ({"label": "x", "scopes": "read:product"}, "scopes"),
    ],
)
def test_invalid_key_requests_are_400_and_write_nothing(owner_client, body, words):
    response = owner_client.post("/api-keys", json=body)
    assert response.status_code == 400
    assert words in response.json["message"]
    assert owner_client.get("/api-keys").json["total"] == 0


def test_expiry_accepts_a_date_or_a_datetime(owner_client):
    day = owner_client.post(
        "/api-keys", json={"label": "d", "scopes": ["read:product"], "expires_at": "2999-01-31"}
    )
    assert day.status_code == 201 and day.json["expires_at"] == "2999-01-31T00:00:00.000000Z"
    moment = owner_client.post(
        "/api-keys",
        json={"label": "m", "scopes": ["read:product"], "expires_at": "2999-01-31T12:30:00+02:00"},
    )
    assert moment.json["expires_at"] == "2999-01-31T10:30:00.000000Z"


# -- the state table of spec 3.1 ------------------------------------------------------------


def test_state_table_through_the_api(owner_client, app, clock):
    created = owner_client.post(
        "/api-keys",
        json={"label": "ci", "scopes": ["read:product"], "expires_at": in_an_hour(clock)},
    ).json
    key = bearer(app, created["secret"])
    # active: recognised (403 on a route it has no scope for, not 401)
    assert key.get("/audit-log").status_code == 403
    # the expiration date passes: refused, still listed and revocable
    clock.advance(3601)
    refused = key.get("/audit-log")
    assert refused.status_code == 401
    assert refused.json == {"message": "API key expired."}
    assert refused.headers["WWW-Authenticate"].startswith("Bearer")
    listed = owner_client.get("/api-keys?status=expired").json["items"]
    assert [k["id"] for k in listed] == [created["id"]]
    assert owner_client.delete(f"/api-keys/{created['id']}").status_code == 204
    record = owner_client.get(f"/api-keys/{created['id']}").json
    assert record["status"] == "revoked" and record["revoked_at"]
    assert key.get("/audit-log").json == {"message": "API key revoked."}
    # revoking again is 204 again
    assert owner_client.delete(f"/api-keys/{created['id']}").status_code == 204


def test_revocation_takes_effect_on_the_very_next_request(owner_client, make_key):
    key = make_key("read:product")
    assert key.get("/audit-log").status_code == 403
    assert key.get("/audit-log").status_code == 403  # warmed: used twice already
    owner_client.delete(f"/api-keys/{key.key['id']}")
    assert key.get("/audit-log").status_code == 401


def test_state_table_through_the_cli(app, clock):
    runner = app.test_cli_runner()
    created = runner.invoke(
        args=[
            "api-keys",
            "create",
            "--name",
            "sync",
            "--scopes",
            "read:product, write:content",
            "--expires",
            in_an_hour(clock),
        ]
    )
    assert created.exit_code == 0, created.output
    lines = created.output.strip().splitlines()
    secret = lines[-1]
    assert SECRET_RE.match(secret)
    assert "cannot be shown again" in created.output
    assert created.output.count(secret) == 1
    key_id = re.search(r"Created API key (\w+)", created.output).group(1)
    key = bearer(app, secret)
    assert key.get("/audit-log").status_code == 403  # active and recognised
    listed = runner.invoke(args=["api-keys", "list"])
    assert key_id in listed.output and "active" in listed.output
    assert secret not in listed.output and sha256(secret) not in listed.output
    clock.advance(3601)
    assert key.get("/audit-log").status_code == 401
    assert "expired" in runner.invoke(args=["api-keys", "list"]).output
    revoked = runner.invoke(args=["api-keys", "revoke", key_id])
    assert revoked.exit_code == 0
    assert "revoked" in runner.invoke(args=["api-keys", "list"]).output
    missing = runner.invoke(args=["api-keys", "revoke", "nope"])
    assert missing.exit_code == 1 and "No API key" in missing.output


@pytest.mark.parametrize(
    "args, words",
    [
        (["--scopes", "read:api_key"], "not a valid scope"),
        (["--scopes", ""], "at least one scope"),
        (["--scopes", "read:product", "--expires", "2001-01-01"], "future"),
        (["--scopes", "read:product", "--expires", "soon"], "ISO 8601"),
    ],
)
def test_cli_refuses_bad_scopes_and_dates(app, args, words):
    result = app.test_cli_runner().invoke(args=["api-keys", "create", "--name", "x", *args])
    assert result.exit_code == 1
    assert words in result.output
    assert "eck_" not in result.output


# -- resolution -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "header",
    [
        "Bearer eck_" + "A" * 43,  # well-formed, unknown
        "Bearer eck_short",
        "Bearer abc",
        "Bearer ",
    ],
)
def test_unknown_or_malformed_keys_are_401(client, header):
    response = client.post("/auth/logout", headers={"Authorization": header})
    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"].startswith("Bearer")
    assert set(response.json) == {"message"}


def test_a_bearer_header_wins_over_the_cookie(owner_client, make_key):
    key = make_key("read:product")
    response = owner_client.get("/auth/me", headers={"Authorization": f"Bearer {key.secret}"})
    assert response.status_code == 403  # the key, not the owner's session, is the caller
    bad = owner_client.get("/auth/me", headers={"Authorization": "Bearer eck_" + "B" * 43})
    assert bad.status_code == 401


def test_keys_never_manage_keys(make_key, customer_client):
    key = make_key("read:product", "write:content")
    for method, path in [
        ("get", "/api-keys"),
        ("post", "/api-keys"),
        ("get", f"/api-keys/{key.key['id']}"),
        ("delete", f"/api-keys/{key.key['id']}"),
    ]:
        response = getattr(key, method)(path, json={"label": "x", "scopes": ["read:product"]})
        assert response.status_code == 403, (method, path)
        assert response.json["message"] == (
            "API keys cannot manage API keys; sign in as an administrator."
        )
    anonymous = key.application.test_client().get("/api-keys")
    assert anonymous.status_code == 401
    assert (
        "sign in" in anonymous.json["message"]
        and "send an API key" not in anonymous.json["message"]
    )
    assert customer_client.get("/api-keys").status_code == 403
    assert customer_client.post("/api-keys", json={}).status_code == 403


def _session_only_operations(app):
    """(method, path, operation) of every documented route that never accepts a key."""
    spec = app.extensions["flask-smorest"]["apis"][""]["ext_obj"].spec.to_dict()
    for path, item in spec["paths"].items():
        for method, operation in item.items():
            if method == "parameters":
                continue
            security = operation.get("security")
            if security and {} not in security and {"apiKey": []} not in security:
                yield method, path, operation


def test_every_route_that_never_accepts_keys_tells_a_key_to_sign_in(make_key, client):
    """A key gets 403 saying keys cannot be used there and to sign in; the anonymous get a
    401 that does not suggest sending a key; the description lists both (issue 22)."""
    key = make_key("read:product", "write:content")
    checked = []
    for method, path, operation in _session_only_operations(key.application):
        url = re.sub(r"\{[^}]+\}", "01a20e925c89eb2464bf66cb", path)
        assert {"401", "403"} <= set(operation["responses"]), (method, path)
        assert "API key is refused with 403" in operation["description"], (method, path)
        response = getattr(key, method)(url, json={})
        assert response.status_code == 403, (method, path, response.json)
        message = response.json["message"]
        assert message.startswith("API keys cannot") and "; sign in as " in message, message
        anonymous = getattr(client, method)(url, json={})
        assert anonymous.status_code == 401, (method, path)
        assert "send an API key" not in anonymous.json["message"], (method, path)
        checked.append(path)
    assert {"/api-keys", "/users", "/auth/me", "/roles"} <= set(checked)


def test_key_resolution_is_one_query_and_writes_nothing(app, make_key, sql_count):
    key = make_key("read:product")
    key.get("/auth/me")  # a key's first use is written at once; later ones are batched
    with sql_count() as counted:
        for _ in range(5):
            key.get("/auth/me")
    assert counted == {"statements": 0, "writes": 0}  # the key is kept (shop/auth/keys/cache)
    app.extensions["shop.key_cache"].seconds = 0  # SHOP_API_KEY_CACHE_SECONDS=0
    with sql_count() as counted:
        for _ in range(5):
            key.get("/auth/me")
    assert counted == {"statements": 5, "writes": 0}  # the lookup; usage is counted in memory


def test_last_use_and_address_are_shown(owner_client, make_key, clock):
    key = make_key("read:product")
    assert owner_client.get(f"/api-keys/{key.key['id']}").json["last_used_at"] is None
    key.get("/products", environ_base={"REMOTE_ADDR": "198.51.100.4"})
    record = owner_client.get(f"/api-keys/{key.key['id']}").json
    assert record["last_used_at"] == iso(clock())
    assert record["last_used_ip"] == "198.51.100.4"


def test_the_cli_lists_a_key_used_seconds_ago_as_the_api_shows_it(
    make_app, owner_client, make_key, clock
):
    """``flask api-keys list`` runs in its own process: a key's first use is written by the
    request itself, so the CLI never says ``never`` for a key the API shows as used."""
    key = make_key("read:product")
    key.get("/products")
    shown = owner_client.get(f"/api-keys/{key.key['id']}").json["last_used_at"]
    assert shown == iso(clock())
    other_process = make_app(prepare=False)  # its own usage buffer, as the CLI's process
    listed = other_process.test_cli_runner().invoke(args=["api-keys", "list"])
    assert listed.exit_code == 0, listed.output
    line = next(line for line in listed.output.splitlines() if key.key["id"] in line)
    assert f"last_used={shown}" in line


def test_key_lookup_uses_the_unique_index(app):
    from shop import db
    from shop.auth.keys.bearer import _RESOLVE

    with app.app_context():
        if db.get_db().engine != "sqlite":
            pytest.skip("query plan checked on SQLite; PostgreSQL uses the same unique index")
        plan = db.query("EXPLAIN QUERY PLAN " + _RESOLVE, {"token_hash": "x"})
    first = plan[0]["detail"]
    assert "USING INDEX" in first and "api_keys" in first


# -- rights ceiling -------------------------------------------------------------------------


def test_nobody_grants_a_scope_beyond_their_permissions(make_admin):
    editor = make_admin("editor")
    ok = editor.post("/api-keys", json={"label": "x", "scopes": ["write:product"]})
    assert ok.status_code == 201
    refused = editor.post("/api-keys", json={"label": "x", "scopes": ["read:order"]})
    assert refused.status_code == 403
    assert "read:order" in refused.json["message"]


def test_deactivating_the_owner_of_a_key_makes_it_fail(owner_client, make_admin, make_key):
    editor = make_admin("editor")
    key = make_key("read:product", by=editor)
    assert key.get("/auth/me").status_code == 403
    owner_client.patch(f"/users/{editor.user_id}", json={"active": False})
    response = key.get("/auth/me")
    assert response.status_code == 401 and "owner" in response.json["message"]
    owner_client.patch(f"/users/{editor.user_id}", json={"active": True})
    assert key.get("/auth/me").status_code == 403


def test_demoting_the_owner_narrows_the_key_at_once(owner_client, make_admin, make_key):
    from shop.actor import Actor
    from shop.auth.keys import bearer as api_keys

    editor = make_admin("editor")
    key = make_key("read:product", "write:product", by=editor)
    app = owner_client.application

    def rights():
        with app.test_request_context():
            return api_keys.resolve(key.secret, Actor(ip="127.0.0.1"), lambda use: None).permissions

    assert rights() == {"products.read", "products.create", "products.update", "products.delete"}
    owner_client.post("/roles", json={"name": "reader", "permissions": ["products.read"]})
    owner_client.patch(f"/users/{editor.user_id}", json={"role": "reader"})
    assert rights() == {"products.read"}
    # Rights are kept per the texts the request's statement read (permissions.key_rights):
    # promoted back, the key's next request holds its write rights again.
    owner_client.patch(f"/users/{editor.user_id}", json={"role": "editor"})
    assert rights() == {"products.read", "products.create", "products.update", "products.delete"}


# -- visibility (spec 5.3) -------------------------------------------------------------------


def test_visibility_two_administrators_and_an_owner(owner_client, make_admin, make_key, app):
    alice = make_admin("editor", email="alice@example.com")
    bob = make_admin("editor", email="bob@example.com")
    a = make_key("read:product", by=alice, label="alice's").key
    b = make_key("read:product", by=bob, label="bob's").key
    cli = app.test_cli_runner().invoke(
        args=["api-keys", "create", "--name", "bootstrap", "--scopes", "read:product"]
    )
    assert cli.exit_code == 0

    def labels(client):
        return sorted(k["label"] for k in client.get("/api-keys").json["items"])

    assert labels(alice) == ["alice's"]
    assert labels(bob) == ["bob's"]
    assert labels(owner_client) == ["alice's", "bob's", "bootstrap"]
    cli_key = next(k for k in owner_client.get("/api-keys").json["items"] if k["source"] == "cli")
    assert cli_key["owner"] is None
    assert alice.get(f"/api-keys/{b['id']}").status_code == 404
    assert alice.delete(f"/api-keys/{b['id']}").status_code == 404
    assert alice.delete(f"/api-keys/{cli_key['id']}").status_code == 404
    assert owner_client.get(f"/api-keys/{b['id']}").json["owner"]["email"] == "bob@example.com"
    assert owner_client.delete(f"/api-keys/{a['id']}").status_code == 204
    assert alice.get(f"/api-keys/{a['id']}").json["status"] == "revoked"


def test_list_filters_by_status(owner_client, make_key, clock):
    make_key("read:product", label="live")
    soon = make_key("read:product", label="soon", expires_at=in_an_hour(clock)).key
    gone = make_key("read:product", label="gone").key
    owner_client.delete(f"/api-keys/{gone['id']}")
    clock.advance(3601)
    for status, expected in [("active", "live"), ("expired", "soon"), ("revoked", "gone")]:
        items = owner_client.get(f"/api-keys?status={status}").json["items"]
        assert [k["label"] for k in items] == [expected], status
    assert soon["status"] == "active"
    assert owner_client.get("/api-keys?status=dormant").status_code == 400


# -- leaked keys and audit ------------------------------------------------------------------


def test_anyone_can_revoke_a_leaked_key(owner_client, make_key, client):
    key = make_key("read:product")
    answer = client.post("/api-keys/revoke-leaked", json={"secret": key.secret})
    unknown = client.post("/api-keys/revoke-leaked", json={"secret": "eck_" + "Z" * 43})
    garbage = client.post("/api-keys/revoke-leaked", json={"secret": "hello"})
    assert answer.status_code == unknown.status_code == garbage.status_code == 202
    assert answer.json == unknown.json == garbage.json
    assert key.get("/auth/me").status_code == 401
    revoked = owner_client.get("/audit-log?event=api_key.revoked").json["items"]
    assert len(revoked) == 1 and revoked[0]["details"]["by"] == "leaked-key report"


def test_leak_reports_are_rate_limited(make_app):
    client = make_app(RATELIMIT_ENABLED=True).test_client()
    for _ in range(10):
        assert client.post("/api-keys/revoke-leaked", json={"secret": "x"}).status_code == 202
    assert client.post("/api-keys/revoke-leaked", json={"secret": "x"}).status_code == 429


def test_key_events_are_audited_and_refusals_at_most_once_a_minute(owner_client, make_key, clock):
    key = make_key("read:product", "write:content")
    owner_client.delete(f"/api-keys/{key.key['id']}")
    for _ in range(3):
        key.get("/auth/me")
    clock.advance(61)
    key.get("/auth/me")
    created = owner_client.get("/audit-log?event=api_key.created").json["items"]
    assert created[0]["details"]["scopes"] == ["read:product", "write:content"]
    assert created[0]["actor"]["label"] == "owner@example.com"
    revoked = owner_client.get("/audit-log?event=api_key.revoked").json["items"]
    assert revoked[0]["actor"]["label"] == "owner@example.com"
    refused = owner_client.get("/audit-log?event=api_key.refused").json["items"]
    assert len(refused) == 2 and refused[0]["details"]["reason"] == "revoked"


def test_no_secret_or_hash_in_any_response_or_log(owner_client, app, caplog):
    with caplog.at_level(logging.DEBUG):
        created = owner_client.post("/api-keys", json={"label": "x", "scopes": ["read:product"]})
        secret = created.json["secret"]
        key = bearer(app, secret)
        texts = []
        for response in (
            key.get("/auth/me"),
            owner_client.get("/api-keys"),
            owner_client.get("/audit-log"),
            owner_client.delete(f"/api-keys/{created.json['id']}"),
            key.get("/auth/me"),
            app.test_client().post("/api-keys/revoke-leaked", json={"secret": secret}),
        ):
            texts.append(response.get_data(as_text=True))
            texts.append(str(response.headers))
        result = app.test_cli_runner().invoke(args=["api-keys", "list"])
        texts.append(result.output)
    texts.append(caplog.text)
    for text in texts:
        assert secret not in text
        assert sha256(secret) not in text
    assert PASSWORD not in caplog.text


def test_all_scopes_are_the_documented_ones():
    resources = {
        "product",
        "category",
        "collection",
        "content",
        "order",
        "customer",
        "setting",
        "webhook",
        "shipping",
        "tax",
        "discount",
        "return",
        "draft_order",
    }
    assert set(ALL_SCOPES) == {f"{a}:{r}" for a in ("read", "write") for r in resources}


def test_a_chosen_key_id_creates_one_key_however_often_it_is_posted(app):
    from shop import db
    from shop.auth.keys import store as key_store
    from shop.errors import Conflict

    with app.test_request_context():
        key_id = db.new_id()
        key_store.create("once", ["read:product"], None, None, key_id=key_id)
        with pytest.raises(Conflict):
            key_store.create("twice", ["read:product"], None, None, key_id=key_id)
        labels = [r["label"] for r in db.query("SELECT label FROM api_keys")]
    assert labels == ["once"]
