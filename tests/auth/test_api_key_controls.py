"""API keys that lead the field (issue 14): rolling with a grace window, PATCH, idle expiry,
allowed_ips behind a trusted proxy, per-key limits, usage without a write per request, and
the lifecycle audit entries. Through the HTTP API and the CLI, on both engines; time moves
with the Clock fixture."""

import re
from datetime import timedelta

import pytest

from shop.clock import iso
from tests.conftest import PASSWORD, login

DAY = 24 * 3600


def bearer(app, secret, **environ):
    """A client that sends ``secret`` as its Bearer token (and ``environ`` on each request)."""
    client = app.test_client()
    client.environ_base["HTTP_AUTHORIZATION"] = f"Bearer {secret}"
    client.environ_base.update(environ)
    return client


def audit(owner_client, event):
    return owner_client.get(f"/audit-log?event=api_key.{event}").json["items"]


def create(owner_client, **body):
    body = {"label": "sync", "scopes": ["read:product"], **body}
    response = owner_client.post("/api-keys", json=body)
    assert response.status_code == 201, response.json
    return response.json


def run_jobs(app):
    """``flask jobs run --once``: the worker's periodic jobs, as the Procfile runs them."""
    result = app.test_cli_runner().invoke(args=["jobs", "run", "--once"])
    assert result.exit_code == 0, result.output


def owned_app(make_app, **config):
    """An app with ``config``, and its owner signed in."""
    app = make_app(**config)
    owner = app.test_client()
    from shop.auth.users import create_user

    with app.app_context():
        create_user("owner@example.com", "Owner", PASSWORD, "owner")
    login(owner, "owner@example.com")
    return app, owner


# -- rolling --------------------------------------------------------------------------------


def test_roll_keeps_the_old_key_for_the_grace_window_only(owner_client, app, clock):
    expiry = iso(clock() + timedelta(days=30))
    old = create(
        owner_client,
        expires_at=expiry,
        allowed_ips=["127.0.0.1"],
        rate_limit_per_minute=100,
    )
    response = owner_client.post(f"/api-keys/{old['id']}/roll", json={"grace_seconds": 3600})
    assert response.status_code == 201, response.json
    new = response.json
    assert re.fullmatch(r"eck_[A-Za-z0-9_-]{43}", new["secret"]) and new["secret"] != old["secret"]
    for field in ("label", "scopes", "expires_at", "owner", "allowed_ips", "source"):
        assert new[field] == old[field], field
    assert new["rate_limit_per_minute"] == 100
    assert new["rolled_from"] == old["id"] and new["id"] != old["id"]
    before = owner_client.get(f"/api-keys/{old['id']}").json
    assert before["rolled_to"] == new["id"]
    assert before["expires_at"] == iso(clock() + timedelta(seconds=3600))
    assert "secret" not in owner_client.get(f"/api-keys/{new['id']}").json

    old_key, new_key = bearer(app, old["secret"]), bearer(app, new["secret"])
    clock.advance(3599)
    assert old_key.get("/products").status_code == 200
    assert new_key.get("/products").status_code == 200
    clock.advance(2)
    refused = old_key.get("/products")
    assert refused.status_code == 401 and "rolled" in refused.json["message"]
    assert new_key.get("/products").status_code == 200
    after = owner_client.get(f"/api-keys/{old['id']}").json
    assert after["status"] == "expired" and after["expired_reason"] == "rolled"

    rolled = audit(owner_client, "rolled")
    assert len(rolled) == 1
    assert rolled[0]["details"]["successor_id"] == new["id"]
    assert rolled[0]["details"]["grace_seconds"] == 3600
    assert rolled[0]["actor"]["label"] == "owner@example.com"
    assert new["secret"] not in str(rolled) and old["secret"] not in str(rolled)


def test_roll_defaults_to_a_day_and_never_extends_an_earlier_expiry(owner_client, clock):
    key = create(owner_client)
    new = owner_client.post(f"/api-keys/{key['id']}/roll", json={}).json
    assert owner_client.get(f"/api-keys/{key['id']}").json["expires_at"] == iso(
        clock() + timedelta(days=1)
    )
    assert new["expires_at"] is None
    soon = create(owner_client, expires_at=iso(clock() + timedelta(minutes=5)))
    owner_client.post(f"/api-keys/{soon['id']}/roll", json={"grace_seconds": DAY})
    assert owner_client.get(f"/api-keys/{soon['id']}").json["expires_at"] == soon["expires_at"]


