"""Products: the public catalogue, staff views, filters, sorts, partial updates and the cost
of a list in SQL statements."""

import pytest

from shop import db
from tests.catalogue_helpers import Catalogue


@pytest.fixture
def catalogue(owner_client):
    return Catalogue(owner_client)


def names(response) -> list[str]:
    assert response.status_code == 200, response.json
    return [item["name"] for item in response.json["items"]]


def test_create_answers_the_record_in_the_shop_currency(owner_client, catalogue):
    category = catalogue.category()
    response = owner_client.post(
        "/products",
        json={
            "name": "Crème Brûlée Mug",
            "price_cents": 1250,
            "stock": 7,
            "sku": "MUG-1",
            "category_id": category["id"],
        },
    )
    assert response.status_code == 201, response.json
    product = response.json
    assert product["slug"] == "creme-brulee-mug"
    assert product["currency"] == "EUR"
    assert product["active"] is True
    assert product["collection_ids"] == []
    assert product["description"] == ""
    assert product["created_at"].endswith("Z")
    assert owner_client.get(f"/products/{product['id']}").json == product

    assert owner_client.patch("/settings", json={"currency": "USD"}).status_code == 200
    assert owner_client.get(f"/products/{product['id']}").json["currency"] == "USD"


def test_derived_slugs_stay_unique_but_a_taken_slug_or_sku_is_409(owner_client, catalogue):
    first = catalogue.product(name="Tea Pot", sku="TP")
    second = catalogue.product(name="Tea pot!")
    assert (first["slug"], second["slug"]) == ("tea-pot", "tea-pot-2")

    taken_slug = owner_client.post(
        "/products", json={"name": "X", "slug": "tea-pot", "price_cents": 1}
    )
    assert taken_slug.status_code == 409
    assert "slug" in taken_slug.json["message"]
    taken_sku = owner_client.post("/products", json={"name": "X", "sku": "TP", "price_cents": 1})
    assert taken_sku.status_code == 409
    assert "sku" in taken_sku.json["message"]
    update = owner_client.put(f"/products/{second['id']}", json={"sku": "TP", "stock": 0})
    assert update.status_code == 409
    assert owner_client.get(f"/products/{second['id']}").json["stock"] == 3  # nothing written
    assert owner_client.get("/products").json["total"] == 2


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"price_cents": -1}, "price_cents"),
        ({"price_cents": "10"}, "price_cents"),
        ({"price_cents": 2.5}, "price_cents"),
        ({"price_cents": 1, "stock": -3}, "stock"),
        ({"price_cents": 1, "stock": True}, "stock"),
        ({"price_cents": 1, "category_id": "nope"}, "category_id"),
        ({"price_cents": 1, "name": ""}, "name"),
        ({"price_cents": 1, "slug": "Not A Slug"}, "slug"),
        ({"price_cents": 1, "currency": "USD"}, "currency"),
        ({"name": "No price"}, "price_cents"),
    ],
)
def test_bad_input_is_400_naming_the_field_and_writes_nothing(owner_client, body, field):
    body = {"name": "Thing", **body}
    response = owner_client.post("/products", json=body)
    assert response.status_code == 400, response.json
    assert response.json["message"].startswith(f"{field}:")
    assert owner_client.get("/products").json["total"] == 0


def test_put_changes_only_the_fields_given(owner_client, catalogue, clock):
    product = catalogue.product(name="Lamp", price_cents=4000, description="Warm light")
    clock.advance(60)
    response = owner_client.put(f"/products/{product['id']}", json={"stock": 5})
    assert response.status_code == 200, response.json
    changed = response.json
    assert changed["stock"] == 5
    assert changed["updated_at"] > product["updated_at"]
    assert changed["variants"][0]["stock"] == 5  # the default variant's
    moved = ("stock", "updated_at", "variants")
    unchanged = {k: v for k, v in changed.items() if k not in moved}
    assert unchanged == {k: v for k, v in product.items() if k not in moved}

    bad = owner_client.put(f"/products/{product['id']}", json={"stock": -1, "name": "Other"})
    assert bad.status_code == 400 and bad.json["message"].startswith("stock:")
    assert owner_client.get(f"/products/{product['id']}").json == changed
    assert owner_client.put("/products/missing", json={"stock": 1}).status_code == 404


