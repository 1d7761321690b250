"""Product search and facets (issue 25), sync filters and natural-key lookups (issue 28):
full-text with ranking, stemming and prefixes on both engines, hostile query text, the index
kept by the writes and rebuilt by `flask db upgrade`, filters, and facets equal to totals."""

import pytest

from tests.catalogue_helpers import Catalogue


@pytest.fixture
def catalogue(owner_client):
    return Catalogue(owner_client)


@pytest.fixture
def shop(catalogue):
    """A small catalogue: a tree of categories, prices in several bands, one collection."""
    kitchen = catalogue.category(name="Kitchen")
    teaware = catalogue.category(name="Teaware", parent_id=kitchen["id"])
    sport = catalogue.category(name="Sport")
    made = {
        "teapot": catalogue.product(
            name="Blue Teapot", sku="TP-BLU-01", price_cents=3500, category_id=teaware["id"]
        ),
        "tea": catalogue.product(
            name="Green tea leaves",
            description="Loose leaf, from Shizuoka.",
            price_cents=900,
            category_id=kitchen["id"],
        ),
        "mug": catalogue.product(
            name="Mug", description="For tea or coffee.", price_cents=1200, stock=0
        ),
        "shoes": catalogue.product(
            name="Running Shoes",
            description="Light trainers for runners.",
            sku="RUN-42",
            price_cents=8900,
            category_id=sport["id"],
        ),
    }
    made["categories"] = {"kitchen": kitchen, "teaware": teaware, "sport": sport}
    made["sale"] = catalogue.collection(
        title="Sale", product_ids=[made["teapot"]["id"], made["shoes"]["id"]]
    )
    return made


def found(client, query: str) -> list[str]:
    response = client.get("/products?" + query)
    assert response.status_code == 200, response.json
    assert response.json["total"] == len(response.json["items"])  # small pages here
    return [item["name"] for item in response.json["items"]]


def test_search_finds_by_name_description_sku_and_prefix_ranked(client, shop):
    assert found(client, "q=teapot") == ["Blue Teapot"]
    assert found(client, "q=Shizuoka") == ["Green tea leaves"]  # description
    assert found(client, "q=TP-BLU-01") == ["Blue Teapot"]  # the whole SKU
    assert found(client, "q=tp-blu") == ["Blue Teapot"]  # the start of a SKU, any case
    assert found(client, "q=RUN-42") == ["Running Shoes"]
    # type-ahead: every word is also a prefix; name matches rank above description ones
    results = found(client, "q=tea")
    assert sorted(results[:2]) == ["Blue Teapot", "Green tea leaves"] and results[2] == "Mug"
    assert sorted(found(client, "q=te")) == sorted(results[:2])  # a prefix in names only
    assert found(client, "q=coffe") == []  # "coffee" is in a description, typed halfway
    assert found(client, "q=blue%20tea") == ["Blue Teapot"]  # every word must match
    assert found(client, "q=blue%20coffee") == []
    # totals are the matches', not the page's nor the catalogue's
    for extra in ("", "&sort=name", "&page=2", "&page=9"):
        page = client.get(f"/products?q=tea&page_size=1{extra}").json
        assert page["total"] == 3, extra
    # an explicit sort replaces the ranking
    assert found(client, "q=tea&sort=name") == ["Blue Teapot", "Green tea leaves", "Mug"]


def test_search_stems_english(client, shop):
    assert found(client, "q=teapots") == ["Blue Teapot"]  # plural finds singular
    assert found(client, "q=runner") == ["Running Shoes"]  # runners, in the description
    assert found(client, "q=runs") == ["Running Shoes"]  # running
    assert found(client, "q=leaf") == ["Green tea leaves"]  # leaves (and "Loose leaf")


HOSTILE = [
    '"tea',
    'tea"',
    "tea*",
    "*tea",
    "-tea",
    "tea -",
    "(tea",
    "tea)",
    "^tea",
    "tea:*",
    "'tea':*",
    "tea & | ! <-> :",
    "tea\\",
    "tea''",
    "{tea}",
    "tea %",
    "tea_",
]
# FTS5's and tsquery's operators are words like any other (PostgreSQL drops "and", "or" and
# "not" as English stop words; SQLite looks for them): answered, never an error.
OPERATOR_WORDS = ["tea AND", "AND tea", "tea OR", "NOT tea", "tea NEAR(", "OR", "name:tea"]
NO_WORD = ['"', "*", "-", "(", ")", "''", ":*", "&|!", "%_", "   ", "<->"]


