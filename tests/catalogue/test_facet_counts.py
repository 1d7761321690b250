"""The facets' kept counts (migration 0027, issue 42): the triggers keep them equal to a
count of the products through every catalogue write, and the facets they answer equal the
facets counted from the products."""

from shop import db
from shop.catalogue import facet_counts
from tests.catalogue_helpers import Catalogue

SHIRT = [{"name": "Size", "values": ["S", "M", "L"]}, {"name": "Colour", "values": ["Red", "Blue"]}]


def _kept() -> dict:
    rows = db.query("SELECT active, category_id, low AS key, n FROM facet_prices")
    rows += db.query(
        "SELECT active, category_id, name || '=' || value AS key, n FROM facet_options"
    )
    return {(r["active"], r["category_id"], str(r["key"])): r["n"] for r in rows if r["n"]}


def _assert_kept_equals_a_recount(app) -> None:
    with app.app_context():
        kept = _kept()
        with db.transaction():
            facet_counts.recount()
        assert kept == _kept()


def _facets_both_ways(client, query: str = "") -> None:
    """The kept counts' facets equal the facets counted from the products (``created_after``
    a date before any product selects every product, but is answered by counting)."""
    kept = client.get(f"/products/facets{query}")
    counted = client.get(f"/products/facets?created_after=2000-01-01{query.replace('?', '&')}")
    assert kept.status_code == counted.status_code == 200, (kept.json, counted.json)
    assert kept.json == counted.json


def test_the_kept_counts_follow_every_catalogue_write(app, client, owner_client):
    catalogue = Catalogue(owner_client)
    top = catalogue.category(name="Clothes")
    leaf = catalogue.category(name="Shirts", parent_id=top["id"])
    other = catalogue.category(name="Mugs")
    shirt = catalogue.product(options=SHIRT, generate=True, category_id=leaf["id"])
    tee = catalogue.product(options=SHIRT, generate=True, category_id=leaf["id"], price_cents=30000)
    mug = catalogue.product(category_id=other["id"], price_cents=500)
    loose = catalogue.product(price_cents=1500)  # no category
    _assert_kept_equals_a_recount(app)
    for query in (
        "",
        f"?category={top['slug']}",
        f"?category_id={leaf['id']}",
        "?option.Size=M",
        f"?category={top['slug']}&min_price=1000&max_price=2000",
    ):
        _facets_both_ways(client, query)  # fmt: skip
    facets = client.get(f"/products/facets?category={top['slug']}").json
    assert facets["total"] == 2
    assert {v["value"]: v["count"] for v in facets["options"][1]["values"]} == {
        "S": 2, "M": 2, "L": 2}  # fmt: skip

    variants = owner_client.get(f"/products/{shirt['id']}").json["variants"]
    reds = [v for v in variants if v["options"]["Colour"] == "Red"]
    for variant in reds:  # no active red shirt left: Red counts one product fewer
        response = owner_client.patch(
            f"/products/{shirt['id']}/variants/{variant['id']}", json={"active": False}
        )
        assert response.status_code == 200, response.json
    _assert_kept_equals_a_recount(app)
    colours = client.get("/products/facets").json["options"][0]
    assert {v["value"]: v["count"] for v in colours["values"]} == {"Blue": 2, "Red": 1}

    response = owner_client.patch(f"/products/{shirt['id']}/variants/{reds[0]['id']}",
                                  json={"active": True, "price_cents": 99})  # fmt: skip
    assert response.status_code == 200, response.json
    blue = next(v for v in variants if v["options"]["Colour"] == "Blue")
    response = owner_client.delete(f"/products/{shirt['id']}/variants/{blue['id']}")
    assert response.status_code == 204
    _assert_kept_equals_a_recount(app)

    changes = [(tee, {"category_id": other["id"]}), (mug, {"active": False}),
               (loose, {"price_cents": 2600}), (mug, {"category_id": None})]  # fmt: skip
    for product, change in changes:
        response = owner_client.put(f"/products/{product['id']}", json=change)
        assert response.status_code == 200, response.json
        _assert_kept_equals_a_recount(app)
    response = owner_client.delete(f"/products/{tee['id']}")
    assert response.status_code == 204
    _assert_kept_equals_a_recount(app)
    for query in (
        "",
        f"?category={top['slug']}",
        f"?category_id={other['id']}",
        "?option.Colour=Red",
        "?option.Size=S&option.Colour=Red",
        "?max_price=1000",
    ):
        _facets_both_ways(client, query)  # fmt: skip
        _facets_both_ways(owner_client, query)
    _facets_both_ways(owner_client, "?active=false")