def test_roll_with_no_grace_refuses_the_old_key_at_once(owner_client, app):
    key = create(owner_client)
    new = owner_client.post(f"/api-keys/{key['id']}/roll", json={"grace_seconds": 0}).json
    assert bearer(app, key["secret"]).get("/products").status_code == 401
    assert bearer(app, new["secret"]).get("/products").status_code == 200


def test_roll_can_change_scopes_within_the_callers_rights(make_admin, app):
    editor = make_admin("editor")
    key = create(editor)
    wider = editor.post(f"/api-keys/{key['id']}/roll", json={"scopes": ["read:order"]})
    assert wider.status_code == 403 and "read:order" in wider.json["message"]
    bad = editor.post(f"/api-keys/{key['id']}/roll", json={"scopes": ["read:nothing"]})
    assert bad.status_code == 400 and "read:nothing" in bad.json["message"]
    assert editor.get(f"/api-keys/{key['id']}").json["rolled_to"] is None  # nothing written
    ok = editor.post(f"/api-keys/{key['id']}/roll", json={"scopes": ["write:product"]})
    assert ok.status_code == 201 and ok.json["scopes"] == ["write:product"]


def test_the_owner_rolling_an_editors_key_cannot_widen_it_past_the_editor(
    owner_client, make_admin, app
):
    """The ceiling is the key owner's permissions, not those of whoever rolls it (issue 22)."""
    editor = make_admin("editor")
    key = create(editor)
    wider = owner_client.post(
        f"/api-keys/{key['id']}/roll", json={"scopes": ["read:product", "read:order"]}
    )
    assert wider.status_code == 403, wider.json
    assert "read:order" in wider.json["message"] and "owner" in wider.json["message"]
    assert owner_client.get(f"/api-keys/{key['id']}").json["rolled_to"] is None
    assert audit(owner_client, "rolled") == []
    ok = owner_client.post(f"/api-keys/{key['id']}/roll", json={"scopes": ["write:product"]})
    assert ok.status_code == 201 and ok.json["scopes"] == ["write:product"]
    assert ok.json["owner"]["id"] == editor.user_id


@pytest.mark.parametrize(
    "body, words",
    [
        ({"grace_seconds": -1}, "grace_seconds"),
        ({"grace_seconds": 7 * DAY + 1}, "grace_seconds"),
        ({"grace_seconds": 1.5}, "grace_seconds"),
        ({"grace_seconds": "60"}, "grace_seconds"),
        ({"grace": 60}, "grace"),
    ],
)
def test_bad_roll_requests_are_400_and_change_nothing(owner_client, body, words):
    key = create(owner_client)
    response = owner_client.post(f"/api-keys/{key['id']}/roll", json=body)
    assert response.status_code == 400 and words in response.json["message"]
    assert owner_client.get("/api-keys").json["total"] == 1


def test_rolling_a_revoked_expired_or_rolled_key_is_409(owner_client, make_admin, clock):
    revoked = create(owner_client)
    owner_client.delete(f"/api-keys/{revoked['id']}")
    expired = create(owner_client, expires_at=iso(clock() + timedelta(seconds=60)))
    rolled = create(owner_client)
    assert owner_client.post(f"/api-keys/{rolled['id']}/roll", json={}).status_code == 201
    clock.advance(61)
    for key, words in ((revoked, "revoked"), (expired, "expired"), (rolled, "already rolled")):
        response = owner_client.post(f"/api-keys/{key['id']}/roll", json={})
        assert response.status_code == 409 and words in response.json["message"]
    someone = make_admin("editor")
    assert someone.post(f"/api-keys/{rolled['id']}/roll", json={}).status_code == 404


def test_roll_through_the_cli(app, owner_client):
    key = create(owner_client)
    runner = app.test_cli_runner()
    result = runner.invoke(args=["api-keys", "roll", key["id"], "--grace", "600"])
    assert result.exit_code == 0, result.output
    secret = result.output.strip().splitlines()[-1]
    assert re.fullmatch(r"eck_[A-Za-z0-9_-]{43}", secret)
    assert "cannot be shown again" in result.output and "600 s" in result.output
    assert bearer(app, secret).get("/products").status_code == 200
    again = runner.invoke(args=["api-keys", "roll", key["id"]])
    assert again.exit_code == 1 and "already rolled" in again.output
    missing = runner.invoke(args=["api-keys", "roll", "nope"])
    assert missing.exit_code == 1 and "No API key" in missing.output
    bad = runner.invoke(args=["api-keys", "roll", key["id"], "--grace", "9999999"])
    assert bad.exit_code != 0 and "grace" in bad.output


