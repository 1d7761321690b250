"""The verified-key cache across nodes (shop/auth/keys/cache.py): two apps sharing one
database and one Redis are two nodes; a change made on one is refused on the other within a
second (polled with a bound), and a node without its subscription keeps nothing."""

import secrets
import time
from datetime import timedelta

import pytest

from shop.clock import iso
from tests.catalogue_helpers import Catalogue
from tests.conftest import REDIS_URL, login
from tests.live import free_port

PROPAGATION = 1.0  # seconds: the promise of docs/api-keys.md


def bearer(app, secret, **environ):
    client = app.test_client()
    client.environ_base["HTTP_AUTHORIZATION"] = f"Bearer {secret}"
    client.environ_base.update(environ)
    return client


@pytest.fixture
def nodes(make_app):
    """Two apps on one database and one Redis channel: (a, b)."""
    if not REDIS_URL:
        pytest.skip("Redis case: SHOP_TEST_REDIS_URL is not set")
    shared = {"REDIS_URL": REDIS_URL, "RATELIMIT_KEY_PREFIX": f"t-{secrets.token_hex(6)}"}
    a = make_app(**shared)
    b = make_app(prepare=False, **shared)
    return a, b


def admin_client(app, role, email):
    from shop.auth.users import create_user

    with app.app_context():
        row = create_user(email, role.title(), "correct horse battery staple", role)
    client = app.test_client()
    login(client, email, "correct horse battery staple")
    client.user_id = row["id"]
    return client


def kept(app, node_client, path, secret):
    """Make ``node_client``'s app keep the key: wait (bounded) for its subscription, then ask."""
    cache = app.extensions["shop.key_cache"]
    deadline = time.monotonic() + 5
    while True:
        assert node_client.get(path).status_code == 200
        if cache.listening and cache.get(_hash(secret)) is not None:
            return
        assert time.monotonic() < deadline, "the node never subscribed to Redis"


def _hash(secret):
    import hashlib

    return hashlib.sha256(secret.encode()).hexdigest()


def refused_within(client, path, status, seconds=PROPAGATION):
    """The time until ``client`` gets ``status`` on ``path``, polled; fails past ``seconds``."""
    start = time.monotonic()
    while True:
        response = client.get(path)
        elapsed = time.monotonic() - start
        if response.status_code == status:
            return elapsed
        assert elapsed < seconds, (response.status_code, response.json)


def test_a_key_revoked_on_one_node_is_refused_on_the_other_within_a_second(nodes):
    a, b = nodes
    owner = admin_client(a, "owner", "owner@example.com")
    key = owner.post("/api-keys", json={"label": "sync", "scopes": ["read:product"]}).json
    on_b = bearer(b, key["secret"])
    kept(b, on_b, "/products", key["secret"])

    assert owner.delete(f"/api-keys/{key['id']}").status_code == 204
    assert bearer(a, key["secret"]).get("/products").status_code == 401  # at once here
    refused_within(on_b, "/products", 401)


def test_a_roll_and_an_allow_list_change_reach_the_other_node(nodes):
    a, b = nodes
    owner = admin_client(a, "owner", "owner@example.com")
    key = owner.post("/api-keys", json={"label": "sync", "scopes": ["read:product"]}).json
    rolled = owner.post(f"/api-keys/{key['id']}/roll", json={"grace_seconds": 0}).json
    assert rolled["rolled_from"] == key["id"]
    on_b_old = bearer(b, key["secret"])
    refused_within(on_b_old, "/products", 401)

    on_b = bearer(b, rolled["secret"], REMOTE_ADDR="198.51.100.4")
    kept(b, on_b, "/products", rolled["secret"])
    changed = owner.patch(f"/api-keys/{rolled['id']}", json={"allowed_ips": ["203.0.113.0/24"]})
    assert changed.status_code == 200, changed.json
    refused_within(on_b, "/products", 403)


def test_the_owners_deactivation_and_role_change_reach_the_other_node(nodes):
    a, b = nodes
    owner = admin_client(a, "owner", "owner@example.com")
    admin = admin_client(a, "admin", "admin@example.com")
    body = {"label": "orders", "scopes": ["read:order", "read:product"]}
    key = admin.post("/api-keys", json=body).json
    on_b = bearer(b, key["secret"])
    kept(b, on_b, "/orders", key["secret"])

    # An editor holds no order permission: the key's ceiling falls with its owner's role.
    assert owner.patch(f"/users/{admin.user_id}", json={"role": "editor"}).status_code == 200
    refused_within(on_b, "/orders", 403)
    kept(b, on_b, "/products", key["secret"])

    assert owner.patch(f"/users/{admin.user_id}", json={"active": False}).status_code == 200
    refused_within(on_b, "/products", 401)


def test_a_node_without_its_subscription_keeps_no_key(make_app):
    app = make_app(REDIS_URL=f"redis://127.0.0.1:{free_port()}/0")  # nobody listens there
    owner = admin_client(app, "owner", "owner@example.com")
    key = owner.post("/api-keys", json={"label": "sync", "scopes": ["read:product"]}).json
    client = bearer(app, key["secret"])
    client.get("/products/nothing-here")
    before = app.extensions["shop.db"].stats()["statements"]
    for _ in range(3):
        assert client.get("/products/nothing-here").status_code == 404
    # Each request reads its key (no id matches the route's pattern: no product read).
    assert app.extensions["shop.db"].stats()["statements"] - before == 3


def test_a_keyed_read_with_a_warm_cache_is_one_statement(app, owner_client, make_key, sql_count):
    """The key costs no statement once kept: a keyed read costs what the same read costs
    anonymously (the product and its prior prices, issue 40)."""
    product = Catalogue(owner_client).product()
    key = make_key("read:product")
    assert key.get(f"/products/{product['id']}").status_code == 200
    with sql_count() as anonymous:
        assert app.test_client().get(f"/products/{product['id']}").status_code == 200
    with sql_count() as counted:
        assert key.get(f"/products/{product['id']}").status_code == 200
    assert counted == anonymous == {"statements": 2, "writes": 0}


def test_a_kept_key_is_refused_once_it_expires_or_goes_unused(
    app, owner_client, make_key, clock, sql_count
):
    """The cache keeps when a kept key may stop being active (its expiry, its idle deadline):
    before then no date is read again, from then on it is refused as without the cache."""
    product = Catalogue(owner_client).product()
    path = f"/products/{product['id']}"
    expiring = make_key("read:product", expires_at=iso(clock() + timedelta(seconds=60)))
    idle = make_key("read:product", label="idle")
    assert expiring.get(path).status_code == 200 and idle.get(path).status_code == 200
    with sql_count() as counted:
        assert expiring.get(path).status_code == 200
    assert counted == {"statements": 2, "writes": 0}  # kept: no key statement
    clock.advance(61)
    refused = expiring.get(path)
    assert refused.status_code == 401 and refused.json["message"] == "API key expired."
    assert idle.get(path).status_code == 200  # its idle deadline is 90 days after this use
    clock.advance(90 * 24 * 3600)
    refused = idle.get(path)
    assert refused.status_code == 401
    assert refused.json["message"] == "API key expired unused: it was not used for 90 days."
