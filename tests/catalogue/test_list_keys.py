"""The copies of the products' state and sort keys (migration 0039, issue 42): a
collection's (collection_products) and an option value's (option_products); the triggers
keep them equal to the products and variants through every catalogue write, and a page
read from them equals the page read from the products."""

from shop import db
from tests.catalogue_helpers import Catalogue, assert_pages_both_ways


def _by_slug_and_id(collection: dict) -> tuple[str, str]:
    return f"collection={collection['slug']}", f"collection_id={collection['id']}"


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


def _assert_options_are_the_variants(app) -> None:
    columns = "name, value, product_id, product_active, product_created_at,"
    columns += " product_price_cents, product_name"
    with app.app_context():
        kept = db.query(f"SELECT {columns} FROM option_products")
        counted = db.query(
            "SELECT DISTINCT o.name, o.value, p.id AS product_id, p.active AS product_active,"
            " p.created_at AS product_created_at, p.price_cents AS product_price_cents,"
            " p.name AS product_name FROM variant_option_values o"
            " JOIN product_variants v ON v.id = o.variant_id"
            " JOIN products p ON p.id = o.product_id WHERE v.active = 1"
        )
    assert sorted(map(str, kept)) == sorted(map(str, counted))


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
    assert_pages_both_ways(client, SORTS, *_by_slug_and_id(picks))

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
        assert_pages_both_ways(client, SORTS, *_by_slug_and_id(picks))
    assert client.get("/products?collection=picks").json["total"] == 4  # one inactive

    assert owner_client.delete(f"/products/{twins[2]['id']}").status_code == 204
    _assert_keys_are_the_products(app)
    assert_pages_both_ways(client, SORTS, *_by_slug_and_id(picks))
    staff = owner_client.get("/products?collection=picks&active=false").json
    assert [item["id"] for item in staff["items"]] == [twins[1]["id"]]


def test_an_options_keys_follow_every_catalogue_write(app, client, owner_client):
    catalogue = Catalogue(owner_client)
    sizes = [{"name": "Size", "values": ["S", "M"]}, {"name": "Colour", "values": ["Red"]}]
    shirts = [
        catalogue.product(name=name, options=sizes, generate=True, price_cents=price)
        for name, price in (("Shirt", 2500), ("Shirt", 2500), ("Blouse", 900))
    ]
    catalogue.product(name="Mug", price_cents=900)  # no options
    queries = ("option.Size=M", "option.Colour=Red", "option.Size=S")
    _assert_options_are_the_variants(app)
    assert_pages_both_ways(client, SORTS, *queries)
    assert client.get("/products?option.Size=M").json["total"] == 3

    variants = owner_client.get(f"/products/{shirts[0]['id']}").json["variants"]
    medium = next(v for v in variants if v["options"]["Size"] == "M")
    small = next(v for v in variants if v["options"]["Size"] == "S")
    base = f"/products/{shirts[0]['id']}/variants"
    changes = [
        ("patch", f"{base}/{medium['id']}", {"active": False}),  # no active M left
        ("patch", f"{base}/{small['id']}", {"price_cents": 50}),  # the product's price
        ("patch", f"/products/{shirts[1]['id']}", {"name": "Polo"}),
        ("patch", f"/products/{shirts[2]['id']}", {"active": False}),
        ("patch", f"{base}/{medium['id']}", {"active": True}),
        ("delete", f"{base}/{small['id']}", None),  # no S left on it
    ]
    for method, path, body in changes:
        response = getattr(owner_client, method)(path, json=body)
        assert response.status_code in (200, 204), response.json
        _assert_options_are_the_variants(app)
        assert_pages_both_ways(client, SORTS, *queries)
    assert client.get("/products?option.Size=S").json["total"] == 1

    assert owner_client.delete(f"/products/{shirts[1]['id']}").status_code == 204
    _assert_options_are_the_variants(app)
    assert_pages_both_ways(client, SORTS, *queries)
    staff = owner_client.get("/products?option.Size=M&active=false").json
    assert [item["id"] for item in staff["items"]] == [shirts[2]["id"]]
