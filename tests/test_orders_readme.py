"""The README's orders walkthrough, run as written with curl against gunicorn: from a new
customer to a delivered order."""

import json

import pytest

from tests import test_readme
from tests.conftest import PASSWORD
from tests.orders_helpers import add_product, product_row
from tests.test_readme import live, run_walkthrough  # noqa: F401 - live is a fixture

pytestmark = test_readme.pytestmark


@pytest.fixture
def setup_block(make_app, monkeypatch):
    """The README's product block; until POST /products exists, its sign-in and a seed.

    Answers an app on the live server's database, to look at the stock afterwards.
    """
    app = make_app()
    rules = app.url_map.iter_rules()
    if not any(r.rule == "/products" and "POST" in r.methods for r in rules):
        product = add_product(app, "Teapot", price_cents=2500, stock=3, sku="TP-1")
        readme_block = test_readme.readme_block

        def without_products_api(name):
            block = readme_block(name)
            if name == "orders-setup":
                block = block.split("curl -sf -b admin.txt")[0] + f"PRODUCT={product}\n"
            return block

        monkeypatch.setattr(test_readme, "readme_block", without_products_api)
    return app


def test_orders_walkthrough(live, setup_block, tmp_path):  # noqa: F811 - live is a fixture
    lines = run_walkthrough(live, tmp_path, "orders-setup", "orders-walkthrough")
    assert lines[0:2] == ["first 201", "retry 200"]
    listed = json.loads(lines[2])
    assert listed["total"] == 1
    assert listed["items"][0]["number"] == "SO-000001"
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
    assert "allowed next: refunded" in refused["message"]
    assert product_row(setup_block, order["items"][0]["product_id"])["stock"] == 1
    assert PASSWORD not in "\n".join(lines)
