"""Draft orders' webhook events (issue 41), on both engines: ``draft_order.created`` and
``draft_order.completed`` once each, beside the order's own ``order.placed``."""

import json

import pytest

from shop import db
from tests.drafts.test_draft_orders import new_draft, shop  # noqa: F401 - fixture
from tests.orders.test_order_json import created, ok
from tests.payment_helpers import emitted, subscribe


@pytest.fixture
def app(make_app):
    return make_app(WEBHOOKS_ALLOW_PRIVATE=True, WEBHOOKS_ALLOW_HTTP=True)


def test_draft_events_reach_a_webhook_once_each(app, owner_client, shop):  # noqa: F811
    subscribe(owner_client, "draft_order.created", "draft_order.completed", "order.placed")
    draft = new_draft(owner_client, shop)
    order = created(
        owner_client.post(
            f"/draft-orders/{draft['id']}/complete", json={"payment_method": "manual"}
        )
    )["order"]
    ok(
        owner_client.post(
            f"/draft-orders/{draft['id']}/complete", json={"payment_method": "manual"}
        )
    )
    assert emitted(app, "draft_order.created", draft["id"]) == 1
    assert emitted(app, "draft_order.completed", draft["id"]) == 1
    assert emitted(app, "order.placed", order["id"]) == 1
    with app.app_context():
        payload = db.value(
            "SELECT payload FROM webhook_events WHERE type = 'draft_order.completed'"
        )
    assert json.loads(payload)["data"]["order_id"] == order["id"]
