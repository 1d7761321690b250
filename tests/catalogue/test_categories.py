"""Categories: a tree without cycles, listed flat by position, never deleted while in use."""

import pytest

from tests.catalogue_helpers import Catalogue


@pytest.fixture
def catalogue(owner_client):
    return Catalogue(owner_client)


def test_create_list_and_read(app, owner_client, catalogue):
    top = catalogue.category(name="Home & Garden", position=2, description="All for home")
    first = catalogue.category(name="Zebra", position=1)
    child = catalogue.category(name="Lamps", parent_id=top["id"], position=2)
    assert top["slug"] == "home-garden" and top["parent_id"] is None
    assert child["parent_id"] == top["id"]

    anonymous = app.test_client()
    listed = anonymous.get("/categories").json
    assert [c["name"] for c in listed["items"]] == ["Zebra", "Home & Garden", "Lamps"]
    assert listed["total"] == 3
    assert anonymous.get(f"/categories/{first['id']}").json == first
    assert anonymous.get("/categories/missing").status_code == 404


def test_put_is_partial(owner_client, catalogue):
    category = catalogue.category(name="Cups", description="Ceramic")
    response = owner_client.put(f"/categories/{category['id']}", json={"name": "Mugs"})
    assert response.status_code == 200, response.json
    assert response.json["name"] == "Mugs"
    assert response.json["slug"] == "cups"  # a slug, once public, stays until changed
    assert response.json["description"] == "Ceramic"


def test_a_category_cannot_sit_under_itself_or_its_descendants(owner_client, catalogue):
    a = catalogue.category(name="A")
    b = catalogue.category(name="B", parent_id=a["id"])
    c = catalogue.category(name="C", parent_id=b["id"])
    for parent in (a, c):
        response = owner_client.put(f"/categories/{a['id']}", json={"parent_id": parent["id"]})
        assert response.status_code == 400
        assert response.json["message"].startswith("parent_id:")
    assert owner_client.get(f"/categories/{a['id']}").json["parent_id"] is None

    moved = owner_client.put(f"/categories/{c['id']}", json={"parent_id": None})
    assert moved.status_code == 200 and moved.json["parent_id"] is None
    unknown = owner_client.put(f"/categories/{c['id']}", json={"parent_id": "nope"})
    assert unknown.status_code == 400 and unknown.json["message"].startswith("parent_id:")


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"name": ""}, "name"),
        ({"name": "X", "position": "1"}, "position"),
        ({"name": "X", "position": 1.5}, "position"),
        ({"name": "X", "parent_id": "nope"}, "parent_id"),
        ({"name": "X", "slug": "a b"}, "slug"),
        ({"name": "X", "colour": "red"}, "colour"),
    ],
)
def test_bad_input_is_400_and_writes_nothing(owner_client, body, field):
    response = owner_client.post("/categories", json=body)
    assert response.status_code == 400
    assert response.json["message"].startswith(f"{field}:")
    assert owner_client.get("/categories").json["total"] == 0


def test_a_taken_slug_is_409(owner_client, catalogue):
    catalogue.category(name="Toys")
    response = owner_client.post("/categories", json={"name": "Games", "slug": "toys"})
    assert response.status_code == 409
    other = catalogue.category(name="Games")
    response = owner_client.put(f"/categories/{other['id']}", json={"slug": "toys"})
    assert response.status_code == 409
    assert owner_client.get(f"/categories/{other['id']}").json["slug"] == "games"


def test_delete_is_refused_while_in_use_saying_by_what(owner_client, catalogue):
    parent = catalogue.category(name="Clothes")
    child = catalogue.category(name="Shirts", parent_id=parent["id"])
    product = catalogue.product(name="Blue Jacket", category_id=parent["id"])

    response = owner_client.delete(f"/categories/{parent['id']}")
    assert response.status_code == 409
    assert "1 product ('Blue Jacket')" in response.json["message"]
    assert "1 sub-category ('Shirts')" in response.json["message"]

    owner_client.put(f"/products/{product['id']}", json={"category_id": None})
    assert owner_client.delete(f"/categories/{child['id']}").status_code == 204
    assert owner_client.delete(f"/categories/{parent['id']}").status_code == 204
    assert owner_client.get(f"/categories/{parent['id']}").status_code == 404
    assert owner_client.delete(f"/categories/{parent['id']}").status_code == 404


def test_an_absurd_page_number_is_400_not_a_crash(client):
    response = client.get("/categories?page=24559258311799975922630656")
    assert response.status_code == 400
    assert response.json["message"].startswith("page:")
