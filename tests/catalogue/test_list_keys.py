"""A collection's copy of its products' state and sort keys (migration 0039, issue 42): the
triggers keep it equal to the products through every catalogue write, and a collection's
page read from it equals the page read from the products."""

from shop import db
from tests.catalogue_helpers import Catalogue

SORTS = ("-created_at", "created_at", "price", "-price", "name", "-name")
KEYS = ("active", "created_at", "price_cents", "name")


def _assert_keys_are_the_products(app) -> None:
    with app.app_context():
        rows = db.query(
            "SELECT cp.product_active, cp.product_created_at, cp.product_price_cents,"
            " cp.product_name, p.active, p.created_at, p.price_cents, p.name"
            " FROM collection_products cp JOIN products p ON p.id = cp.product_id"
        )
    assert rows
    for row in rows:
        assert [row[f"product_{key}"] for key in KEYS] == [row[key] for key in KEYS], row


def _pages_both_ways(client, collection: dict) -> None:
    """Every sort of the collection, by slug and by id, page by page: from the kept keys, and
    from the products (``created_after`` a date before any product selects every product,
    but takes the products' path)."""
    for sort in SORTS:
        for query in (f"collection={collection['slug']}", f"collection_id={collection['id']}"):
            path = f"/products?{query}&sort={sort}&page_size=2"
            keyed, counted = client.get(path), client.get(path + "&created_after=2000-01-01")
            assert keyed.status_code == counted.status_code == 200, (keyed.json, counted.json)
            assert keyed.json["items"] == counted.json["items"], path
            assert keyed.json["total"] == counted.json["total"], path
            assert keyed.json["total_is_exact"], path
            cursor = keyed.json["next_cursor"]
            while cursor:  # the next pages follow the same keys
                page = client.get(f"/products?{query}&sort={sort}&page_size=2&cursor={cursor}")
                assert page.status_code == 200, page.json
                assert page.json["total"] == keyed.json["total"], path
                cursor = page.json["next_cursor"]


def test_a_collections_keys_follow_every_catalogue_write(app, client, owner_client):
    catalogue = Catalogue(owner_client)
    shirt = catalogue.product(
        name="Shirt",
        options=[{"name": "Size", "values": ["S", "M"]}],
        generate=True,
        price_cents=2500,
    )
    twins = [catalogue.product(name="Mug", price_cents=900) for _ in range(3)]  # ties
    cheap = catalogue.product(name="Apron", price_cents=100)
    ids = [shirt["id"], *(t["id"] for t in twins), cheap["id"]]
    picks = catalogue.collection(slug="picks", product_ids=ids[:4])
    _assert_keys_are_the_products(app)
    _pages_both_ways(client, picks)

    response = owner_client.put(f"/collections/{picks['id']}", json={"product_ids": ids})
    assert response.status_code == 200, response.json
    variant = owner_client.get(f"/products/{shirt['id']}").json["variants"][0]
    changes = [
        (f"/products/{twins[0]['id']}", {"name": "Bowl"}),
        (f"/products/{twins[1]['id']}", {"active": False}),
        (f"/products/{shirt['id']}/variants/{variant['id']}", {"price_cents": 50}),
        (f"/products/{cheap['id']}", {"price_cents": 3000}),
    ]
    for path, body in changes:
        response = owner_client.patch(path, json=body)
        assert response.status_code == 200, response.json
        _assert_keys_are_the_products(app)
        _pages_both_ways(client, picks)
    assert client.get("/products?collection=picks").json["total"] == 4  # one inactive

    assert owner_client.delete(f"/products/{twins[2]['id']}").status_code == 204
    _assert_keys_are_the_products(app)
    _pages_both_ways(client, picks)
    staff = owner_client.get("/products?collection=picks&active=false").json
    assert [item["id"] for item in staff["items"]] == [twins[1]["id"]]