def test_hostile_query_text_is_plain_text_never_an_error(client, shop):
    for text in HOSTILE:
        response = client.get("/products", query_string={"q": text})
        assert response.status_code == 200, (text, response.json)
        names = [item["name"] for item in response.json["items"]]
        assert "Blue Teapot" in names, text  # the word tea is still searched for
    for text in OPERATOR_WORDS:
        response = client.get("/products", query_string={"q": text})
        assert response.status_code == 200, (text, response.json)
    for text in NO_WORD:
        response = client.get("/products/facets", query_string={"q": text})
        assert response.status_code == 200, (text, response.json)
        assert response.json["total"] == 0, text
        listed = client.get("/products", query_string={"q": text})
        assert listed.status_code == 200 and listed.json["total"] == 0, text
    long = client.get("/products", query_string={"q": "tea " * 50})  # 200 characters
    assert long.status_code == 200 and long.json["total"] >= 1
    unicode = client.get("/products", query_string={"q": "Çay 茶 🍵 ÿ"})
    assert unicode.status_code == 200 and unicode.json["total"] == 0


def test_the_index_follows_every_write(client, owner_client, catalogue):
    product = catalogue.product(name="Copper Kettle", sku="KT-1")
    assert found(client, "q=kettle") == ["Copper Kettle"]
    changed = owner_client.put(
        f"/products/{product['id']}", json={"name": "Brass Urn", "sku": "URN-9"}
    )
    assert changed.status_code == 200
    assert found(client, "q=kettle") == [] and found(client, "q=kt") == []
    assert found(client, "q=urn") == ["Brass Urn"] and found(client, "q=URN-9") == ["Brass Urn"]
    owner_client.put(f"/products/{product['id']}", json={"active": False})
    assert found(client, "q=urn") == []  # the public sees active products only
    assert found(owner_client, "q=urn") == ["Brass Urn"]
    assert owner_client.delete(f"/products/{product['id']}").status_code == 204
    assert found(owner_client, "q=urn") == []


def test_relevance_needs_a_search(client, shop):
    response = client.get("/products?sort=relevance")
    assert response.status_code == 400 and "relevance needs q" in response.json["message"]
    assert found(client, "q=tea&sort=relevance")[2] == "Mug"


def test_filters_and_facets_whose_counts_are_the_lists_totals(client, owner_client, shop):
    cats = shop["categories"]
    assert found(client, f"category_id={cats['kitchen']['id']}&sort=name") == [
        "Blue Teapot",
        "Green tea leaves",
    ]
    assert found(client, f"collection_id={shop['sale']['id']}&sort=name") == [
        "Blue Teapot",
        "Running Shoes",
    ]
    assert found(client, "min_price=1000&max_price=3500&sort=price") == ["Mug", "Blue Teapot"]
    assert found(client, "in_stock=true&q=tea&sort=name") == ["Blue Teapot", "Green tea leaves"]
    kitchen = {"category_id": cats["kitchen"]["id"]}
    for filters in (
        {},
        {"q": "tea"},
        {"in_stock": "true"},
        {"collection_id": shop["sale"]["id"]},
        kitchen,
        {"min_price": "1000", "q": "tea"},
        {"max_price": "999", **kitchen},
        {"q": "nothing-like-it"},
    ):

        def total(filters=filters, **replaced):
            response = client.get("/products", query_string={**filters, **replaced})
            assert response.status_code == 200, response.json
            return response.json["total"]

        body = client.get("/products/facets", query_string=filters).json
        assert body["total"] == total(), filters
        for band in body["price_bands"]:
            others = {k: v for k, v in filters.items() if k not in ("min_price", "max_price")}
            bounds = {"min_price": band["min_price"]}
            if band["max_price"] is not None:
                bounds["max_price"] = band["max_price"]
            response = client.get("/products", query_string={**others, **bounds})
            assert band["count"] == response.json["total"], (filters, band)
        for category in body["categories"]:
            assert category["count"] == total(category_id=category["id"]), (filters, category)
        if "min_price" not in filters and "max_price" not in filters:
            assert sum(band["count"] for band in body["price_bands"]) == body["total"]
    everything = client.get("/products/facets").json
    counts = {c["name"]: c["count"] for c in everything["categories"]}
    assert counts == {"Kitchen": 2, "Teaware": 1, "Sport": 1}  # Kitchen includes Teaware
    assert [b["count"] for b in everything["price_bands"]] == [1, 1, 1, 1, 0, 0]
    # the same parameters, the same rules: unknown ones and `active` for the public
    assert client.get("/products/facets?page=1").status_code == 400
    assert client.get("/products/facets?active=false").status_code == 401
    assert owner_client.get("/products/facets?active=true").json["total"] == 4


