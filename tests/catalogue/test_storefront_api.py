"""The product API as a storefront uses it (issue 38): the option filter as an OpenAPI
deepObject (`option[Size]=M`, the old `option.Size=M` kept), a misspelt option name a 400,
`PATCH /products/{id}`, facets' price bands named as the list's filters, and list items
with a compact variants summary on request, read in one statement for the page."""

import pytest

from tests.catalogue_helpers import Catalogue


@pytest.fixture
def wardrobe(owner_client):
    """A shirt in 2 sizes x 2 colours (one variant inactive), a hoodie in M, and a mug."""
    catalogue = Catalogue(owner_client)
    shirt = catalogue.product(
        name="Shirt",
        price_cents=2000,
        options=[
            {"name": "Size", "values": ["S", "M"]},
            {"name": "Colour", "values": ["Red", "Blue"]},
        ],
        generate=True,
    )
    hoodie = catalogue.product(
        name="Hoodie", price_cents=4000, options=[{"name": "Size", "values": ["M"]}]
    )
    mug = catalogue.product(name="Mug", price_cents=900, stock=0)
    variants = owner_client.get(f"/products/{shirt['id']}/variants").json["items"]
    blue_s = next(v for v in variants if v["options"] == {"Size": "S", "Colour": "Blue"})
    hidden = owner_client.patch(
        f"/products/{shirt['id']}/variants/{blue_s['id']}", json={"active": False}
    )
    assert hidden.status_code == 200, hidden.json
    return {"shirt": shirt, "hoodie": hoodie, "mug": mug, "blue_s": blue_s}


def names(client, query: str) -> list[str]:
    response = client.get("/products?" + query)
    assert response.status_code == 200, response.json
    return sorted(item["name"] for item in response.json["items"])


def test_the_option_filter_as_a_deep_object_and_as_before(client, wardrobe):
    assert names(client, "option[Size]=M") == ["Hoodie", "Shirt"]
    assert names(client, "option[Size]=M&option[Colour]=Red") == ["Shirt"]
    assert names(client, "option[Size]=S&option[Colour]=Blue") == []  # that variant is off
    # The kept spelling means the same, and the two mix (values of one name: any of them).
    assert names(client, "option.Size=M&option.Colour=Red") == ["Shirt"]
    assert names(client, "option[Colour]=Blue&option.Colour=Red&option[Size]=M") == ["Shirt"]
    # URL-encoded brackets, as clients send them.
    assert names(client, "option%5BSize%5D=M") == ["Hoodie", "Shirt"]
    facets = client.get("/products/facets?option[Size]=M").json
    assert facets["total"] == 2


@pytest.mark.parametrize(
    "query, message",
    [
        ("option[Fit]=Slim", "option[Fit]: no product has an option of this name."),
        ("option.Fit=Slim", "option[Fit]: no product has an option of this name."),
        (
            "option[Fit]=Slim&option[Size]=M&option[Cut]=X",
            "option[Cut], option[Fit]: no product has an option of this name.",
        ),
        ("option=M", "option: write option[<name>]=<value>, e.g. option[Size]=M."),
        ("option[Size=M", "option[Size: write option[<name>]=<value>"),
        ("options=M", "options: write option[<name>]=<value>"),
        ("option[]=M", "option[]: name an option"),
    ],
)
def test_a_bad_or_unknown_option_name_is_a_400_naming_it(client, wardrobe, query, message):
    for path in ("/products", "/products/facets"):
        response = client.get(f"{path}?{query}")
        assert response.status_code == 400, (path, response.json)
        assert message in response.json["message"], (path, response.json)


def test_patch_is_the_partial_update_and_put_is_kept(owner_client, client, wardrobe):
    mug = wardrobe["mug"]
    patched = owner_client.patch(f"/products/{mug['id']}", json={"stock": 5})
    assert patched.status_code == 200, patched.json
    assert (patched.json["stock"], patched.json["name"], patched.json["price_cents"]) == (
        5,
        "Mug",
        900,
    )
    put = owner_client.put(f"/products/{mug['id']}", json={"name": "Big mug"})
    assert put.status_code == 200 and (put.json["name"], put.json["stock"]) == ("Big mug", 5)
    assert owner_client.patch(f"/products/{mug['id']}", json={"stock": -1}).status_code == 400
    assert owner_client.patch("/products/" + "0" * 24, json={"stock": 1}).status_code == 404
    assert client.patch(f"/products/{mug['id']}", json={"stock": 1}).status_code == 401
    spec = client.get("/openapi.json").json["paths"]["/products/{product_id}"]
    assert spec["patch"]["operationId"] == "updateProduct"
    assert "partial update too" in spec["put"]["description"]


def test_price_bands_carry_the_list_filter_names(client, wardrobe):
    bands = client.get("/products/facets").json["price_bands"]
    assert bands[0] == {
        "price_min": 0,
        "price_max": 999,
        "min_price": 0,
        "max_price": 999,
        "count": 1,
    }
    assert bands[-1]["price_max"] is None
    for band in bands:  # each band's names, given to the list, give its count
        query = f"price_min={band['price_min']}"
        if band["price_max"] is not None:
            query += f"&price_max={band['price_max']}"
        assert client.get(f"/products?{query}").json["total"] == band["count"], band


def test_list_items_carry_their_variants_when_asked(client, owner_client, wardrobe, sql_count):
    plain = client.get("/products").json["items"]
    assert all("variants" not in item for item in plain)  # off by default: output unchanged
    with sql_count() as without:
        client.get("/products")
    with sql_count() as with_variants:
        page = client.get("/products?include=variants").json
    assert len(page["items"]) == 3
    # One statement more for the whole page, not one per item.
    assert with_variants["statements"] == without["statements"] + 1
    items = {item["name"]: item for item in page["items"]}
    shirt = items["Shirt"]["variants"]
    assert [v["options"] for v in shirt] == [
        {"Size": "S", "Colour": "Red"},
        {"Size": "M", "Colour": "Red"},
        {"Size": "M", "Colour": "Blue"},
    ]  # in their order, the inactive S/Blue left out
    assert set(shirt[0]) == {
        "id",
        "options",
        "price_cents",
        "compare_at_price_cents",
        "stock",
        "in_stock",
    }
    mug = items["Mug"]["variants"]
    assert mug == [
        {
            "id": wardrobe["mug"]["id"],
            "options": {},
            "price_cents": 900,
            "compare_at_price_cents": None,
            "stock": 0,
            "in_stock": False,
        }
    ]
    # With a filter and a search too; an unknown include is a 400.
    found = client.get("/products?include=variants&option[Size]=M&q=hoodie").json["items"]
    assert [v["options"] for v in found[0]["variants"]] == [{"Size": "M"}]
    assert client.get("/products?include=images").status_code == 400
