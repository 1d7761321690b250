"""The webhook findings of issue 22, through the API, the worker and a real receiver on
127.0.0.1: IPv6 forms that embed a private IPv4 address, payloads the subscriber's owner may
not read, secrets and events behind the creator's rights, ping and replay queued for the
worker, and a webhook that belongs to a person rather than to the key that made it."""

import secrets
import shutil
import time

import pytest

from shop import db
from shop.schema import migrate
from tests.conftest import PASSWORD, login
from tests.orders_helpers import add_product
from tests.webhook_helpers import (
    Misbehaving,
    Receiver,
    create_hook,
    deliveries,
    owner_with_timeout,
    work,
)


@pytest.fixture
def app(make_app):
    """Receivers on this machine over plain http, as in ``tests/webhooks/test_webhooks.py``."""
    return make_app(WEBHOOKS_ALLOW_PRIVATE=True, WEBHOOKS_ALLOW_HTTP=True)


@pytest.fixture
def receiver():
    with Receiver() as server:
        yield server


HOOKS = ["webhooks.read", "webhooks.create", "webhooks.update", "webhooks.delete"]

# Each embeds 127.0.0.1 (or is refused whatever it embeds).
EMBEDDING_FORMS = (
    "::127.0.0.1",  # IPv4-compatible
    "::ffff:127.0.0.1",  # IPv4-mapped
    "::ffff:0:127.0.0.1",  # IPv4-translated
    "64:ff9b::127.0.0.1",  # NAT64
    "64:ff9b:1::7f00:1",  # local-use NAT64
    "2002:7f00:1::1",  # 6to4
    "2001:0:4136:e378:8000:63bf:80ff:fffe",  # Teredo (client 127.0.0.1, obfuscated)
    "fec0::1",  # site-local
)


def test_ipv6_forms_embedding_a_private_ipv4_address_are_refused_at_creation_and_delivery(
    make_app, app, owner_client, receiver
):
    strict = make_app(prepare=False, WEBHOOKS_ALLOW_HTTP=True)
    owner = strict.test_client()
    owner.post("/auth/login", json={"email": "owner@example.com", "password": PASSWORD})
    port = receiver.url.split(":")[2].split("/")[0]
    for form in EMBEDDING_FORMS:
        url = f"http://[{form}]:{port}/hook"
        refused = owner.post("/webhooks", json={"url": url, "events": ["product.created"]})
        assert refused.status_code == 400, (url, refused.json)
        assert "private" in refused.json["message"]
    public = owner.post(
        "/webhooks", json={"url": "http://[64:ff9b::808:808]/", "events": ["product.created"]}
    )
    assert public.status_code == 201, public.json  # NAT64 of a public address is fine

    # Made where private addresses were allowed; refused at connect time where they are not.
    hook = create_hook(owner_client, f"http://[::127.0.0.1]:{port}/hook", "product.created")
    add_product(app)
    work(make_app(prepare=False, WEBHOOKS_ALLOW_HTTP=True))
    assert receiver.requests == []
    (delivery,) = deliveries(owner_client, hook["id"])
    assert "refused: ::127.0.0.1 resolves to ::127.0.0.1" in delivery["attempts"][0]["error"]


def test_rotating_a_secret_needs_the_rights_of_subscribing_to_the_webhooks_events(
    owner_client, make_admin, make_key, receiver
):
    hook = create_hook(owner_client, receiver.url, "order.placed", "product.created")
    owner_client.post(
        "/roles", json={"name": "hooks", "permissions": ["webhooks.update", "products.read"]}
    )
    without_orders = make_admin("hooks")
    key = make_key("write:webhook")
    # A person is told the permission, a key the scope (issue 28).
    for caller, missing in ((without_orders, "orders.read"), (key, "read:order")):
        refused = caller.post(f"/webhooks/{hook['id']}/rotate-secret")
        assert refused.status_code == 403, refused.json
        assert missing in refused.json["message"] and "whsec_" not in refused.text
    unchanged = owner_client.get(f"/webhooks/{hook['id']}").json
    assert unchanged["previous_secret_expires_at"] is None  # nothing rotated

    with_orders = make_key("write:webhook", "read:order", "read:product")
    rotated = with_orders.post(f"/webhooks/{hook['id']}/rotate-secret")
    assert rotated.status_code == 200 and rotated.json["secret"].startswith("whsec_")