def test_updated_after_sorts_by_change_and_lookups_by_slug_and_sku(
    client, owner_client, catalogue, clock
):
    first = catalogue.product(name="First", sku="F-1")
    clock.advance(60)
    second = catalogue.product(name="Second")
    clock.advance(60)
    cursor = clock().strftime("%Y-%m-%dT%H:%M:%SZ")
    assert found(client, f"updated_after={cursor}") == []
    clock.advance(60)
    owner_client.put(f"/products/{first['id']}", json={"stock": 9})
    assert found(client, f"updated_after={cursor}&sort=updated_at") == ["First"]
    assert found(client, "sort=updated_at") == ["Second", "First"]
    assert found(client, "sort=-updated_at") == ["First", "Second"]
    assert found(client, f"created_after={second['created_at']}") == ["Second"]
    assert client.get("/products?updated_after=yesterday").status_code == 400
    assert found(client, f"slug={second['slug']}") == ["Second"]
    assert found(client, "slug=no-such-product") == []
    assert found(client, "sku=F-1") == ["First"]
    assert found(client, "sku=f-1") == []  # a natural key is exact


def test_flask_db_upgrade_rebuilds_the_index_when_its_definition_changes(app, client, shop):
    runner = app.test_cli_runner()
    database = app.extensions["shop.db"]
    with app.app_context():
        # a row written by other means (a bulk load) is not in the index until an upgrade
        database.execute(
            "INSERT INTO products (id, name, slug, price_cents, created_at, updated_at)"
            " VALUES ('p-bulk', 'Bulk Kettle', 'bulk-kettle', 100, 'x', 'x')"
        )
        before = database.value("SELECT definition FROM search_index")
    assert found(client, "q=kettle") == []
    assert runner.invoke(args=["db", "upgrade"]).exit_code == 0
    assert found(client, "q=kettle") == ["Bulk Kettle"]
    # one a node of the previous release made in a rolling upgrade: the worker indexes it
    with app.app_context():
        database.execute(
            "INSERT INTO products (id, name, slug, price_cents, created_at, updated_at)"
            " VALUES ('p-rolled', 'Rolled Kettle', 'rolled-kettle', 100, 'x', 'x')"
        )
    assert found(client, "q=rolled") == []
    result = runner.invoke(args=["jobs", "run", "--once"])
    assert result.exit_code == 0, result.output
    assert found(client, "q=rolled") == ["Rolled Kettle"]
    assert found(client, "q=teapots") == ["Blue Teapot"]  # English stemming
    # another language: the definition differs, so the upgrade rebuilds without stemming
    app.config["SEARCH_LANGUAGE"] = "simple"
    result = runner.invoke(args=["db", "upgrade"])
    assert result.exit_code == 0, result.output
    with app.app_context():
        assert database.value("SELECT definition FROM search_index") != before
    assert found(client, "q=teapots") == []
    assert found(client, "q=teapot") == ["Blue Teapot"]
    assert found(client, "q=tp-blu") == ["Blue Teapot"]
    app.config["SEARCH_LANGUAGE"] = "klingon"
    with app.app_context():
        engine = database.engine
    result = runner.invoke(args=["db", "upgrade"])
    if engine == "postgresql":  # no such text search configuration: said, nothing changed
        assert result.exit_code == 1 and "SHOP_SEARCH_LANGUAGE='klingon'" in result.output
        app.config["SEARCH_LANGUAGE"] = "simple"
        assert found(client, "q=teapot") == ["Blue Teapot"]


