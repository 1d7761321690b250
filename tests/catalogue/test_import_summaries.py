"""What follows a write of many variants at once (issue 42): after a catalogue import of new
and existing products and variants, a re-import with every price and state changed, and
``generate``, every kept summary equals a recount: the facet counts, option_products, the
option pairs (0044), the price history and the products' list columns. Through HTTP, on both
engines."""

import json

from shop import db
from tests.catalogue.test_facet_counts import _assert_kept_equals_a_recount, _facets_both_ways
from tests.catalogue.test_list_keys import _assert_options_are_the_variants
from tests.catalogue.test_product_files import csv_of, send
from tests.catalogue_helpers import Catalogue, option_pairs_of_the_variants

SHIRT = [{"name": "Size", "values": ["S", "M", "L"]}, {"name": "Colour", "values": ["Red", "Blue"]}]


def _row(slug: str, size: str, colour: str, cents: str, active: str = "true", **more) -> dict:
    return {
        "product_slug": slug,
        "product_name": slug.title(),
        "product_options": json.dumps(SHIRT),
        "variant_sku": f"{slug}-{size}-{colour}",
        "variant_options": json.dumps({"Size": size, "Colour": colour}),
        "variant_price": cents,
        "variant_stock": "3",
        "variant_active": active,
        **more,
    }


def _assert_history_and_list_columns_are_the_variants(app) -> None:
    """Every variant's last recorded price is its price; each product's price, stock and
    SKU are its variants' (lowest active price, active stock, a lone variant's SKU)."""
    with app.app_context():
        stale = db.query(
            "SELECT v.id FROM product_variants v WHERE v.price_cents IS DISTINCT FROM ("
            " SELECT h.price_cents FROM variant_prices h WHERE h.variant_id = v.id"
            " ORDER BY h.at DESC, h.id DESC LIMIT 1)"
        )
        assert stale == []
        products = db.query("SELECT id, price_cents, stock, sku FROM products ORDER BY id")
        for product in products:
            variants = db.query(
                "SELECT price_cents, stock, active, sku FROM product_variants"
                " WHERE product_id = :id",
                {"id": product["id"]},
            )
            active = [v for v in variants if v["active"]]
            price = min(v["price_cents"] for v in active or variants)
            stock = sum(v["stock"] for v in active)
            sku = variants[0]["sku"] if len(variants) == 1 else None
            assert (product["price_cents"], product["stock"], product["sku"]) == (
                price,
                stock,
                sku,
            ), product


def _assert_every_summary_is_a_recount(app, client) -> None:
    _assert_kept_equals_a_recount(app)
    _assert_options_are_the_variants(app)
    kept_pairs, made_pairs = option_pairs_of_the_variants(app)
    assert kept_pairs == made_pairs
    _assert_history_and_list_columns_are_the_variants(app)
    for query in ("", "?option.Size=M", "?option.Colour=Blue", "?option.Size=L&option.Colour=Red"):
        _facets_both_ways(client, query)


def test_an_import_of_many_variants_keeps_every_summary(app, client, owner_client):
    catalogue = Catalogue(owner_client)
    tops = catalogue.category(name="Tops")
    # A shop with a shirt already: Size S and M active in Red; Blue only on an inactive one.
    shirt = catalogue.product(name="Shirt", slug="shirt", options=SHIRT, price_cents=2000)
    owner_client.post(
        f"/products/{shirt['id']}/variants",
        json={"options": {"Size": "M", "Colour": "Red"}, "price_cents": 1800, "sku": "shirt-M"},
    )
    blue = owner_client.post(
        f"/products/{shirt['id']}/variants",
        json={"options": {"Size": "L", "Colour": "Blue"}, "price_cents": 900, "sku": "shirt-LB"},
    ).json
    owner_client.patch(f"/products/{shirt['id']}/variants/{blue['id']}", json={"active": False})
    _assert_every_summary_is_a_recount(app, client)

    rows = [
        # New, in a category: values shared by several variants, one variant inactive, and
        # a value (L) that only an inactive variant has.
        _row("tee", "S", "Red", "12.00", product_category=tops["slug"]),
        _row("tee", "M", "Red", "11.00", product_category=tops["slug"]),
        _row("tee", "M", "Blue", "10.00", product_category=tops["slug"]),
        _row("tee", "L", "Blue", "9.00", "false", product_category=tops["slug"]),
        # New, without a category, every variant inactive but its first (made by create).
        _row("cap", "S", "Red", "5.00"),
        _row("cap", "S", "Blue", "4.00", "false"),
        _row("cap", "L", "Red", "6.00", "false"),
        # Old: new variants with a value its active variants have (M, Red), one with a value
        # only its inactive variant has (Blue), one with a value none has (S... Blue).
        _row("shirt", "L", "Red", "25.00"),
        _row("shirt", "S", "Blue", "15.00"),
        _row("shirt", "M", "Blue", "30.00", "false"),
    ]
    response = send(owner_client, csv_of(*rows))
    assert response.status_code == 200, response.json
    assert (response.json["created"], response.json["errors"]) == (10, []), response.json
    _assert_every_summary_is_a_recount(app, client)
    facets = client.get(f"/products/facets?category={tops['slug']}").json
    colours, sizes = facets["options"]
    assert {v["value"]: v["count"] for v in sizes["values"]} == {"S": 1, "M": 1}
    assert {v["value"]: v["count"] for v in colours["values"]} == {"Red": 1, "Blue": 1}

    # The same file with every price and state changed: updates, row by row.
    changed = [
        {**row, "variant_price": f"{float(row['variant_price']) + 1:.2f}", "variant_active": "true"}
        for row in rows
    ]
    response = send(owner_client, csv_of(*changed))
    assert response.status_code == 200, response.json
    assert response.json["errors"] == []
    _assert_every_summary_is_a_recount(app, client)


def test_generate_makes_every_combination_and_keeps_every_summary(app, client, owner_client):
    catalogue = Catalogue(owner_client)
    category = catalogue.category(name="Mugs")
    mug = catalogue.product(name="Mug", options=SHIRT, category_id=category["id"])
    made = owner_client.post(
        f"/products/{mug['id']}/variants/generate", json={"price_cents": 700, "stock": 2}
    )
    assert made.status_code == 200, made.json
    assert [v["position"] for v in made.json["items"]] == [2, 3, 4, 5, 6]
    _assert_every_summary_is_a_recount(app, client)
    facets = client.get(f"/products/facets?category_id={category['id']}").json
    assert [len(group["values"]) for group in facets["options"]] == [2, 3]
