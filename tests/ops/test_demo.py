"""``flask demo``: an empty database becomes a small shop that the API and console serve; a
used one is refused unless forced."""

import re

from tests.conftest import login

STATUSES = {"pending", "paid", "shipped", "delivered", "cancelled", "refunded"}


def _printed(output: str) -> dict:
    """The credentials ``flask demo`` printed."""
    found = dict(re.findall(r"^  (owner|editor)\s+\S+\s+(\S+)$", output, re.M))
    found["key"] = re.search(r"^  (eck_\S+)$", output, re.M).group(1)
    return found


def test_demo_fills_an_empty_database_and_the_shop_it_makes_works(app):
    result = app.test_cli_runner().invoke(args=["demo"])
    assert result.exit_code == 0, result.output
    printed = _printed(result.output)
    assert "10 products" in result.output and "6 orders" in result.output

    # A smoke walk: a visitor, the read-only key, the owner and the editor.
    visitor = app.test_client()
    products = visitor.get("/products?page_size=100").json
    assert products["total"] == 9  # the inactive one is hidden
    assert len(visitor.get("/categories").json["items"]) == 4
    assert len(visitor.get("/collections").json["items"]) == 2
    assert visitor.get("/content/home-banner").json["data"]["title"]
    (assam,) = [p for p in products["items"] if p["name"] == "Assam Breakfast"]
    (picture,) = visitor.get(f"/products/{assam['id']}").json["images"]
    shown = visitor.get(picture["url"])
    assert shown.status_code == 200 and shown.mimetype == "image/png" and picture["alt"]
    sizes = visitor.get(f"/products/{assam['id']}/variants").json["items"]
    assert sorted(v["price_cents"] for v in sizes) == [890, 1890, 3790]
    key = {"Authorization": f"Bearer {printed['key']}"}
    orders = visitor.get("/orders?page_size=100", headers=key).json["items"]
    assert {order["status"] for order in orders} == STATUSES
    bought = [
        item for order in orders for item in order["items"] if item["product_id"] == assam["id"]
    ]
    assert bought and bought[0]["unit_price_cents"] == 1890  # the 250 g variant
    assert visitor.get("/customers", headers=key).json["total"] == 4
    refused = visitor.post("/products", json={"name": "x", "price_cents": 1}, headers=key)
    assert refused.status_code == 403 and "write:product" in refused.json["message"]
    owner = app.test_client()
    login(owner, "owner@demo.example", printed["owner"])
    assert owner.get("/auth/me").json["role"] == "owner"
    editor = app.test_client()
    login(editor, "editor@demo.example", printed["editor"])
    made = editor.post("/products", json={"name": "Matcha", "price_cents": 2200})
    assert made.status_code == 201
    assert editor.get("/orders").status_code == 403  # an editor sees no orders


def test_demo_refuses_a_used_database_unless_forced(app):
    runner = app.test_cli_runner()
    assert runner.invoke(args=["demo"]).exit_code == 0
    again = runner.invoke(args=["demo"])
    assert again.exit_code == 1 and "already has 6 orders" in again.output
    skipped = runner.invoke(args=["demo", "--skip-if-used"])
    assert skipped.exit_code == 0 and "Demo skipped" in skipped.output
    total = app.test_client().get("/products").json["total"]
    assert total == 9  # nothing added by the refusals
    forced = runner.invoke(args=["demo", "--force"])
    assert forced.exit_code == 0, forced.output
    tag = re.search(r"\(tag (\w+)\)", forced.output).group(1)
    assert f"owner+{tag}@demo.example" in forced.output
    assert app.test_client().get("/products").json["total"] == 18