# -- variants: their SKUs and option values, option filters and facets ----------------------


def _variants(client, product_id) -> list[dict]:
    return client.get(f"/products/{product_id}/variants").json["items"]


def _patch(client, product_id, variant_id, **body) -> None:
    response = client.patch(f"/products/{product_id}/variants/{variant_id}", json=body)
    assert response.status_code == 200, response.json


@pytest.fixture
def wardrobe(owner_client, catalogue):
    """A shirt in 3 sizes x 2 colours, a hoodie in M and L, black only, and a mug."""
    shirt = catalogue.product(
        name="Shirt",
        price_cents=2000,
        options=[
            {"name": "Size", "values": ["S", "M", "L"]},
            {"name": "Colour", "values": ["Red", "Blue"]},
        ],
        generate=True,
    )
    hoodie = catalogue.product(
        name="Hoodie",
        price_cents=4000,
        options=[
            {"name": "Size", "values": ["M", "L"]},
            {"name": "Colour", "values": ["Black"]},
        ],
        generate=True,
    )
    catalogue.product(name="Mug", price_cents=900)
    return {"shirt": shirt, "hoodie": hoodie}


def test_a_variant_sku_and_option_values_find_their_product(client, owner_client, wardrobe):
    shirt = wardrobe["shirt"]
    variant = next(
        v
        for v in _variants(owner_client, shirt["id"])
        if v["options"] == {"Size": "M", "Colour": "Blue"}
    )
    _patch(owner_client, shirt["id"], variant["id"], sku="SHIRT-M-BLUE-77")
    assert found(client, "q=SHIRT-M-BLUE-77") == ["Shirt"]
    assert found(client, "q=shirt-m-blu") == ["Shirt"]  # type-ahead on a variant SKU
    assert found(client, "q=blue") == ["Shirt"]  # an option value
    assert found(client, "q=black") == ["Hoodie"]
    assert found(client, "sku=SHIRT-M-BLUE-77") == ["Shirt"]  # the lookup, exact
    _patch(owner_client, shirt["id"], variant["id"], active=False)
    assert found(client, "q=SHIRT-M-BLUE-77") == []  # inactive variants are not searched
    assert found(client, "q=blue") == ["Shirt"]  # S/Blue and L/Blue still are


def test_option_filters_and_option_facets(client, owner_client, wardrobe):
    def names(query):
        return sorted(found(client, query))

    assert names("option.Size=M") == ["Hoodie", "Shirt"]
    assert names("option.Size=S&option.Size=L") == ["Hoodie", "Shirt"]  # OR within a name
    assert names("option.Size=M&option.Colour=Red") == ["Shirt"]  # AND across names
    assert names("option.Size=S&option.Colour=Black") == []  # ... on one and the same variant
    assert names("option.Size=XL") == []  # a value no variant has: nothing
    # A name no product has is a mistake, not an empty page (issue 38).
    unknown = client.get("/products?option.Fit=Slim")
    assert unknown.status_code == 400
    assert unknown.json["message"] == "option[Fit]: no product has an option of this name."
    assert names("option.Size=M&q=hoodie") == ["Hoodie"]
    shirt = wardrobe["shirt"]
    red_m = next(
        v
        for v in _variants(owner_client, shirt["id"])
        if v["options"] == {"Size": "M", "Colour": "Red"}
    )
    _patch(owner_client, shirt["id"], red_m["id"], active=False)
    assert names("option.Size=M&option.Colour=Red") == []  # only active variants count
    assert names("option.Size=M") == ["Hoodie", "Shirt"]  # M/Blue is still for sale

    everything = client.get("/products/facets").json
    options = {
        o["name"]: {v["value"]: v["count"] for v in o["values"]} for o in everything["options"]
    }
    assert options == {
        "Size": {"S": 1, "M": 2, "L": 2},
        "Colour": {"Red": 1, "Blue": 1, "Black": 1},
    }
    for filters in (
        {"option.Size": "M"},
        {"option.Size": ["S", "L"], "option.Colour": "Red"},
        {"option.Colour": "Black", "q": "hoodie"},
        {"option.Size": "L", "min_price": 3000},
    ):
        body = client.get("/products/facets", query_string=filters).json
        assert body["total"] == client.get("/products", query_string=filters).json["total"]
        for option in body["options"]:
            for value in option["values"]:
                replaced = {**filters, f"option.{option['name']}": value["value"]}
                total = client.get("/products", query_string=replaced).json["total"]
                assert value["count"] == total, (filters, option["name"], value)