# -- PATCH ----------------------------------------------------------------------------------


def test_patch_changes_label_addresses_and_limit_not_scopes(owner_client, make_admin):
    key = create(owner_client)
    url = f"/api-keys/{key['id']}"
    changed = owner_client.patch(
        url,
        json={
            "label": "nightly sync",
            "allowed_ips": ["10.0.0.0/8", "2001:DB8::/32", "10.0.0.0/8"],
            "rate_limit_per_minute": 60,
        },
    )
    assert changed.status_code == 200, changed.json
    assert changed.json["label"] == "nightly sync"
    assert changed.json["allowed_ips"] == ["10.0.0.0/8", "2001:db8::/32"]
    assert changed.json["rate_limit_per_minute"] == 60
    cleared = owner_client.patch(url, json={"allowed_ips": [], "rate_limit_per_minute": None})
    assert cleared.json["allowed_ips"] is None and cleared.json["rate_limit_per_minute"] is None
    assert cleared.json["label"] == "nightly sync"
    updated = audit(owner_client, "updated")
    assert updated[-1]["details"]["changes"]["allowed_ips"] == ["10.0.0.0/8", "2001:db8::/32"]
    assert make_admin("editor").patch(url, json={"label": "x"}).status_code == 404
    owner_client.delete(url)
    assert owner_client.patch(url, json={"label": "x"}).status_code == 409


@pytest.mark.parametrize(
    "body, words",
    [
        ({"scopes": ["read:order"]}, "roll"),
        ({"allowed_ips": ["10.0.0.1/8"]}, "did you mean 10.0.0.0/8"),
        ({"allowed_ips": ["example.com"]}, "'example.com'"),
        ({"allowed_ips": ["2001:db8::/129"]}, "2001:db8::/129"),
        ({"allowed_ips": "10.0.0.0/8"}, "allowed_ips"),
        ({"rate_limit_per_minute": 0}, "rate_limit_per_minute"),
        ({"rate_limit_per_minute": "10"}, "rate_limit_per_minute"),
        ({"label": ""}, "label"),
    ],
)
def test_bad_patches_are_400_and_change_nothing(owner_client, body, words):
    key = create(owner_client, rate_limit_per_minute=5)
    response = owner_client.patch(f"/api-keys/{key['id']}", json=body)
    assert response.status_code == 400 and words in response.json["message"], response.json
    after = owner_client.get(f"/api-keys/{key['id']}").json
    assert after["label"] == "sync" and after["allowed_ips"] is None
    assert after["rate_limit_per_minute"] == 5


# -- allowed_ips behind a trusted proxy -----------------------------------------------------


@pytest.mark.parametrize(
    "address, allowed",
    [
        ("203.0.113.9", True),
        ("203.0.114.1", False),
        ("2001:db8:1::7", True),
        ("2001:db9::1", False),
        ("198.51.100.7", True),
    ],
)
def test_allowed_ips_match_ipv4_and_ipv6_ranges_behind_a_trusted_proxy(make_app, address, allowed):
    app, owner = owned_app(make_app, TRUSTED_PROXIES=1)
    key = create(owner, allowed_ips=["203.0.113.0/24", "2001:db8::/32", "198.51.100.7"])
    client = bearer(app, key["secret"], REMOTE_ADDR="127.0.0.1")
    response = client.get("/products", headers={"X-Forwarded-For": f"192.0.2.1, {address}"})
    if allowed:
        assert response.status_code == 200, response.json
    else:
        assert response.status_code == 403
        assert address in response.json["message"] and "203.0.113.0/24" in response.json["message"]
        assert "2001:db8::/32" in response.json["message"]


