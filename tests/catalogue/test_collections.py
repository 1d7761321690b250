"""Collections: ordered, hand-picked products; the public sees the active ones only."""

import pytest

from tests.catalogue_helpers import Catalogue


@pytest.fixture
def catalogue(owner_client):
    return Catalogue(owner_client)


def test_detail_lists_active_products_in_order(app, owner_client, catalogue):
    a, b, c = (catalogue.product(name=n) for n in ("A", "B", "C"))
    hidden = catalogue.product(name="Hidden", active=False)
    order = [c["id"], hidden["id"], a["id"], b["id"]]
    collection = catalogue.collection(title="Summer Picks", product_ids=order)
    assert collection["slug"] == "summer-picks"
    assert collection["product_ids"] == order

    public = app.test_client().get(f"/collections/{collection['id']}").json
    assert public["product_ids"] == [c["id"], a["id"], b["id"]]
    assert [p["name"] for p in public["products"]] == ["C", "A", "B"]
    staff = owner_client.get(f"/collections/{collection['id']}").json
    assert staff["product_ids"] == order
    assert [p["name"] for p in staff["products"]] == ["C", "A", "B"]
    listed = app.test_client().get("/collections").json["items"]
    assert listed[0]["product_ids"] == [c["id"], a["id"], b["id"]]
    assert app.test_client().get("/collections/missing").status_code == 404


def test_put_is_partial_and_product_ids_replace_the_list(owner_client, catalogue):
    a, b = catalogue.product(), catalogue.product()
    collection = catalogue.collection(description="Kept", product_ids=[a["id"]])
    response = owner_client.put(
        f"/collections/{collection['id']}", json={"product_ids": [b["id"], a["id"]]}
    )
    assert response.status_code == 200, response.json
    assert response.json["product_ids"] == [b["id"], a["id"]]
    assert response.json["description"] == "Kept"
    renamed = owner_client.put(f"/collections/{collection['id']}", json={"title": "New"}).json
    assert renamed["title"] == "New" and renamed["product_ids"] == [b["id"], a["id"]]
    emptied = owner_client.put(f"/collections/{collection['id']}", json={"product_ids": []})
    assert emptied.json["product_ids"] == []


def test_unknown_or_repeated_product_ids_are_400_and_write_nothing(owner_client, catalogue):
    a = catalogue.product()
    collection = catalogue.collection(title="Kept", product_ids=[a["id"]])
    for ids in (["ghost", a["id"]], [a["id"], a["id"]]):
        response = owner_client.put(
            f"/collections/{collection['id']}", json={"title": "Changed", "product_ids": ids}
        )
        assert response.status_code == 400
        assert response.json["message"].startswith("product_ids")
    unchanged = owner_client.get(f"/collections/{collection['id']}").json
    assert (unchanged["title"], unchanged["product_ids"]) == ("Kept", [a["id"]])
    response = owner_client.post("/collections", json={"title": "X", "product_ids": ["ghost"]})
    assert response.status_code == 400 and "'ghost'" in response.json["message"]
    assert owner_client.get("/collections").json["total"] == 1


def test_delete_keeps_the_products(owner_client, catalogue):
    product = catalogue.product()
    collection = catalogue.collection(product_ids=[product["id"]])
    assert owner_client.delete(f"/collections/{collection['id']}").status_code == 204
    assert owner_client.get(f"/collections/{collection['id']}").status_code == 404
    assert owner_client.get(f"/products/{product['id']}").json["collection_ids"] == []


@pytest.mark.parametrize("page_size", [3, 30])
def test_a_list_costs_one_query_for_the_page_and_one_for_the_total(
    app, catalogue, sql_count, page_size
):
    products = [catalogue.product()["id"] for _ in range(4)]
    for _ in range(page_size + 1):
        catalogue.collection(product_ids=products)
    with sql_count() as cost:
        page = app.test_client().get(f"/collections?page_size={page_size}").json
    assert len(page["items"]) == page_size and page["total"] == page_size + 1
    assert all(item["product_ids"] == products for item in page["items"])
    assert cost["statements"] == 2