@pytest.mark.parametrize(
    "query, message",
    [
        ("option.=M", "option.: name an option"),
        ("option.Size=", "option.Size: each value is 1 to 200 characters"),
        ("option.Size=" + "x" * 201, "option.Size: each value"),
        ("&".join(f"option.N{i}=v" for i in range(11)), "at most 10 option names"),
        ("opt.Size=M", "opt.Size: Unknown field."),
    ],
)
def test_bad_option_parameters_are_a_400_naming_them(client, query, message):
    for path in ("/products", "/products/facets"):
        response = client.get(f"{path}?{query}")
        assert response.status_code == 400 and message in response.json["message"], path


def test_openapi_documents_the_option_parameters(client):
    spec = client.get("/openapi.json").json
    for path in ("/products", "/products/facets"):
        parameters = {p["name"]: p for p in spec["paths"][path]["get"]["parameters"]}
        # One deepObject parameter, as generators build it from a dict (issue 38).
        option = parameters["option"]
        assert (option["in"], option["style"], option["explode"]) == ("query", "deepObject", True)
        assert option["schema"] == {"type": "object", "additionalProperties": {"type": "string"}}
        assert "same variant" in option["description"]
        assert "`option.Size=M`, is kept" in option["description"]
        assert "option.{name}" not in parameters
        assert {"q", "slug", "sku", "updated_after", "category_id"} <= set(parameters)


def test_pages_of_a_ranked_search_skip_hidden_products_and_count_exactly(
    client, owner_client, catalogue
):
    for i in range(7):
        catalogue.product(name=f"Kettle {i}", description="kettle " * i, active=i % 3 != 1)
    seen = []
    for page in (1, 2, 3, 4):
        body = client.get(f"/products?q=kettle&page_size=2&page={page}").json
        assert body["total"] == 5, page  # Kettle 1 and 4 are inactive
        seen += [item["name"] for item in body["items"]]
    assert sorted(seen) == ["Kettle 0", "Kettle 2", "Kettle 3", "Kettle 5", "Kettle 6"]
    staff = [owner_client.get(f"/products?q=kettle&page_size=3&page={n}").json for n in (1, 2, 3)]
    assert [page["total"] for page in staff] == [7, 7, 7]
    assert len({item["id"] for page in staff for item in page["items"]}) == 7
    hidden = owner_client.get("/products?q=kettle&active=false").json
    assert sorted(item["name"] for item in hidden["items"]) == ["Kettle 1", "Kettle 4"]