def test_delete_removes_it_from_its_collections(owner_client, catalogue):
    product = catalogue.product()
    kept = catalogue.product()
    collection = catalogue.collection(product_ids=[product["id"], kept["id"]])
    assert owner_client.delete(f"/products/{product['id']}").status_code == 204
    assert owner_client.get(f"/products/{product['id']}").status_code == 404
    assert owner_client.delete(f"/products/{product['id']}").status_code == 404
    detail = owner_client.get(f"/collections/{collection['id']}").json
    assert detail["product_ids"] == [kept["id"]]


def test_the_public_sees_active_products_only(
    app, owner_client, customer_client, catalogue, make_key
):
    visible = catalogue.product(name="Visible")
    hidden = catalogue.product(name="Hidden", active=False)
    anonymous = app.test_client()
    reader = make_key("read:product")

    for public in (anonymous, customer_client):
        assert names(public.get("/products")) == ["Visible"]
        assert public.get(f"/products/{hidden['id']}").status_code == 404
        assert public.get(f"/products/{visible['id']}").status_code == 200
    for staff in (owner_client, reader):
        assert sorted(names(staff.get("/products"))) == ["Hidden", "Visible"]
        assert staff.get(f"/products/{hidden['id']}").status_code == 200
        assert names(staff.get("/products?active=false")) == ["Hidden"]

    assert anonymous.get("/products?active=false").status_code == 401
    assert customer_client.get("/products?active=false").status_code == 403
    assert make_key("read:order").get("/products?active=true").status_code == 403


def test_filters(owner_client, catalogue):
    shoes = catalogue.category(name="Shoes")
    boots = catalogue.category(name="Boots", parent_id=shoes["id"])
    hats = catalogue.category(name="Hats")
    catalogue.product(name="Trail Boot", price_cents=9000, stock=0, category_id=boots["id"])
    catalogue.product(name="Sneaker", price_cents=5000, sku="SNK-100", category_id=shoes["id"])
    catalogue.product(name="Beanie", price_cents=1500, description="Warm WOOL", category_id=None)
    cap = catalogue.product(name="Cap", price_cents=2000, category_id=hats["id"])
    sale = catalogue.collection(title="Sale", product_ids=[cap["id"]])

    def query(qs):
        return sorted(names(owner_client.get("/products?" + qs)))

    assert query(f"category_id={shoes['id']}") == ["Sneaker", "Trail Boot"]
    assert query(f"category_id={boots['id']}") == ["Trail Boot"]
    assert query("category_id=unknown") == []
    assert query(f"collection_id={sale['id']}") == ["Cap"]
    assert query("q=snk") == ["Sneaker"]  # sku
    assert query("q=wool") == ["Beanie"]  # description, any case
    assert query("q=BOOT") == ["Trail Boot"]  # name
    assert query("q=%25") == []  # no word to search for: nothing (not everything)
    assert query("q=100%25") == ["Sneaker"]  # the word 100, in its SKU SNK-100
    assert query("min_price=2000&max_price=5000") == ["Cap", "Sneaker"]
    assert query("in_stock=false") == ["Trail Boot"]
    assert query("in_stock=true&max_price=1999") == ["Beanie"]
    assert query("min_price=5000&max_price=2000") == []
    assert owner_client.get("/products?sort=stock").status_code == 400
    assert owner_client.get("/products?page_size=101").status_code == 400


def test_sorts_and_pages(owner_client, catalogue, clock):
    for name, price in (("b", 300), ("c", 100), ("a", 200)):
        catalogue.product(name=name, price_cents=price)
        clock.advance(1)
    assert names(owner_client.get("/products")) == ["a", "c", "b"]  # newest first
    assert names(owner_client.get("/products?sort=created_at")) == ["b", "c", "a"]
    assert names(owner_client.get("/products?sort=name")) == ["a", "b", "c"]
    assert names(owner_client.get("/products?sort=-name")) == ["c", "b", "a"]
    assert names(owner_client.get("/products?sort=price")) == ["c", "a", "b"]
    assert names(owner_client.get("/products?sort=-price")) == ["b", "a", "c"]
    page = owner_client.get("/products?sort=name&page=2&page_size=2").json
    assert [i["name"] for i in page["items"]] == ["c"]
    assert (page["page"], page["page_size"], page["total"]) == (2, 2, 3)


def test_collection_ids_are_listed_on_each_product(owner_client, catalogue):
    product = catalogue.product()
    one = catalogue.collection(product_ids=[product["id"]])
    two = catalogue.collection(product_ids=[product["id"]])
    listed = owner_client.get("/products").json["items"][0]
    assert listed["collection_ids"] == sorted([one["id"], two["id"]])