@pytest.mark.parametrize(
    "rule, address, allowed",
    [
        ("::ffff:127.0.0.1", "127.0.0.1", True),
        ("::ffff:127.0.0.1", "::ffff:127.0.0.1", True),
        ("::/0", "127.0.0.1", True),
        ("::/0", "203.0.113.5", True),
        ("::ffff:198.51.100.0/120", "198.51.100.77", True),
        ("::ffff:198.51.100.0/120", "198.51.101.1", False),
        ("127.0.0.1", "::ffff:127.0.0.1", True),
        ("2001:db8::/32", "127.0.0.1", False),
        ("0.0.0.0/0", "2001:db8::1", False),
    ],
)
def test_ipv4_mapped_rules_and_clients_match_either_way(owner_client, app, rule, address, allowed):
    """An IPv4 client is also ::ffff:<it>: IPv6 rules that contain it admit it (issue 22)."""
    key = create(owner_client, allowed_ips=[rule])
    response = bearer(app, key["secret"], REMOTE_ADDR=address).get("/products")
    assert response.status_code == (200 if allowed else 403), response.json


def test_without_a_trusted_proxy_x_forwarded_for_is_ignored(owner_client, app):
    key = create(owner_client, allowed_ips=["203.0.113.0/24"])
    client = bearer(app, key["secret"], REMOTE_ADDR="127.0.0.1")
    spoofed = client.get("/products", headers={"X-Forwarded-For": "203.0.113.9"})
    assert spoofed.status_code == 403 and "127.0.0.1" in spoofed.json["message"]
    direct = bearer(app, key["secret"], REMOTE_ADDR="203.0.113.200")
    assert direct.get("/products").status_code == 200


@pytest.mark.parametrize(
    "forwarded",
    ["<script>alert(1)</script>", "203.0.113.9:4431", "fe80::1%<b>", "unknown", ""],
)
def test_a_forwarded_value_that_is_not_an_address_is_never_stored(make_app, clock, forwarded):
    """Behind a trusted proxy, X-Forwarded-For that is no IP address is ignored: the TCP
    peer stays the address in last_used_ip, the audit log and the refusal (issue 22)."""
    app, owner = owned_app(make_app, TRUSTED_PROXIES=1)
    key = create(owner)
    fenced = create(owner, label="fenced", allowed_ips=["203.0.113.0/24"])
    headers = {"X-Forwarded-For": forwarded}
    client = bearer(app, key["secret"], REMOTE_ADDR="192.0.2.10")
    assert client.get("/products", headers=headers).status_code == 200
    refused = bearer(app, fenced["secret"], REMOTE_ADDR="192.0.2.10")
    response = refused.get("/products", headers=headers)
    assert response.status_code == 403 and "192.0.2.10" in response.json["message"]
    owner.post("/auth/logout")
    owner.post(
        "/auth/login",
        json={"email": "owner@example.com", "password": PASSWORD},
        headers=headers,
        environ_base={"REMOTE_ADDR": "192.0.2.11"},
    )
    clock.advance(61)  # the usage batch, with its new_address entry, is written
    assert client.get("/products", headers=headers).status_code == 200
    shown = owner.get(f"/api-keys/{key['id']}").json
    assert shown["last_used_ip"] == "192.0.2.10"
    entries = owner.get("/audit-log").json["items"]
    assert {e["ip"] for e in entries} <= {None, "127.0.0.1", "192.0.2.10", "192.0.2.11"}
    assert [e["details"]["ip"] for e in audit(owner, "new_address")] == ["192.0.2.10"]


def test_a_forwarded_address_is_stored_in_one_canonical_form(make_app):
    app, owner = owned_app(make_app, TRUSTED_PROXIES=1)
    key = create(owner)
    client = bearer(app, key["secret"], REMOTE_ADDR="127.0.0.1")
    client.get("/products", headers={"X-Forwarded-For": "::FFFF:198.51.100.4"})
    assert owner.get(f"/api-keys/{key['id']}").json["last_used_ip"] == "198.51.100.4"


# -- idle expiry ----------------------------------------------------------------------------