def test_the_issues_filter_names_take_ids_or_slugs_and_facets_equal_the_totals(client, shop):
    kitchen, sale = shop["categories"]["kitchen"], shop["sale"]
    for query in (f"category={kitchen['id']}", "category=kitchen", f"category_id={kitchen['id']}"):
        assert found(client, query + "&sort=name") == ["Blue Teapot", "Green tea leaves"], query
    for query in (f"collection={sale['id']}", "collection=sale"):
        assert found(client, query + "&sort=name") == ["Blue Teapot", "Running Shoes"], query
    assert found(client, "price_min=1000&price_max=3500&sort=price") == ["Mug", "Blue Teapot"]
    assert found(client, "category=no-such&in_stock=true") == []  # unknown: empty, as by id
    assert found(client, "collection=no-such") == []
    same = f"category={kitchen['id']}&category_id={kitchen['id']}&price_min=9&min_price=9"
    assert found(client, same + "&sort=name") == ["Blue Teapot", "Green tea leaves"]
    for filters in (
        {"category": "kitchen", "in_stock": "true"},
        {"collection": "sale", "price_max": "9999"},
        {"price_min": "1000", "q": "tea"},
    ):
        body = client.get("/products/facets", query_string=filters).json
        assert body["total"] == client.get("/products", query_string=filters).json["total"]
        for category in body["categories"]:
            replaced = {**filters, "category": category["slug"]}
            total = client.get("/products", query_string=replaced).json["total"]
            assert category["count"] == total, (filters, category)
        for band in body["price_bands"]:
            bounds = {"price_min": band["min_price"], "price_max": band["max_price"]}
            others = {k: v for k, v in {**filters, **bounds}.items() if v is not None}
            total = client.get("/products", query_string=others).json["total"]
            assert band["count"] == total, (filters, band)
    picked = client.get("/products/facets?category=kitchen").json["categories"]
    assert {c["slug"]: c["count"] for c in picked} == {"kitchen": 2, "teaware": 1, "sport": 1}
    spec = client.get("/openapi.json").json
    for path in ("/products", "/products/facets"):
        response = client.get(f"{path}?price_min=1&min_price=2")
        assert response.status_code == 400, path
        assert "price_min, min_price" in response.json["message"]
        response = client.get(f"{path}?collection=sale&collection_id={sale['id']}")
        assert "collection, collection_id" in response.json["message"]  # a slug and its id
        documented = {p["name"]: p for p in spec["paths"][path]["get"]["parameters"]}
        for name in ("category", "collection", "price_min", "price_max", "category_id"):
            assert documented[name]["description"], (path, name)


def test_a_search_of_the_catalogue_ranks_once_per_version_in_at_most_4_statements(
    app, catalogue, sql_count
):
    """The public's search by relevance: the catalogue's version, then (first time at this
    version) the ranking's ids and total, then the page's rows by id and their prior prices
    (issue 40); a page past the end
    is the version alone. Uncached (past the ids kept, or the cache off) it is one statement
    with its total (``Match.quick_page``), two past the end."""
    for n in range(5):
        catalogue.product(name=f"Teapot {n}", price_cents=100 + n)
    catalogue.product(name="Mug", price_cents=100)
    catalogue.product(name="Teapot hidden", price_cents=100, active=False)
    anonymous = app.test_client()

    pages, costs = [], []
    for page in (1, 2, 3):
        with sql_count() as cost:
            body = anonymous.get(f"/products?q=teapot&page_size=2&page={page}").json
        costs.append((cost["statements"], cost["writes"]))
        assert body["total"] == 5 and body["total_is_exact"], page
        pages.append([item["name"] for item in body["items"]])
    # A miss, then hits; each page's prior prices (issue 40) one statement more.
    assert costs == [(4, 0), (3, 0), (3, 0)]
    assert [len(names) for names in pages] == [2, 2, 1]
    assert sorted(sum(pages, [])) == [f"Teapot {n}" for n in range(5)]
    with sql_count() as cost:
        past = anonymous.get("/products?q=teapot&page_size=2&page=4").json
    assert past["items"] == [] and past["total"] == 5 and cost["statements"] == 1
    with sql_count() as cost:  # "TEAPOT" is the same search: the same ranking
        again = anonymous.get("/products?q=TEAPOT&page_size=2").json
    assert [item["name"] for item in again["items"]] == pages[0] and cost["statements"] == 3

    app.config["SEARCH_CACHE_IDS"] = 100  # a page past the ids kept: ranked each time
    for page, statements in ((50, 1), (51, 2)):  # page 51 starts past match 100
        with sql_count() as cost:
            body = anonymous.get(f"/products?q=teapot&page_size=2&page={page}").json
        assert body == {**body, "items": [], "total": 5} and cost["statements"] == statements
    app.config["SEARCH_CACHE_SIZE"] = 0
    app.extensions.pop("shop.search_cache", None)
    for page, statements in ((1, 2), (1, 2), (4, 2)):  # a page's prior prices: one more
        with sql_count() as cost:
            body = anonymous.get(f"/products?q=teapot&page_size=2&page={page}").json
        assert body["total"] == 5 and cost["statements"] == statements, page
    assert [item["name"] for item in body["items"]] == []


