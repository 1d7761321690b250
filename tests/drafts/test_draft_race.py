"""No overselling from draft orders: 8 drafts completed at once through a live gunicorn
race for the last 3 units and make exactly 3 orders, on SQLite and on PostgreSQL; one draft
completed by many requests at once makes one order."""

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from shop import db
from tests.checkout.test_checkout_race import call, server  # noqa: F401 - the live fixture
from tests.conftest import PASSWORD, login
from tests.orders.test_order_json import created
from tests.orders_helpers import ADDRESS, add_product, product_row

pytestmark = pytest.mark.live  # a process of its own: ./dev test -m 'not live' skips it

DRAFTS = 8
STOCK = 3


def staff_key(app) -> str:
    """A key with the draft orders' scopes, made by an owner through the API."""
    from shop.auth.users import create_user

    with app.app_context():
        create_user("racer@example.com", "Racer", PASSWORD, "owner", [])
    client = app.test_client()
    login(client, "racer@example.com", PASSWORD)
    body = {"label": "race", "scopes": ["read:draft_order", "write:draft_order"]}
    return created(client.post("/api-keys", json=body))["secret"]


def drafts_of(app, secret, product_id, n) -> list[str]:
    client = app.test_client()
    client.environ_base["HTTP_AUTHORIZATION"] = f"Bearer {secret}"
    body = {"items": [{"product_id": product_id, "quantity": 1}], "shipping_address": ADDRESS}
    return [
        created(client.post("/draft-orders", json={**body, "email": f"d{i}@example.com"}))["id"]
        for i in range(n)
    ]


def race(live, secret, draft_ids) -> list:
    start = threading.Barrier(len(draft_ids))
    headers = {"Authorization": f"Bearer {secret}"}

    def complete(draft_id):
        start.wait()
        url = f"{live.url}/draft-orders/{draft_id}/complete"
        return call(url, {"payment_method": "manual"}, extra_headers=headers)

    with ThreadPoolExecutor(max_workers=len(draft_ids)) as pool:
        return list(pool.map(complete, draft_ids))


def test_drafts_racing_for_the_last_units_make_as_many_orders_as_units(server):  # noqa: F811
    app, live = server
    secret = staff_key(app)
    scarce = add_product(app, "Last Teapots", stock=STOCK)
    results = race(live, secret, drafts_of(app, secret, scarce, DRAFTS))
    statuses = sorted(status for status, _, _ in results)
    assert statuses == [201] * STOCK + [409] * (DRAFTS - STOCK), results
    assert all("Last Teapots" in body["message"] for status, body, _ in results if status == 409)
    assert product_row(app, scarce)["stock"] == 0
    with app.app_context():
        assert db.value("SELECT COUNT(*) FROM orders") == STOCK
        completed = "SELECT COUNT(*) FROM draft_orders WHERE status = 'completed'"
        assert db.value(completed) == STOCK


def test_one_draft_completed_by_many_requests_at_once_makes_one_order(server):  # noqa: F811
    app, live = server
    secret = staff_key(app)
    teapot = add_product(app, "Teapot", stock=50)
    [draft_id] = drafts_of(app, secret, teapot, 1)
    results = race(live, secret, [draft_id] * 6)
    assert sorted(status for status, _, _ in results) == [200] * 5 + [201], results
    assert len({body["order"]["id"] for _, body, _ in results}) == 1
    assert product_row(app, teapot)["stock"] == 49
