"""The webhook findings of issue 22, through the API, the worker and a real receiver on
127.0.0.1: IPv6 forms that embed a private IPv4 address, payloads the subscriber's owner may
not read, secrets and events behind the creator's rights, ping and replay queued for the
worker, and a webhook that belongs to a person rather than to the key that made it."""

import pytest

from tests.conftest import PASSWORD
from tests.orders_helpers import add_product
from tests.webhook_helpers import Receiver, create_hook, deliveries, work


@pytest.fixture
def app(make_app):
    """Receivers on this machine over plain http, as in ``tests/test_webhooks.py``."""
    return make_app(WEBHOOKS_ALLOW_PRIVATE=True, WEBHOOKS_ALLOW_HTTP=True)


@pytest.fixture
def receiver():
    with Receiver() as server:
        yield server


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
    for caller in (without_orders, key):
        refused = caller.post(f"/webhooks/{hook['id']}/rotate-secret")
        assert refused.status_code == 403, refused.json
        assert "orders.read" in refused.json["message"] and "whsec_" not in refused.text
    unchanged = owner_client.get(f"/webhooks/{hook['id']}").json
    assert unchanged["previous_secret_expires_at"] is None  # nothing rotated

    with_orders = make_key("write:webhook", "read:order", "read:product")
    rotated = with_orders.post(f"/webhooks/{hook['id']}/rotate-secret")
    assert rotated.status_code == 200 and rotated.json["secret"].startswith("whsec_")