def test_the_bands_in_the_database_are_the_codes(app):
    with app.app_context():
        lows = [row["low"] for row in db.query("SELECT low FROM facet_bands ORDER BY low")]
    bands = facet_counts.PRICE_BANDS
    assert lows == [low for low, _ in bands]
    assert all(high + 1 == after for (_, high), (after, _) in zip(bands, bands[1:], strict=False))


_BIG = ("products", "product_variants", "variant_option_values")
_ALIASES = {"p", "v", "o", "o0", "o1", "ov", "o2v", "mine", *_BIG}


def _scans_a_big_table(plan: str) -> bool:
    """Whether ``plan`` reads a whole big table (SQLite ``SCAN p``; PostgreSQL ``Seq Scan``)."""
    for line in plan.splitlines():
        words = line.strip().split()
        if words[:1] == ["SCAN"] and len(words) > 1 and words[1] in _ALIASES:
            return True
        if any(f"Seq Scan on {table} " in line + " " for table in _BIG):
            return True
    return False


def test_the_facets_plans_read_no_big_table_whole(app, client, owner_client, monkeypatch):
    """The statements of a facets request on the kept counts (the catalogue, a category
    tree, a leaf category) read no products, variants or option values at all, nor scan any
    table whole. PostgreSQL is told to avoid sequential scans, which it prefers on the few
    rows of a test (``test_query_plans._plan``): the plan must then find an index. (The
    groups counted from the products, under an option or a search, are not pinned: their
    cost is the matches', docs/performance.md, "Lists and facets at 100k (issue 42)".)"""
    from tests.catalogue.test_query_plans import _plan

    catalogue = Catalogue(owner_client)
    top = catalogue.category(name="Clothes")
    for n in range(6):
        catalogue.product(options=SHIRT, generate=True, category_id=top["id"], price_cents=n * 900)
    seen = []
    for name in ("query", "one", "value"):
        monkeypatch.setattr(db, name, _spy(db, name, seen))
    for query in ("", f"?category={top['slug']}", f"?category_id={top['id']}"):
        seen.clear()
        response = client.get(f"/products/facets{query}")
        assert response.status_code == 200, response.json
        statements = list(seen)
        monkeypatch.undo()
        with app.app_context():
            plans = [_plan(sql, params) for sql, params in statements]
        for name in ("query", "one", "value"):
            monkeypatch.setattr(db, name, _spy(db, name, seen))
        for (sql, _), plan in zip(statements, plans, strict=True):
            assert not _scans_a_big_table(plan), (query, sql, plan)
        assert not any(table in sql for sql, _ in statements for table in _BIG), statements


def _spy(module, name: str, seen: list):
    real = getattr(module, name)

    def spy(sql, params=None):
        seen.append((sql, params or {}))
        return real(sql, params)

    return spy


def _flat(facets: dict) -> dict:
    """Every count of a facets answer by its group and value."""
    counts = {("category", c["id"]): c["count"] for c in facets["categories"]}
    counts |= {("band", b["price_min"]): b["count"] for b in facets["price_bands"]}
    for option in facets["options"]:
        counts |= {(option["name"], v["value"]): v["count"] for v in option["values"]}
    return counts


