"""No overselling: many customers race for the last units through a live gunicorn, on SQLite
and on PostgreSQL. Exactly the stock is sold, every loser gets a 409 naming the product."""

import json
import random
import threading
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import pytest

from shop import db
from shop.db import totals
from tests.conftest import PASSWORD
from tests.live import LiveServer
from tests.orders_helpers import add_product, basket, catalogue_client, product_row

pytestmark = pytest.mark.live  # a process of its own: ./dev test -m 'not live' skips it

BUYERS = 40
STOCK = 5


def call(url, body, cookie=None, extra_headers=None):
    """POST JSON; answer the status, the JSON body and the session cookie it set."""
    headers = {"Content-Type": "application/json", **(extra_headers or {})}
    if cookie:
        headers["Cookie"] = cookie
    request = urllib.request.Request(  # noqa: S310 - a local test server
        url, data=json.dumps(body).encode(), headers=headers, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310
            status, raw, set_cookie = response.status, response.read(), response.headers
    except urllib.error.HTTPError as error:
        status, raw, set_cookie = error.code, error.read(), error.headers
    cookie_header = set_cookie.get("Set-Cookie", "")
    return status, json.loads(raw), cookie_header.split(";", 1)[0] or None


@pytest.fixture
def server(database_url, make_app):
    """A live gunicorn (one process, 16 threads) on the test's database, limits off."""
    app = make_app()  # applies the schema, and lets the test seed and inspect the data
    live = LiveServer(
        {
            "DATABASE_URL": database_url,
            "SHOP_COOKIE_SECURE": "0",  # plain http: the client must get the cookie back
            "SHOP_RATELIMIT_ENABLED": "0",
        },
        threads=16,
    )
    yield app, live
    live.stop()


def test_concurrent_checkouts_never_oversell(server):
    app, live = server
    scarce = add_product(app, "Last Teapots", stock=STOCK)
    plenty = add_product(app, "Cups", stock=1000)
    with ThreadPoolExecutor(max_workers=16) as pool:
        registered = list(
            pool.map(
                lambda i: call(
                    live.url + "/auth/register",
                    {"email": f"buyer{i}@example.com", "password": PASSWORD, "name": f"B{i}"},
                ),
                range(BUYERS),
            )
        )
    assert all(status == 201 for status, _, _ in registered)
    cookies = [cookie for _, _, cookie in registered]

    # Half the baskets list the products the other way round: lock order must not matter.
    bodies = [
        basket((scarce, 1), (plenty, 2)) if i % 2 else basket((plenty, 2), (scarce, 1))
        for i in range(BUYERS)
    ]
    random.shuffle(bodies)
    start = threading.Barrier(BUYERS)

    def buy(i):
        start.wait()
        return call(live.url + "/payments/checkout", bodies[i], cookies[i])

    with ThreadPoolExecutor(max_workers=BUYERS) as pool:
        results = list(pool.map(buy, range(BUYERS)))

    statuses = sorted(status for status, _, _ in results)
    assert statuses == [201] * STOCK + [409] * (BUYERS - STOCK), statuses
    for status, body, _ in results:
        if status == 409:
            assert scarce in body["message"] and "Last Teapots" in body["message"]
    orders = [body for status, body, _ in results if status == 201]
    assert len({order["number"] for order in orders}) == STOCK
    # Numbers from the sequence (PostgreSQL) or the highest plus one (SQLite): distinct, and
    # the next checkout's comes after every one of them.
    numbers = sorted(int(order["number"].removeprefix("SO-")) for order in orders)
    status, later, _ = call(live.url + "/payments/checkout", basket((plenty, 1)), cookies[0])
    assert status == 201 and int(later["number"].removeprefix("SO-")) > numbers[-1] >= STOCK
    assert product_row(app, scarce)["stock"] == 0
    assert product_row(app, plenty)["stock"] == 1000 - 2 * STOCK - 1
    with app.app_context():
        sold = db.value(
            "SELECT SUM(quantity) FROM order_items WHERE product_id = :id", {"id": scarce}
        )
        assert sold == STOCK
        assert db.value("SELECT COUNT(*) FROM orders") == STOCK + 1
        assert db.value(totals.SQL[totals.ORDERS]) == STOCK + 1  # the list's total, unbumped
        assert db.value("SELECT COUNT(*) FROM payments") == STOCK + 1


def test_concurrent_retries_with_one_idempotency_key_place_one_order(server):
    app, live = server
    teapot = add_product(app, "Teapot", stock=50)
    status, _, cookie = call(
        live.url + "/auth/register",
        {"email": "retry@example.com", "password": PASSWORD, "name": "Retry"},
    )
    assert status == 201
    body = basket((teapot, 3))
    tries = 12
    start = threading.Barrier(tries)

    def retry(_):
        start.wait()
        status, order, _ = call(
            live.url + "/payments/checkout", body, cookie, {"Idempotency-Key": "same-key"}
        )
        return status, order["id"]

    with ThreadPoolExecutor(max_workers=tries) as pool:
        results = list(pool.map(retry, range(tries)))

    assert sorted(status for status, _ in results) == [200] * (tries - 1) + [201]
    assert len({order_id for _, order_id in results}) == 1
    assert product_row(app, teapot)["stock"] == 47
    with app.app_context():
        assert db.value("SELECT COUNT(*) FROM orders") == 1


def test_twenty_checkouts_for_the_last_unit_of_a_variant_place_one_order(server):
    app, live = server
    shirt = catalogue_client(app).post(
        "/products",
        json={
            "name": "Shirt",
            "price_cents": 1500,
            "stock": 9,
            "options": [{"name": "Size", "values": ["S", "M"]}],
        },
    )
    assert shirt.status_code == 201, shirt.json
    made = catalogue_client(app).post(
        f"/products/{shirt.json['id']}/variants/generate", json={"stock": 1}
    )
    assert made.status_code == 200 and made.json["total"] == 1, made.json
    last = made.json["items"][0]["id"]  # Size M: one unit; Size S keeps its 9
    buyers = 20
    with ThreadPoolExecutor(max_workers=8) as pool:
        registered = list(
            pool.map(
                lambda i: call(
                    live.url + "/auth/register",
                    {"email": f"v{i}@example.com", "password": PASSWORD, "name": f"V{i}"},
                ),
                range(buyers),
            )
        )
    cookies = [cookie for _, _, cookie in registered]
    start = threading.Barrier(buyers)

    def buy(i):
        start.wait()
        body = {**basket(), "items": [{"variant_id": last, "quantity": 1}]}
        return call(live.url + "/payments/checkout", body, cookies[i])

    with ThreadPoolExecutor(max_workers=buyers) as pool:
        results = list(pool.map(buy, range(buyers)))

    statuses = sorted(status for status, _, _ in results)
    assert statuses == [201] + [409] * (buyers - 1), statuses
    order = next(body for status, body, _ in results if status == 201)
    assert order["items"][0]["variant_id"] == last
    assert order["items"][0]["options"] == {"Size": "M"}
    product = product_row(app, shirt.json["id"])
    assert {v["options"]["Size"]: v["stock"] for v in product["variants"]} == {"S": 9, "M": 0}
    assert product["stock"] == 9 and product["in_stock"]