def test_list_totals_follow_every_write_on_every_view(app, make_app, owner_client, catalogue):
    anonymous = app.test_client()

    def totals():
        # page_size=1, so the total is never the length of a last page.
        views = ("", "&active=true", "&active=false")
        staff = [owner_client.get(f"/products?page_size=1{v}").json["total"] for v in views]
        return anonymous.get("/products?page_size=1").json["total"], *staff

    a, b = catalogue.product(), catalogue.product()
    c = catalogue.product(active=False)
    assert totals() == (2, 3, 2, 1)  # public, staff, staff active, staff inactive
    assert owner_client.put(f"/products/{b['id']}", json={"active": False}).status_code == 200
    assert owner_client.put(f"/products/{b['id']}", json={"active": False}).status_code == 200
    assert totals() == (1, 3, 1, 2)
    assert owner_client.put(f"/products/{c['id']}", json={"active": True}).status_code == 200
    assert owner_client.put(f"/products/{c['id']}", json={"stock": 9}).status_code == 200
    assert totals() == (2, 3, 2, 1)
    assert owner_client.delete(f"/products/{a['id']}").status_code == 204
    assert owner_client.delete(f"/products/{b['id']}").status_code == 204
    assert totals() == (1, 1, 1, 0)
    refused = owner_client.post("/products", json={"name": "No price", "stock": 1})
    assert refused.status_code == 400
    assert totals() == (1, 1, 1, 0)

    # Rows a bulk import wrote straight into the table are counted from the next start.
    with app.app_context():
        db.execute(
            "INSERT INTO products (id, name, slug, price_cents, stock, active, created_at,"
            " updated_at) VALUES (:id, 'Imported', 'imported', 100, 1, 1, :now, :now)",
            {"id": db.new_id(), "now": "2026-01-01T00:00:00.000000Z"},
        )
    app = make_app()
    anonymous = app.test_client()
    assert anonymous.get("/products?page_size=1").json["total"] == 2


@pytest.mark.parametrize("page_size", [5, 40])
def test_a_list_costs_one_query_for_the_page_and_one_for_the_total(
    app, owner_client, catalogue, sql_count, page_size
):
    collections = [catalogue.collection() for _ in range(3)]
    ids = [catalogue.product(category_id=None)["id"] for _ in range(page_size + 1)]
    for collection in collections:
        owner_client.put(f"/collections/{collection['id']}", json={"product_ids": ids})
    anonymous = app.test_client()

    with sql_count() as anonymous_cost:
        page = anonymous.get(f"/products?page_size={page_size}&sort=price")
    assert len(page.json["items"]) == page_size and page.json["total"] == page_size + 1
    assert all(len(item["collection_ids"]) == 3 for item in page.json["items"])
    # The page, its total, and its products' prior prices (issue 40: their variants' price
    # history, one statement whatever the page's size).
    assert anonymous_cost["statements"] == 3

    with sql_count() as lookup:  # what identifying the caller costs, on a one-query route
        owner_client.get("/settings/public")
    caller_lookup = lookup["statements"] - 1
    assert caller_lookup <= 2
    with sql_count() as staff_cost:
        owner_client.get(f"/products?page_size={page_size}&q=product&category_id=x&in_stock=1")
    with sql_count() as filtered_cost:
        owner_client.get(f"/products?page_size={page_size}&q=product&in_stock=1&sort=name")
    with sql_count() as ranked_cost:  # by relevance: ranked ids with their total, then rows
        owner_client.get(f"/products?page_size={page_size}&q=product&in_stock=1")
    # The category's tree (its ids, read first), then the page: an empty one needs no count.
    assert staff_cost["statements"] == 2 + caller_lookup
    # A search sorted by a column finds every match first: its total comes with the page
    # (then the prior prices, as above).
    assert filtered_cost["statements"] == 2 + caller_lookup
    assert ranked_cost["statements"] == 3 + caller_lookup


def test_the_list_loads_each_query_string_once(client):
    """ProductQuerySchema's loads are kept per query string (issue 29); a refused one is
    not, so it is refused every time, and each request gets its own copy of the args."""
    from shop.api.common import Blueprint

    kept = Blueprint.ARGUMENTS_PARSER._kept
    first, again = client.get("/products?page_size=5"), client.get("/products?page_size=5")
    assert first.status_code == again.status_code == 200
    assert first.json == again.json and first.json["page_size"] == 5
    assert any(key[1] == b"page_size=5" for key in kept)
    for _ in range(2):
        refused = client.get("/products?page_size=0")
        assert refused.status_code == 400 and "page_size" in refused.json["message"]
    assert not any(key[1] == b"page_size=0" for key in kept)
