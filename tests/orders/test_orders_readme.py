"""The orders walkthrough of docs/orders.md, run as written with curl against gunicorn, twice:
from a new customer to a delivered order."""

import json
import re

import pytest

from tests.conftest import PASSWORD
from tests.ops import test_readme
from tests.ops.test_readme import live, run_walkthrough  # noqa: F401 - live is a fixture
from tests.orders_helpers import product_row

pytestmark = [test_readme.pytestmark, pytest.mark.live]


def test_orders_walkthrough(live, make_app, tmp_path):  # noqa: F811 - live is a fixture
    runs = run_walkthrough(live, tmp_path, "orders-setup", "orders-walkthrough")
    for number, lines in enumerate(runs, start=1):
        assert lines[0:2] == ["first 201", "retry 200"]
        listed = json.loads(lines[2])
        assert listed["total"] == 1  # each run is a new customer, who sees only their order
        assert listed["items"][0]["number"] == f"SO-{number:06d}"
        assert listed["items"][0]["status"] == "pending"
        assert lines[3:6] == ["paid 200", "shipped 200", "delivered 200"]
        order = json.loads(lines[6])
        assert order["status"] == "delivered"
        assert [h["status"] for h in order["status_history"]] == [
            "pending",
            "paid",
            "shipped",
            "delivered",
        ]
        assert order["total_cents"] == 5000
        refused = json.loads(lines[7])
        assert re.fullmatch(
            rf"Order SO-{number:06d} is delivered: .* allowed next: refunded\.", refused["message"]
        )
        assert product_row(make_app(prepare=False), order["items"][0]["product_id"])["stock"] == 1
        assert PASSWORD not in "\n".join(lines)


def test_orders_sync_loop(live, tmp_path):  # noqa: F811 - live is a fixture
    """docs/openapi.md's sync loop, after the walkthrough: every order, once each, with the
    newest updated_at kept for the next run."""
    runs = run_walkthrough(live, tmp_path, "orders-setup", "orders-walkthrough", "orders-sync")
    for number, lines in enumerate(runs, start=1):
        synced = [line.split() for line in lines if re.fullmatch(r"SO-\d{6} \w+ \S+Z", line)]
        assert [row[0] for row in synced] == [f"SO-{n:06d}" for n in range(1, number + 1)]
        assert {row[1] for row in synced} == {"delivered"}
        assert lines[-1] == f"synced {number} orders up to {synced[-1][2]}"


def test_pricing_walkthroughs(live, tmp_path):  # noqa: F811 - live is a fixture
    """docs/orders.md prices a basket in a VAT shop (inclusive) and a US one (exclusive)."""
    runs = run_walkthrough(live, tmp_path, "orders-setup", "pricing-vat", "pricing-us")
    for lines in runs:
        assert lines == [
            "6000 600 0 653 5400",
            "TVA 5.5 113",
            "TVA 20 540",
            "USD 3000 799 337 4136",
            "shipping",
            "USD 3000 799 0 3799",
            "shipping no_tax_rate",
        ]


def test_cart_walkthrough(live, tmp_path):  # noqa: F811 - live is a fixture
    """docs/orders.md's guest cart: filled, priced as the quote, completed twice (201 then
    200), the order read with its token and refused with a wrong one (issue 38)."""
    for lines in run_walkthrough(live, tmp_path, "orders-setup", "cart-walkthrough"):
        assert lines == [
            "line 201",
            "line 201",
            "cart 2 5000 quote 5000",
            "first 201",
            "again 200",
            "pending grace@example.com",
            "wrong token 404",
        ]