def test_a_counted_group_is_exact_below_the_cap_and_flagged_at_it(app, client, owner_client):
    """A group counted from the products (a collection, a search, two options) counts its
    first ``FACET_COUNT_CAP`` matches at most: below the cap the answer is exact (the kept
    counts' answer where they answer too), at it ``counts_are_exact`` and ``total_is_exact``
    are false, ``total`` is the cap and no count exceeds the exact one."""
    catalogue = Catalogue(owner_client)
    top = catalogue.category(name="Clothes")
    leaf = catalogue.category(name="Shirts", parent_id=top["id"])
    shirts = [
        catalogue.product(options=SHIRT, generate=True, category_id=(top, leaf)[n % 2]["id"],
                          price_cents=900 + n * 1000)
        for n in range(4)
    ]  # fmt: skip
    picks = catalogue.collection(title="Picks", product_ids=[s["id"] for s in shirts])
    catalogue.product(price_cents=500)  # in no collection
    queries = (
        f"?collection={picks['slug']}",
        f"?collection_id={picks['id']}&option.Size=M",
        "?option.Size=M&option.Colour=Red",
        "?q=product",
        f"?category={top['slug']}&price_min=1000",
    )
    app.config["FACET_COUNT_CAP"] = 6  # more than any of them selects
    exact = {}
    for query in queries:
        response = client.get(f"/products/facets{query}")
        assert response.status_code == 200, response.json
        exact[query] = response.json
        assert response.json["counts_are_exact"] is True, query
        assert response.json["total_is_exact"] is True, query
        assert response.json["total"] == client.get(f"/products{query}").json["total"], query
    assert {v["value"]: v["count"] for v in exact[queries[0]]["options"][1]["values"]} == {
        "S": 4, "M": 4, "L": 4}  # fmt: skip
    _facets_both_ways(client, f"?collection={picks['slug']}&option.Size=M")

    app.config["FACET_COUNT_CAP"] = 2
    for query in queries[:4]:  # four or five products match: the groups reach the cap
        capped = client.get(f"/products/facets{query}").json
        assert capped["counts_are_exact"] is False, query
        assert (capped["total"], capped["total_is_exact"]) == (2, False), query
        assert sum(b["count"] for b in capped["price_bands"]) <= 2, query
        whole = _flat(exact[query])
        assert all(n <= whole.get(key, 0) for key, n in _flat(capped).items()), query
    kept = client.get(f"/products/facets?category={top['slug']}").json
    assert kept["counts_are_exact"] is True  # the kept counts have no cap
    assert kept["total"] == 4


def test_the_counted_groups_read_their_sample_by_index(app, client, owner_client, monkeypatch):
    """A counted group's statements (its first matches, their option values, the variants
    of two options) scan no products, variants or option values whole: the collection's
    key, the option's ``option_products``, the search's index lead, then keys by id."""
    from tests.catalogue.test_query_plans import PRODUCTS, _add_products, _plan, _upgrade

    with app.app_context(), db.transaction():
        _add_products(PRODUCTS)
    catalogue = Catalogue(owner_client)
    shirts = [catalogue.product(options=SHIRT, generate=True) for _ in range(3)]
    picks = catalogue.collection(title="Picks", product_ids=[s["id"] for s in shirts])
    _upgrade(app)
    seen = []
    for query in (
        f"?collection={picks['slug']}",
        f"?collection_id={picks['id']}",
        "?option.Size=M",
        "?option.Size=M&option.Colour=Red",
        "?q=walnut",
    ):
        seen.clear()
        for name in ("query", "one", "value"):
            monkeypatch.setattr(db, name, _spy(db, name, seen))
        response = client.get(f"/products/facets{query}")
        monkeypatch.undo()
        assert response.status_code == 200, response.json
        with app.app_context():
            plans = [(sql, _plan(sql, params)) for sql, params in seen]
        for sql, plan in plans:  # the inactive variants' partial index: those alone
            plan = plan.replace("SCAN v USING INDEX product_variants_inactive", "")
            assert not _scans_a_big_table(plan), (query, sql, plan)
        assert any("LIMIT" in sql for sql, _ in plans), (query, plans)