def test_a_key_unused_for_the_idle_days_expires_unused(owner_client, app, clock):
    key = create(owner_client)
    used = create(owner_client, label="used")
    client, used_client = bearer(app, key["secret"]), bearer(app, used["secret"])
    clock.advance(89 * DAY)
    login(owner_client, "owner@example.com")  # the session ended long ago
    assert used_client.get("/products").status_code == 200
    record = owner_client.get(f"/api-keys/{key['id']}").json
    assert record["status"] == "active"
    assert record["idle_expires_at"] == iso(clock() + timedelta(days=1))
    clock.advance(DAY)
    login(owner_client, "owner@example.com")
    refused = client.get("/products")
    assert refused.status_code == 401
    assert refused.json["message"] == "API key expired unused: it was not used for 90 days."
    assert used_client.get("/products").status_code == 200  # used a day ago: still alive
    record = owner_client.get(f"/api-keys/{key['id']}").json
    assert record["status"] == "expired" and record["expired_reason"] == "unused"
    expired = owner_client.get("/api-keys?status=expired").json["items"]
    assert [k["id"] for k in expired] == [key["id"]]
    active = owner_client.get("/api-keys?status=active").json["items"]
    assert [k["id"] for k in active] == [used["id"]]
    run_jobs(app)  # the worker's sweep, never a request's
    entries = audit(owner_client, "expired_unused")
    assert [e["details"]["key_id"] for e in entries] == [key["id"]]
    assert owner_client.delete(f"/api-keys/{key['id']}").status_code == 204
    assert owner_client.get(f"/api-keys/{key['id']}").json["status"] == "revoked"


def test_idle_expiry_can_be_turned_off(make_app, clock):
    app, owner = owned_app(make_app, API_KEY_IDLE_DAYS=0)
    key = create(owner)
    clock.advance(400 * DAY)
    assert bearer(app, key["secret"]).get("/products").status_code == 200
    login(owner, "owner@example.com")
    assert owner.get(f"/api-keys/{key['id']}").json["idle_expires_at"] is None


def test_keys_expiring_within_seven_days_are_audited_once(owner_client, app, clock):
    soon = create(owner_client, expires_at=iso(clock() + timedelta(days=8)))
    create(owner_client, label="later", expires_at=iso(clock() + timedelta(days=30)))
    clock.advance(DAY + 61)
    login(owner_client, "owner@example.com")  # the session ended meanwhile
    clock.advance(61)
    run_jobs(app)
    run_jobs(app)
    entries = audit(owner_client, "expiring")
    assert [e["details"]["key_id"] for e in entries] == [soon["id"]]
    assert entries[0]["details"]["expires_at"] == soon["expires_at"]


# -- usage without a write per request ------------------------------------------------------


def test_usage_is_counted_without_a_write_per_request(
    owner_client, app, make_app, clock, sql_count
):
    key = create(owner_client, allowed_ips=["198.51.100.0/24"])
    here = bearer(app, key["secret"], REMOTE_ADDR="198.51.100.4")
    there = bearer(app, key["secret"], REMOTE_ADDR="198.51.100.9")
    outside = bearer(app, key["secret"], REMOTE_ADDR="203.0.113.1")
    assert here.get("/products").status_code == 200  # a first use is written at once
    with sql_count() as counted:
        for _ in range(5):
            assert here.get("/products").status_code == 200
        assert here.get("/audit-log").status_code == 403  # no scope for it
        assert there.get("/products").status_code == 200
        assert outside.get("/products").status_code == 403  # not an allowed address
    # The reads of /products (the key is kept in memory after its first use, shop/auth/keys/cache).
    assert counted == {"statements": 5 + 1, "writes": 0}

    shown = owner_client.get(f"/api-keys/{key['id']}").json
    assert shown["last_used_ip"] == "198.51.100.9" and shown["last_used_at"] == iso(clock())
    usage = shown["usage"]
    assert len(usage["days"]) == 30 and usage["days"][-1]["date"] == clock().date().isoformat()
    assert usage["days"][-1] == {
        "date": clock().date().isoformat(),
        "requests": 9,
        "unauthorized": 0,
        "forbidden": 2,
        "rate_limited": 0,
    }
    assert (usage["requests"], usage["forbidden"]) == (9, 2)

    # Another process (a second app on the same database) sees only the first use until the
    # flush...
    other = make_app(prepare=False).test_client()
    login(other, "owner@example.com")
    assert other.get(f"/api-keys/{key['id']}").json["usage"]["requests"] == 1
    # ...which the first request after the interval does, once, after its response.
    clock.advance(61)
    here.get("/products")
    stored = other.get(f"/api-keys/{key['id']}").json
    assert stored["usage"]["requests"] == 10 and stored["usage"]["forbidden"] == 2
    assert stored["last_used_ip"] == "198.51.100.4" and stored["last_used_at"] == iso(clock())
    new = audit(owner_client, "new_address")
    assert sorted(e["details"]["ip"] for e in new) == ["198.51.100.4", "198.51.100.9"]
    assert sum(e["details"]["first_use"] for e in new) == 1
    assert all(e["actor"]["id"] == key["id"] for e in new)
    assert "203.0.113.1" not in str(new)  # refused: not a use
    # A known address is not audited again.
    clock.advance(61)
    here.get("/products")
    clock.advance(61)
    here.get("/products")
    assert len(audit(owner_client, "new_address")) == 2


