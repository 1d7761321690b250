"""The EU prior price (issue 40): every price change recorded, whatever wrote it; the lowest
price of the 30 days before the current one took effect, null after 30 days of it; a
compare-at price must be above the price. Through HTTP on both engines (the clock moved by
hand), the rule itself directly."""

import csv
import io
from datetime import UTC, datetime, timedelta

from shop import db
from shop.catalogue import prices
from shop.clock import iso

DAY = 86400


def _variant(client, product_id):
    (variant,) = client.get(f"/products/{product_id}/variants").json["items"]
    return variant


def _price(client, product_id, variant_id, cents):
    response = client.patch(
        f"/products/{product_id}/variants/{variant_id}", json={"price_cents": cents}
    )
    assert response.status_code == 200, response.json
    return response.json


def test_1000_then_1200_then_900_shows_1000_then_null_after_30_days(app, clock, owner_client):
    product = owner_client.post("/products", json={"name": "Mug", "price_cents": 1000}).json
    variant = product["variants"][0]
    assert variant["prior_price_cents"] is None and product["prior_price_cents"] is None
    clock.advance(5 * DAY)
    assert _price(owner_client, product["id"], variant["id"], 1200)["prior_price_cents"] == 1000
    clock.advance(5 * DAY)
    shown = _price(owner_client, product["id"], variant["id"], 900)
    assert shown["prior_price_cents"] == 1000
    public = app.test_client()
    assert public.get(f"/products/{product['id']}").json["prior_price_cents"] == 1000
    assert public.get(f"/products/{product['id']}").json["variants"][0]["prior_price_cents"] == 1000
    assert _variant(public, product["id"])["prior_price_cents"] == 1000
    (listed,) = public.get("/products").json["items"]
    assert listed["prior_price_cents"] == 1000
    (found,) = public.get("/products?q=mug&sort=relevance").json["items"]
    assert found["prior_price_cents"] == 1000
    history = public.get(f"/products/{product['id']}/variants/{variant['id']}/price-history")
    assert history.status_code == 200
    assert [item["price_cents"] for item in history.json["items"]] == [900, 1200, 1000]
    clock.advance(29 * DAY)
    assert _variant(public, product["id"])["prior_price_cents"] == 1000
    clock.advance(DAY)  # 30 days of 900: no reduction to announce any more
    assert _variant(public, product["id"])["prior_price_cents"] is None
    assert public.get(f"/products/{product['id']}").json["prior_price_cents"] is None
    missing = public.get(f"/products/{product['id']}/variants/nosuchvariant/price-history")
    assert missing.status_code == 404


def test_compare_at_must_be_above_the_price(owner_client):
    product = owner_client.post("/products", json={"name": "Cup", "price_cents": 900}).json
    url = f"/products/{product['id']}/variants/{product['variants'][0]['id']}"
    for compare_at in (900, 800):
        refused = owner_client.patch(url, json={"compare_at_price_cents": compare_at})
        assert refused.status_code == 400
        assert refused.json["message"].startswith("compare_at_price_cents: must be above")
    assert owner_client.patch(url, json={"compare_at_price_cents": 1200}).status_code == 200
    refused = owner_client.patch(url, json={"price_cents": 1200})
    assert refused.status_code == 400 and "compare_at_price_cents" in refused.json["message"]
    created = owner_client.post(
        f"/products/{product['id']}/variants",
        json={"options": {}, "price_cents": 500, "compare_at_price_cents": 500},
    )
    assert created.status_code in (400, 409)


def test_product_edits_and_imports_record_history(app, clock, owner_client):
    product = owner_client.post("/products", json={"name": "Pot", "price_cents": 2000}).json
    clock.advance(DAY)
    assert (
        owner_client.put(f"/products/{product['id']}", json={"price_cents": 1500}).status_code
        == 200
    )
    clock.advance(DAY)
    out = io.StringIO()
    writer = csv.DictWriter(out, ["product_slug", "product_name", "variant_price"])
    writer.writeheader()
    writer.writerow(
        {"product_slug": product["slug"], "product_name": "Pot", "variant_price": "12.00"}
    )
    imported = owner_client.post(
        "/products/import", data=out.getvalue().encode(), content_type="text/csv"
    )
    assert imported.status_code == 200, imported.json
    variant = _variant(owner_client, product["id"])
    history = owner_client.get(f"/products/{product['id']}/variants/{variant['id']}/price-history")
    assert [item["price_cents"] for item in history.json["items"]] == [1200, 1500, 2000]
    assert variant["prior_price_cents"] == 1500  # the lowest of the 30 days before 12.00
    # The worker's pruning keeps what a prior price can need: the price in effect.
    clock.advance(100 * DAY)
    with app.app_context():
        assert prices.prune() == 2
        assert (
            db.value(
                "SELECT COUNT(*) FROM variant_prices WHERE variant_id = :id", {"id": variant["id"]}
            )
            == 1
        )


def _at(days: float) -> str:
    return iso(datetime(2026, 1, 1, tzinfo=UTC) + timedelta(days=days))


