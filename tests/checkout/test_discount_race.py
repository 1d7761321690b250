"""Discount codes under concurrency, through a live gunicorn on both engines (issue 26): a
usage limit of 1 with 10 concurrent checkouts gives exactly one discounted order, and a
once-per-customer code holds across two concurrent checkouts of one customer."""

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from shop import db
from tests.checkout.test_checkout_race import call, server  # noqa: F401 - the live server fixture
from tests.conftest import PASSWORD
from tests.orders_helpers import add_product, basket

pytestmark = pytest.mark.live  # a process of its own: ./dev test -m 'not live' skips it

BUYERS = 10


def discount(app, **body) -> None:
    """Create a code through ``POST /discounts`` with a CLI-made key."""
    result = app.test_cli_runner().invoke(
        args=["api-keys", "create", "--name", "codes", "--scopes", "write:discount"]
    )
    assert result.exit_code == 0, result.output
    client = app.test_client()
    client.environ_base["HTTP_AUTHORIZATION"] = f"Bearer {result.output.split()[-1]}"
    assert client.post("/discounts", json=body).status_code in (201, 204)


def register(live, name: str) -> str:
    status, _, cookie = call(
        live.url + "/auth/register",
        {"email": f"{name}@example.com", "password": PASSWORD, "name": name},
    )
    assert status == 201
    return cookie


def together(count: int, work) -> list:
    """Run ``work(i)`` for ``count`` threads released at once."""
    start = threading.Barrier(count)

    def run(i):
        start.wait()
        return work(i)

    with ThreadPoolExecutor(max_workers=count) as pool:
        return list(pool.map(run, range(count)))


def test_usage_limit_and_once_per_customer_hold_under_concurrency(server):  # noqa: F811
    app, live = server
    tea = add_product(app, "Tea", price_cents=1000, stock=1000)
    discount(app, code="ONE", kind="fixed", value=300, usage_limit=1)
    discount(app, code="MINE", kind="percent", value="50", once_per_customer=True)
    with ThreadPoolExecutor(max_workers=BUYERS) as pool:
        cookies = list(pool.map(lambda i: register(live, f"buyer{i}"), range(BUYERS)))

    body = {**basket((tea, 1)), "discount_code": "one"}
    results = together(BUYERS, lambda i: call(live.url + "/payments/checkout", body, cookies[i]))
    statuses = sorted(status for status, _, _ in results)
    assert statuses == [201] + [400] * (BUYERS - 1), statuses
    for status, answer, _ in results:
        if status == 400:
            assert answer["message"].startswith("discount_code: usage_limit_reached: ")
        else:
            assert answer["discount_cents"] == 300 and answer["total_cents"] == 700

    body = {**basket((tea, 1)), "discount_code": "MINE"}
    results = together(2, lambda _: call(live.url + "/payments/checkout", body, cookies[0]))
    assert sorted(status for status, _, _ in results) == [201, 400]
    refused = next(answer for status, answer, _ in results if status == 400)
    assert refused["message"].startswith("discount_code: already_used: ")
    with app.app_context():
        counts = {
            row["code"]: (row["times_used"], row["uses"])
            for row in db.query(
                "SELECT d.code, d.times_used, (SELECT COUNT(*) FROM orders o"
                " WHERE o.discount_id = d.id) AS uses FROM discounts d"
            )
        }
        assert counts == {"ONE": (1, 1), "MINE": (1, 1)}
        assert db.value("SELECT COUNT(*) FROM orders") == 2
