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