def test_api_key_events_reach_only_owners_who_could_read_the_key(
    app, owner_client, make_admin, make_key, receiver
):
    admin = make_admin("admin")  # holds api_key.read, but sees only its own keys
    theirs = create_hook(admin, receiver.url, "api_key.created", "api_key.revoked")
    owners_key = make_key("read:product", label="owner's key")
    assert admin.get(f"/api-keys/{owners_key.key['id']}").status_code == 404
    work(app)
    assert receiver.requests == []  # the owner's key record did not reach the admin
    (skipped,) = deliveries(admin, theirs["id"])
    assert skipped["status"] == "skipped"
    assert "may not read this record" in skipped["attempts"][0]["error"]
    assert admin.get(f"/webhooks/{theirs['id']}").json["enabled"] is True  # not a lost right

    make_key("read:product", by=admin, label="admin's key")
    work(app)
    assert [e["data"]["label"] for e in receiver.events()] == ["admin's key"]  # its own key


def test_a_key_made_webhook_outlives_its_key_and_is_disabled_when_its_owner_loses_the_right(
    app, owner_client, make_admin, make_key, receiver
):
    owner_client.post(
        "/roles",
        json={"name": "ops", "permissions": [*HOOKS, "api_key.create", "products.read"]},
    )
    ops = make_admin("ops")
    key = make_key("write:webhook", "read:product", by=ops)
    hook = create_hook(key, receiver.url, "product.created")
    assert hook["created_by"] == {"kind": "api_key", "id": key.key["id"]}
    assert owner_client.delete(f"/api-keys/{key.key['id']}").status_code == 204
    add_product(app, name="After the key was revoked")
    work(app)
    assert [e["data"]["name"] for e in receiver.events()] == ["After the key was revoked"]

    ops_role = next(r for r in owner_client.get("/roles").json["items"] if r["name"] == "ops")
    owner_client.put(f"/roles/{ops_role['id']}", json={"permissions": [*HOOKS, "api_key.create"]})
    work(app)  # the worker's minute job notices without any event
    shown = owner_client.get(f"/webhooks/{hook['id']}").json
    assert shown["enabled"] is False and "products.read" in shown["disabled_reason"]
    audit = owner_client.get("/audit-log?event=webhook.disabled").json["items"]
    assert audit and audit[0]["details"]["webhook_id"] == hook["id"]
    with app.app_context():
        mails = db.query("SELECT recipient, subject FROM mail_outbox")
    assert {"recipient": ops.email, "subject": "Webhook disabled: its owner lost a right"} in mails
    add_product(app, name="After the right was lost")
    work(app)
    assert len(receiver.requests) == 1


def test_the_migration_copies_a_key_made_webhooks_scopes_from_its_key(make_app, tmp_path):
    old = tmp_path / "migrations"
    shutil.copytree(migrate.MIGRATIONS_DIR, old)
    (old / "0005_webhook_owner_scopes.sql").unlink()
    app = make_app(prepare=False, MIGRATIONS_DIR=old)
    assert app.test_cli_runner().invoke(args=["db", "upgrade"]).exit_code == 0
    moment = "2026-11-01T00:00:00.000000Z"
    with app.app_context():
        with db.transaction():
            db.execute(
                "INSERT INTO api_keys (id, label, token_hash, scopes, source, created_at)"
                " VALUES ('k1', 'old key', 'x', 'read:product write:webhook', 'cli', :now)",
                {"now": moment},
            )
            for hook_id, key_id, made_with in (("w1", "k1", "api_key"), ("w2", None, "session")):
                db.execute(
                    "INSERT INTO webhooks (id, url, secret, key_id, created_with, created_at,"
                    " updated_at) VALUES (:id, 'https://example.com/', 's', :key, :with, :now,"
                    " :now)",
                    {"id": hook_id, "key": key_id, "with": made_with, "now": moment},
                )
    app.config["MIGRATIONS_DIR"] = migrate.MIGRATIONS_DIR
    assert app.test_cli_runner().invoke(args=["db", "upgrade"]).exit_code == 0
    with app.app_context():
        rows = db.query("SELECT id, scopes FROM webhooks ORDER BY id")
    assert rows == [
        {"id": "w1", "scopes": "read:product write:webhook"},
        {"id": "w2", "scopes": None},
    ]