def test_the_rule_itself():
    moment = datetime(2026, 1, 1, tzinfo=UTC) + timedelta(days=12)
    history = [(1000, _at(0)), (1200, _at(5)), (900, _at(10))]
    assert prices.prior(history, moment) == 1000
    assert prices.prior(history[:1], moment) is None  # never changed
    assert prices.prior(history, moment + timedelta(days=28)) is None
    # 40 days of 1000, then 1200 for 20 days, then 900: the window opens on 1000's last days.
    history = [(500, _at(-100)), (1000, _at(-40)), (1200, _at(20)), (900, _at(40))]
    assert prices.prior(history, datetime(2026, 2, 15, tzinfo=UTC)) == 1000
    # A price set and replaced in the same instant was never applied.
    assert prices.prior([(1000, _at(0)), (100, _at(5)), (900, _at(5))], moment) == 1000


def _listed_and_shown(client) -> dict[str, tuple]:
    """Each product's prior price as the list shows it and as its own page does."""
    listed = client.get("/products?page_size=100").json["items"]
    return {
        item["id"]: (item["prior_price_cents"], client.get(f"/products/{item['id']}").json[
            "prior_price_cents"])
        for item in listed
    }  # fmt: skip


def test_a_list_shows_what_each_product_page_shows_at_the_window_edges(app, clock, owner_client):
    """The list reads only the histories that may give a prior price (issue 42): a price
    changed 30 days ago less a second, then exactly 30 days ago; two changes in one instant,
    alone or after an older price."""
    public = app.test_client()
    edge = owner_client.post("/products", json={"name": "Edge", "price_cents": 1000}).json
    instant = owner_client.post("/products", json={"name": "Instant", "price_cents": 1000}).json
    _price(owner_client, instant["id"], instant["variants"][0]["id"], 800)  # in its first instant
    twice = owner_client.post("/products", json={"name": "Twice", "price_cents": 1000}).json
    clock.advance(DAY)
    _price(owner_client, edge["id"], edge["variants"][0]["id"], 1200)
    _price(owner_client, twice["id"], twice["variants"][0]["id"], 1200)  # never applied
    _price(owner_client, twice["id"], twice["variants"][0]["id"], 900)
    assert _listed_and_shown(public) == {
        edge["id"]: (1000, 1000), instant["id"]: (None, None), twice["id"]: (1000, 1000)
    }  # fmt: skip
    clock.advance(30 * DAY - 1)
    assert _listed_and_shown(public)[edge["id"]] == (1000, 1000)
    clock.advance(1)  # 30 days of 1200: nothing to announce any more
    assert _listed_and_shown(public)[edge["id"]] == (None, None)
    clock.advance(DAY)
    assert set(_listed_and_shown(public).values()) == {(None, None)}


def test_a_list_counts_only_active_variants_at_the_products_price(app, clock, owner_client):
    """A variant at another price, or inactive, has a prior price the product does not show."""
    public = app.test_client()
    sizes = [{"name": "Size", "values": ["S", "M", "L"]}]
    shirt = owner_client.post(
        "/products", json={"name": "Shirt", "price_cents": 2000, "options": sizes}
    ).json
    url = f"/products/{shirt['id']}/variants"
    made = {}
    for size, cents in (("M", 2500), ("L", 3000)):
        response = owner_client.post(url, json={"options": {"Size": size}, "price_cents": cents})
        assert response.status_code == 201, response.json
        made[size] = response.json["id"]
    clock.advance(DAY)
    _price(owner_client, shirt["id"], made["M"], 2600)  # prior 2500, not at the shown 20.00
    _price(owner_client, shirt["id"], made["L"], 2000)  # prior 3000, at the shown 20.00
    assert _listed_and_shown(public) == {shirt["id"]: (3000, 3000)}
    hidden = owner_client.patch(f"{url}/{made['L']}", json={"active": False})
    assert hidden.status_code == 200, hidden.json
    assert _listed_and_shown(public) == {shirt["id"]: (None, None)}
    assert _listed_and_shown(owner_client) == {shirt["id"]: (None, None)}


def _has_a_prior(history: list[tuple[int, str]], moment) -> bool:
    """The list's SQL condition (``prices._CANDIDATE_HISTORIES``): a price newer than the
    window's start and one set before the latest."""
    ats = [at for _, at in history]
    return bool(ats) and max(ats) > iso(moment - prices.WINDOW) and min(ats) < max(ats)


def test_the_lists_condition_is_exactly_when_the_rule_gives_a_price():
    """Over many histories (days apart, same instants, edges of the window): the rows the
    list skips are those ``prior`` answers None for."""
    import random

    rng = random.Random(42)
    moment = datetime(2026, 1, 1, tzinfo=UTC) + timedelta(days=60)
    edges = [-1e-6, 0.0, 1e-6]
    for _ in range(3000):
        days = sorted(
            rng.choice([rng.uniform(0, 60), 30 + rng.choice(edges), 60 - rng.choice([0, 1])])
            for _ in range(rng.randint(0, 4))
        )
        if days and rng.random() < 0.3:
            days.append(days[-1])  # a change in the same instant
        history = [(rng.randint(1, 9) * 100, _at(day)) for day in days]
        assert (prices.prior(history, moment) is not None) == _has_a_prior(history, moment)