def test_a_refused_request_is_not_a_use_of_the_key(make_app, clock):
    """403 (address, scope) and 429 answers move neither last_used_at nor the idle expiry:
    only a request the key was allowed to make is a use (issue 22)."""
    app, owner = owned_app(make_app, RATELIMIT_ENABLED=True, RATELIMIT_KEY_PREFIX=f"u{id(clock)}")
    key = create(owner, allowed_ips=["127.0.0.1"], rate_limit_per_minute=2)
    client = bearer(app, key["secret"], REMOTE_ADDR="127.0.0.1")
    created_at = clock()

    def shown():
        return owner.get(f"/api-keys/{key['id']}").json

    clock.advance(3600)
    outside = bearer(app, key["secret"], REMOTE_ADDR="203.0.113.1")
    assert outside.get("/products").status_code == 403  # not an allowed address
    assert client.get("/audit-log").status_code == 403  # no scope for it
    assert shown()["last_used_at"] is None
    assert shown()["idle_expires_at"] == iso(created_at + timedelta(days=90))
    clock.advance(3600)
    assert client.get("/products").status_code == 200
    used_at = clock()
    clock.advance(3600)
    assert client.get("/products").status_code == 429  # its limit of 2 a minute
    clock.advance(61)  # the usage batch is written after this refused request
    assert client.get("/products").status_code == 429
    record = shown()
    assert record["last_used_at"] == iso(used_at) and record["last_used_ip"] == "127.0.0.1"
    assert record["idle_expires_at"] == iso(used_at + timedelta(days=90))
    assert (record["usage"]["forbidden"], record["usage"]["rate_limited"]) == (2, 2)
    other = make_app(prepare=False).test_client()  # what the batch stored
    login(other, "owner@example.com")
    assert other.get(f"/api-keys/{key['id']}").json["last_used_at"] == iso(used_at)


# -- per-key limit --------------------------------------------------------------------------


def test_a_key_over_its_own_limit_gets_429_with_retry_after(make_app):
    app, owner = owned_app(
        make_app, RATELIMIT_ENABLED=True, RATELIMIT_KEY_PREFIX=f"t{id(make_app)}"
    )
    limited = create(owner, rate_limit_per_minute=3)
    free = create(owner, label="free")
    client, free_client = bearer(app, limited["secret"]), bearer(app, free["secret"])
    assert [client.get("/products").status_code for _ in range(3)] == [200] * 3
    refused = client.get("/products")
    assert refused.status_code == 429
    assert 1 <= int(refused.headers["Retry-After"]) <= 60
    assert "3 requests per minute" in refused.json["message"]
    assert [free_client.get("/products").status_code for _ in range(5)] == [200] * 5
    usage = owner.get(f"/api-keys/{limited['id']}").json["usage"]
    assert usage["requests"] == 4 and usage["rate_limited"] == 1


@pytest.mark.live
def test_a_worker_that_stops_normally_writes_the_counts_it_holds(make_app, database_url):
    import urllib.request

    from shop import db
    from shop.auth.keys import store as key_store
    from tests.live import LiveServer

    app = make_app()
    with app.test_request_context():
        record, secret = key_store.create("counted", ["read:product"], None, None)
    server = LiveServer({"DATABASE_URL": database_url, "SHOP_RATELIMIT_ENABLED": "0"})
    try:
        for _ in range(3):
            request = urllib.request.Request(
                server.url + "/products", headers={"Authorization": f"Bearer {secret}"}
            )
            with urllib.request.urlopen(request, timeout=10) as answer:  # noqa: S310 - 127.0.0.1
                assert answer.status == 200
        with app.app_context():  # only the first use is written: the interval has not passed
            assert db.value("SELECT SUM(requests) FROM api_key_usage") == 1
    finally:
        server.stop()  # SIGTERM: gunicorn's worker exits normally
    with app.app_context():
        assert (
            db.value("SELECT requests FROM api_key_usage WHERE key_id = :k", {"k": record["id"]})
            == 3
        )
        assert db.value("SELECT last_used_ip FROM api_keys WHERE id = :k", {"k": record["id"]}) == (
            "127.0.0.1"
        )
