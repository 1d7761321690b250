"""No overselling from carts: 10 guest carts race through a live gunicorn for the last 3
units, on SQLite and on PostgreSQL; and one cart completed by many requests at once makes
one order."""

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from shop import db
from tests.checkout.test_checkout_race import call, server  # noqa: F401 - the live fixture
from tests.orders.test_order_json import created, ok
from tests.orders_helpers import ADDRESS, add_product, product_row

pytestmark = pytest.mark.live  # a process of its own: ./dev test -m 'not live' skips it

CARTS = 10
STOCK = 3


def filled_cart(app, product_id, email) -> str:
    """A guest cart of one unit of ``product_id``, ready to complete; answer its id."""
    guest = app.test_client()
    cart = created(guest.post("/carts"))
    created(
        guest.post(f"/carts/{cart['id']}/lines", json={"product_id": product_id, "quantity": 1})
    )
    ok(guest.patch(f"/carts/{cart['id']}", json={"email": email, "shipping_address": ADDRESS}))
    return cart["id"]


def test_ten_carts_racing_for_the_last_three_units_make_three_orders(server):  # noqa: F811
    app, live = server
    scarce = add_product(app, "Last Teapots", stock=STOCK)
    carts = [filled_cart(app, scarce, f"guest{i}@example.com") for i in range(CARTS)]
    start = threading.Barrier(CARTS)

    def complete(cart_id):
        start.wait()
        return call(f"{live.url}/carts/{cart_id}/complete", {"payment_method": "manual"})

    with ThreadPoolExecutor(max_workers=CARTS) as pool:
        results = list(pool.map(complete, carts))

    statuses = sorted(status for status, _, _ in results)
    assert statuses == [201] * STOCK + [409] * (CARTS - STOCK), statuses
    for status, body, _ in results:
        if status == 409:
            assert "Last Teapots" in body["message"]
    assert product_row(app, scarce)["stock"] == 0
    with app.app_context():
        assert db.value("SELECT COUNT(*) FROM orders") == STOCK
        assert db.value("SELECT COUNT(*) FROM carts WHERE status = 'completed'") == STOCK
        assert db.value("SELECT COUNT(*) FROM carts WHERE status = 'open'") == CARTS - STOCK


def test_one_cart_completed_by_many_requests_at_once_makes_one_order(server):  # noqa: F811
    app, live = server
    teapot = add_product(app, "Teapot", stock=50)
    cart_id = filled_cart(app, teapot, "once@example.com")
    tries = 8
    start = threading.Barrier(tries)

    def complete(_):
        start.wait()
        status, body, _ = call(f"{live.url}/carts/{cart_id}/complete", {"payment_method": "manual"})
        return status, body["order"]["id"], body["order_token"]

    with ThreadPoolExecutor(max_workers=tries) as pool:
        results = list(pool.map(complete, range(tries)))

    assert sorted(status for status, _, _ in results) == [200] * (tries - 1) + [201]
    assert len({order_id for _, order_id, _ in results}) == 1
    assert [token is not None for status, _, token in results if status == 201] == [True]
    assert all(token is None for status, _, token in results if status == 200)
    assert product_row(app, teapot)["stock"] == 49