def _searched(client, query: str) -> tuple[list[str], int]:
    body = client.get("/products", query_string={"q": query}).json
    return sorted(item["name"] for item in body["items"]), body["total"]


def test_a_cached_search_answers_the_new_truth_after_every_product_write(
    app, client, owner_client, catalogue, sql_count
):
    kettle = catalogue.product(name="Copper Kettle", sku="KT-1", price_cents=1000)
    other = catalogue.product(name="Steel Kettle", price_cents=2000)
    for who in (client, owner_client):  # the public's ranking and staff's, each cached
        costs = []
        for _ in range(2):
            with sql_count() as cost:
                assert _searched(who, "kettle") == (["Copper Kettle", "Steel Kettle"], 2)
            costs.append(cost["statements"])
        assert costs[1] == costs[0] - 1  # then a hit (staff's sign-in adds its own reads)

    assert (
        owner_client.put(f"/products/{kettle['id']}", json={"name": "Copper Urn"}).status_code
        == 200
    )
    assert _searched(client, "kettle") == (["Steel Kettle"], 1)  # renamed
    assert _searched(client, "urn") == (["Copper Urn"], 1)

    assert _searched(client, "ZZ-9") == ([], 0)
    (variant,) = owner_client.get(f"/products/{kettle['id']}").json["variants"]
    path = f"/products/{kettle['id']}/variants/{variant['id']}"
    assert (
        owner_client.patch(path, json={"sku": "ZZ-9"}).status_code == 200
    )  # a new SKU finds its product
    assert _searched(client, "ZZ-9") == (["Copper Urn"], 1)
    assert _searched(client, "KT-1") == ([], 0)

    assert owner_client.put(f"/products/{other['id']}", json={"active": False}).status_code == 200
    assert _searched(client, "kettle") == ([], 0)  # the public no longer sees it
    assert _searched(owner_client, "kettle") == (["Steel Kettle"], 1)
    assert owner_client.delete(f"/products/{other['id']}").status_code == 204
    assert _searched(owner_client, "kettle") == ([], 0)

    imported = owner_client.post(
        "/products/import?dry_run=false",
        data=b"product_slug,product_name,variant_price\r\niron-kettle,Iron Kettle,5.00\r\n",
        content_type="text/csv",
    )
    assert imported.status_code == 200 and imported.json["created"] == 1, imported.json
    assert _searched(client, "kettle") == (["Iron Kettle"], 1)
    with sql_count() as cost:  # a dry run writes nothing (issue 35): the ranking stays good
        dry = owner_client.post(
            "/products/import?dry_run=true",
            data=b"product_slug,product_name,variant_price\r\nold-kettle,Old Kettle,5.00\r\n",
            content_type="text/csv",
        )
    assert dry.json["created"] == 1 and cost["writes"] == 0
    assert _searched(client, "kettle") == (["Iron Kettle"], 1)


def test_a_checkout_shows_in_the_next_search_without_a_new_version(
    app, client, owner_client, customer_client, catalogue, sql_count
):
    from shop.catalogue.search import cache as search_cache
    from tests.orders_helpers import ADDRESS

    lamp = catalogue.product(name="Brass Lamp", price_cents=4000, stock=1)
    first = client.get("/products?q=lamp").json["items"]
    assert [(p["stock"], p["in_stock"]) for p in first] == [(1, True)]
    with app.app_context():
        version = search_cache.version()
    order = customer_client.post(
        "/payments/checkout",
        json={
            "shipping_address": ADDRESS,
            "payment_method": "manual",
            "items": [{"product_id": lamp["id"], "quantity": 1}],
        },
    )
    assert order.status_code == 201, order.json
    with app.app_context():
        assert search_cache.version() == version  # a sale changes no searched text
    with sql_count() as cost:
        after = client.get("/products?q=lamp").json["items"]
    # The cached ranking, the page's rows read now, their prior prices (issue 40).
    assert cost["statements"] == 3
    assert [(p["stock"], p["in_stock"], p["price_cents"]) for p in after] == [(0, False, 4000)]
