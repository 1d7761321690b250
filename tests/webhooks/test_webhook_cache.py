"""The enabled webhooks each node keeps (shop/webhooks/outbox.py, ``Subscribers``): a webhook
made, changed or deleted on one node is seen by another sharing its Redis within a second
(polled with a bound), by the node that made the change at once, and a node that still keeps
a deleted or disabled webhook queues nothing for it and fails nothing."""

import secrets
import time

import pytest

from tests.conftest import REDIS_URL, login
from tests.webhook_helpers import create_hook, deliveries

PROPAGATION = 1.0  # seconds: the promise of docs/webhooks.md, as the API keys'
PASSWORD = "correct horse battery staple"
HOOK_URL = "http://127.0.0.1:9/hook"  # never called: no worker runs here


def owner_on(app, create=True):
    """A signed-in owner's client on ``app`` (the same owner on every node)."""
    from shop.auth.users import create_user

    if create:
        with app.app_context():
            create_user("owner@example.com", "Owner", PASSWORD, "owner")
    client = app.test_client()
    login(client, "owner@example.com", PASSWORD)
    return client


def add_product(client) -> None:
    """``POST /products``: emits ``product.created``."""
    body = {"name": f"Pot {secrets.token_hex(3)}", "price_cents": 900, "stock": 1}
    response = client.post("/products", json=body)
    assert response.status_code == 201, response.json


def listening(app) -> None:
    """Wait (bounded) until ``app`` hears the other nodes (its cache is usable)."""
    announcements = app.extensions["shop.announcements"]
    deadline = time.monotonic() + 5
    while not announcements.usable():
        assert time.monotonic() < deadline, "the node never subscribed to Redis"


def kept_ids(app) -> set | None:
    """The ids of the webhooks ``app`` keeps (None: it keeps nothing now)."""
    kept = app.extensions["shop.webhook_subscribers"].kept
    return None if kept is None else {row["id"] for row in kept[1]}


@pytest.fixture
def hook_app(make_app):
    return make_app(WEBHOOKS_ALLOW_PRIVATE=True, WEBHOOKS_ALLOW_HTTP=True)


@pytest.fixture
def nodes(make_app):
    """Two apps on one database and one Redis: (a, b)."""
    if not REDIS_URL:
        pytest.skip("Redis case: SHOP_TEST_REDIS_URL is not set")
    shared = {
        "REDIS_URL": REDIS_URL,
        "RATELIMIT_KEY_PREFIX": f"t-{secrets.token_hex(6)}",
        "WEBHOOKS_ALLOW_PRIVATE": True,
        "WEBHOOKS_ALLOW_HTTP": True,
    }
    a = make_app(**shared)
    b = make_app(prepare=False, **shared)
    return a, b


def test_a_webhook_made_on_one_node_gets_the_others_events_within_a_second(nodes):
    a, b = nodes
    on_a, on_b = owner_on(a), owner_on(b, create=False)
    listening(b)
    add_product(on_b)
    assert kept_ids(b) == set()  # b keeps "no webhook"

    hook = create_hook(on_a, HOOK_URL, "product.created")
    start = time.monotonic()
    while True:
        add_product(on_b)
        if deliveries(on_a, hook["id"]):
            break
        assert time.monotonic() - start < PROPAGATION, "b never saw the new webhook"


def test_a_webhook_deleted_or_disabled_on_one_node_is_dropped_by_the_other(nodes):
    a, b = nodes
    on_a, on_b = owner_on(a), owner_on(b, create=False)
    listening(b)
    kept = create_hook(on_a, HOOK_URL, "product.created")
    gone = create_hook(on_a, HOOK_URL, "product.created")
    add_product(on_b)
    assert kept_ids(b) == {kept["id"], gone["id"]}
    assert len(deliveries(on_a, gone["id"])) == 1

    for change in (
        lambda: on_a.patch(f"/webhooks/{gone['id']}", json={"enabled": False}),
        lambda: on_a.delete(f"/webhooks/{gone['id']}"),
    ):
        assert change().status_code in (200, 204)
        start = time.monotonic()
        while kept_ids(b) not in (None, {kept["id"]}):
            assert time.monotonic() - start < PROPAGATION, "b kept the changed webhook"
        add_product(on_b)
        assert kept_ids(b) == {kept["id"]}
    assert len(deliveries(on_a, kept["id"])) == 3


def test_one_node_without_redis_sees_its_own_changes_at_once(hook_app):
    client = owner_on(hook_app)
    add_product(client)
    assert kept_ids(hook_app) == set()

    hook = create_hook(client, HOOK_URL, "product.created")
    add_product(client)
    assert len(deliveries(client, hook["id"])) == 1

    # Its events changed: product.created no longer reaches it.
    changed = client.patch(f"/webhooks/{hook['id']}", json={"events": ["order.placed"]})
    assert changed.status_code == 200, changed.json
    add_product(client)
    assert len(deliveries(client, hook["id"])) == 1

    assert client.delete(f"/webhooks/{hook['id']}").status_code == 204
    add_product(client)
    assert kept_ids(hook_app) == set()


def test_a_node_that_still_keeps_a_deleted_or_disabled_webhook_queues_nothing_for_it(make_app):
    # Two nodes without Redis: b never hears a's changes (until its kept rows expire).
    settings = {"WEBHOOKS_ALLOW_PRIVATE": True, "WEBHOOKS_ALLOW_HTTP": True}
    a = make_app(**settings)
    b = make_app(prepare=False, **settings)
    on_a, on_b = owner_on(a), owner_on(b, create=False)
    disabled = create_hook(on_a, HOOK_URL, "product.created")
    deleted = create_hook(on_a, HOOK_URL, "product.created")
    add_product(on_b)
    assert kept_ids(b) == {disabled["id"], deleted["id"]}

    assert on_a.patch(f"/webhooks/{disabled['id']}", json={"enabled": False}).status_code == 200
    assert on_a.delete(f"/webhooks/{deleted['id']}").status_code == 204
    add_product(on_b)  # 201: the delivery to a deleted webhook is not written, nor refused
    assert kept_ids(b) == {disabled["id"], deleted["id"]}
    assert len(deliveries(on_a, disabled["id"])) == 1
    assert on_a.get(f"/webhooks/{deleted['id']}").status_code == 404


def test_the_worker_reads_the_webhooks_each_time_so_a_web_process_change_reaches_it(make_app):
    # One node without Redis: the web process and the worker (`flask jobs run`) share the
    # database and nothing else, so the worker keeps no webhooks: an event it emits reaches a
    # webhook the web process made a moment before.
    settings = {"WEBHOOKS_ALLOW_PRIVATE": True, "WEBHOOKS_ALLOW_HTTP": True}
    web = make_app(**settings)
    worker = make_app(prepare=False, **settings)
    on_web = owner_on(web)
    result = worker.test_cli_runner().invoke(args=["jobs", "run", "--once"])
    assert result.exit_code == 0, result.output
    with worker.app_context():
        from shop import db, webhooks

        with db.transaction():
            webhooks.emit("product.created", "p-before", lambda subject: {"id": subject})
    hook = create_hook(on_web, HOOK_URL, "product.created")
    with worker.app_context():
        with db.transaction():
            webhooks.emit("product.created", "p-after", lambda subject: {"id": subject})
    assert [d["event_type"] for d in deliveries(on_web, hook["id"])] == ["product.created"]