def test_ping_and_replay_hold_no_web_thread_and_at_most_3_wait_per_webhook(
    make_app, owner_client, make_admin
):
    app, owner = owner_with_timeout(make_app, 1)
    receiver = Misbehaving("silent")  # accepts and never answers
    try:
        hook = create_hook(owner, receiver.url, "product.created")
        first, second = make_admin("admin"), make_admin("admin")
        for client in (owner, first, second):
            started = time.monotonic()
            assert client.post(f"/webhooks/{hook['id']}/ping").status_code == 202
            assert time.monotonic() - started < 1  # queued: the request waits on nobody
        assert receiver.held == []  # nothing was sent by the web process
        busy = first.post(f"/webhooks/{hook['id']}/ping")  # 3 wait already: the 4th waits
        assert busy.status_code == 503 and int(busy.headers["Retry-After"]) > 0
        assert "3 pings or replays" in busy.json["message"]
        work(app)  # the worker makes them (each cut at its 1 s timeout)
        assert len(receiver.held) == 3
    finally:
        receiver.stop()
    pings = [d for d in deliveries(owner, hook["id"]) if d["event_type"] == "webhook.ping"]
    assert len(pings) == 3 and all(d["status"] == "failed" for d in pings)
    assert owner.post(f"/webhooks/{hook['id']}/ping").status_code == 202  # room again


def test_a_ping_the_worker_does_not_take_within_60_s_is_logged_as_not_sent(
    app, clock, owner_client, receiver
):
    hook = create_hook(owner_client, receiver.url, "product.created")
    queued = owner_client.post(f"/webhooks/{hook['id']}/ping")
    assert queued.status_code == 202
    clock.advance(61)  # the worker was down meanwhile
    work(app)
    assert receiver.requests == []  # never sent late
    delivery = owner_client.get(queued.headers["Location"]).json
    assert delivery["status"] == "failed" and delivery["queued"] == []
    (attempt,) = delivery["attempts"]
    assert attempt["id"] == queued.json["id"]
    assert attempt["error"] == "not sent: the worker did not take it within 60 s"


def test_ping_and_replay_are_rate_limited_per_caller(make_app, owner_client, make_admin, receiver):
    app = make_app(
        WEBHOOKS_ALLOW_PRIVATE=True,
        WEBHOOKS_ALLOW_HTTP=True,
        RATELIMIT_ENABLED=True,
        RATELIMIT_KEY_PREFIX=secrets.token_hex(6),
    )
    owner = app.test_client()
    login(owner, "owner@example.com")
    hook = create_hook(owner, receiver.url, "product.created")
    for _ in range(10):
        assert owner.post(f"/webhooks/{hook['id']}/ping").status_code == 202
        work(app)  # sent, so the webhook's queue (3 at most) never refuses one here
    delivery_id = deliveries(owner, hook["id"])[0]["id"]
    for path in (
        f"/webhooks/{hook['id']}/ping",
        f"/webhooks/{hook['id']}/deliveries/{delivery_id}/retry",
    ):
        limited = owner.post(path)
        assert limited.status_code == 429 and "Retry-After" in limited.headers
    other = app.test_client()
    login(other, make_admin("admin").email)
    assert other.post(f"/webhooks/{hook['id']}/ping").status_code == 202  # counted per caller
