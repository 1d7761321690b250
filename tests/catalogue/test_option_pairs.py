"""Two option names at once (``?option.Size=M&option.Colour=Red``, migration 0044, issue
42): a product matches when one of its active variants has both values, not when they are
on two variants; the page is read from option_pairs, which the triggers keep equal to the
variants through every catalogue write."""

from shop import db
from tests.catalogue_helpers import (
    Catalogue,
    assert_pages_both_ways,
    option_pairs_of_the_variants,
)

TWO = "option.Size=M&option.Colour=Red"
SIZES = {"name": "Size", "values": ["S", "M"]}
COLOURS = {"name": "Colour", "values": ["Red", "Blue"]}
SORTS = ("-created_at", "created_at", "price", "-price", "name", "-name", "updated_at")


def _assert_pairs_are_the_variants(app) -> None:
    kept, made = option_pairs_of_the_variants(app)
    assert kept == made


def _ids(client, query: str) -> list[str]:
    response = client.get(f"/products?{query}&page_size=100")
    assert response.status_code == 200, response.json
    assert response.json["total"] == len(response.json["items"]), response.json
    return sorted(item["id"] for item in response.json["items"])


def _variant(owner_client, product_id: str, **values) -> dict:
    variants = owner_client.get(f"/products/{product_id}/variants").json["items"]
    return next(v for v in variants if v["options"] == values)


def test_two_options_match_one_variant_with_both_values_not_two(app, client, owner_client):
    catalogue = Catalogue(owner_client)
    options = [SIZES, COLOURS]
    both = catalogue.product(name="Both", options=options, generate=True, price_cents=2000)
    split = catalogue.product(name="Split", options=options, price_cents=1000)  # S, Red
    response = owner_client.post(
        f"/products/{split['id']}/variants", json={"options": {"Size": "M", "Colour": "Blue"}}
    )
    assert response.status_code == 201, response.json
    switched = catalogue.product(name="Off", options=options, generate=True, price_cents=500)
    red_m = _variant(owner_client, switched["id"], Size="M", Colour="Red")
    path = f"/products/{switched['id']}/variants/{red_m['id']}"
    assert owner_client.patch(path, json={"active": False}).status_code == 200
    catalogue.product(name="Mug", price_cents=900)  # no options
    _assert_pairs_are_the_variants(app)

    # Split has an M and a Red, on two variants; Off's red M is switched off.
    assert _ids(client, TWO) == [both["id"]]
    assert _ids(client, "option[Colour]=Red&option[Size]=M") == [both["id"]]
    assert _ids(client, "option.Size=M&option.Size=S&option.Colour=Red") == sorted(
        [both["id"], split["id"], switched["id"]]
    )
    assert _ids(client, "option.Size=M&option.Colour=Blue") == sorted(
        [both["id"], split["id"], switched["id"]]
    )
    assert _ids(client, "option.Size=L&option.Colour=Red") == []
    staff = _ids(owner_client, "option.Size=M&option.Colour=Red&active=true")
    assert staff == [both["id"]]
    for query in (TWO, "option.Size=M&option.Colour=Blue", "option.Size=S&option.Colour=Red"):
        assert_pages_both_ways(client, SORTS, query)


def test_the_pairs_follow_every_variant_and_option_write(app, client, owner_client):
    catalogue = Catalogue(owner_client)
    shirt = catalogue.product(name="Shirt", options=[SIZES], generate=True, price_cents=2500)
    other = catalogue.product(name="Blouse", options=[SIZES, COLOURS], price_cents=900)
    queries = (TWO, "option.Size=S&option.Colour=Red", "option.Size=M&option.Colour=Blue")
    assert _ids(client, TWO) == []

    # option change: a new option gives every variant its first value (Red)
    body = {"options": [SIZES, COLOURS]}
    response = owner_client.patch(f"/products/{shirt['id']}", json=body)
    assert response.status_code == 200, response.json
    _assert_pairs_are_the_variants(app)
    assert _ids(client, TWO) == [shirt["id"]]

    base = f"/products/{shirt['id']}/variants"
    medium = _variant(owner_client, shirt["id"], Size="M", Colour="Red")
    small = _variant(owner_client, shirt["id"], Size="S", Colour="Red")
    steps = [
        ("patch", f"{base}/{medium['id']}", {"active": False}, []),  # updated: switched off
        ("patch", f"{base}/{medium['id']}", {"active": True}, [shirt["id"]]),
        ("patch", f"{base}/{small['id']}", {"price_cents": 50}, [shirt["id"]]),  # the price
        ("patch", f"{base}/{medium['id']}", {"options": {"Size": "M", "Colour": "Blue"}}, []),
        ("post", base, {"options": {"Size": "M", "Colour": "Red"}}, [shirt["id"]]),  # inserted
        ("post", f"/products/{other['id']}/variants", {"options": {"Size": "M", "Colour": "Red"}},
         [shirt["id"], other["id"]]),
        ("patch", f"/products/{other['id']}", {"name": "Polo"}, [shirt["id"], other["id"]]),
        ("patch", f"/products/{shirt['id']}", {"active": False}, [other["id"]]),
        ("patch", f"/products/{shirt['id']}", {"active": True}, [shirt["id"], other["id"]]),
    ]  # fmt: skip
    for method, path, body, matched in steps:
        response = getattr(owner_client, method)(path, json=body)
        assert response.status_code in (200, 201), (path, response.json)
        _assert_pairs_are_the_variants(app)
        assert _ids(client, TWO) == sorted(matched), (path, body)
        for query in queries:
            assert_pages_both_ways(client, SORTS, query)

    # deleted: the variant, then the product (its pairs go with it)
    red_m = _variant(owner_client, shirt["id"], Size="M", Colour="Red")
    assert owner_client.delete(f"{base}/{red_m['id']}").status_code == 204
    _assert_pairs_are_the_variants(app)
    assert _ids(client, TWO) == [other["id"]]
    assert _ids(client, "option.Size=M&option.Colour=Blue") == [shirt["id"]]
    assert owner_client.delete(f"/products/{other['id']}").status_code == 204
    _assert_pairs_are_the_variants(app)
    assert _ids(client, TWO) == []
    for query in queries:
        assert_pages_both_ways(client, SORTS, query)
    with app.app_context():
        assert db.value("SELECT COUNT(*) FROM option_pairs WHERE product_id = :id",
                        {"id": other["id"]}) == 0  # fmt: skip
