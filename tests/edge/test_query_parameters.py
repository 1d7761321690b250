"""A query parameter an operation does not declare is a 400 naming it, never ignored: on
every method of every API route, also those that take no query parameters at all (issue 22).
The console's pages, the OpenAPI description, Swagger UI and static files take their own."""

import pytest
from admin_helpers import console_client
from conftest import PASSWORD


def assert_unknown(response, *names):
    assert response.status_code == 400, (response.status_code, response.get_data(as_text=True))
    assert response.json == {"message": " ".join(f"{name}: Unknown field." for name in names)}


@pytest.mark.parametrize(
    "query", ["slugs=teapot", "limit=", "offset=", "after=", "foo=", "limit=5", "foo"]
)
@pytest.mark.parametrize(
    "path", ["/products", "/orders", "/categories", "/collections", "/customers", "/users"]
)
def test_an_unknown_parameter_on_a_list_is_400_naming_it(owner_client, path, query):
    response = owner_client.get(f"{path}?{query}")
    assert_unknown(response, query.split("=")[0])


def test_slug_teapot_does_not_answer_every_product(owner_client):
    """``slug`` is a declared lookup since issue 28: it answers the one product, never all."""
    for name in ("Teapot", "Kettle"):
        response = owner_client.post("/products", json={"name": name, "price_cents": 100})
        assert response.status_code == 201, response.json
    found = owner_client.get("/products?slug=teapot").json
    assert [item["name"] for item in found["items"]] == ["Teapot"]
    assert_unknown(owner_client.get("/products?slugs=teapot"), "slugs")
    assert owner_client.get("/products?q=teapot").json["total"] == 1


def test_each_unknown_parameter_is_named_once_declared_ones_are_not(owner_client):
    response = owner_client.get("/products?page=1&foo=1&bar=2&foo=3&page_size=5")
    assert_unknown(response, "foo", "bar")
    assert_unknown(owner_client.get("/products?=1"), "(empty name)")


def test_declared_parameters_still_work_with_get_and_head(owner_client):
    response = owner_client.get("/products?page=2&page_size=5&q=tea&sort=-price&active=1")
    assert response.status_code == 200, response.json
    assert (response.json["page"], response.json["page_size"]) == (2, 5)
    assert owner_client.head("/products?page=2&page_size=5").status_code == 200
    assert owner_client.head("/products?foo=1").status_code == 400  # no body: HEAD
    assert owner_client.get("/audit-log?page=1").status_code == 200


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("get", "/auth/me"),
        ("get", "/settings"),
        ("get", "/"),
        ("delete", "/products/0123456789abcdef01234567"),
        ("get", "/content/home"),
        ("options", "/products"),
    ],
)
def test_a_route_that_takes_no_query_refuses_any(owner_client, method, path):
    assert_unknown(getattr(owner_client, method)(f"{path}?foo=1"), "foo")


def test_a_write_with_an_unknown_parameter_writes_nothing(owner_client):
    response = owner_client.post("/products?dry_run=1", json={"name": "Pot", "price_cents": 1})
    assert_unknown(response, "dry_run")
    response = owner_client.put("/content/home?publish=0", json={"type": "page", "data": {}})
    assert_unknown(response, "publish")
    assert owner_client.get("/products").json["total"] == 0
    assert owner_client.get("/content/home").status_code == 404


def test_sign_in_refuses_an_unknown_parameter_before_it_signs_in(client, owner_client):
    body = {"email": owner_client.email, "password": PASSWORD}
    assert_unknown(client.post("/auth/login?next=/x", json=body), "next")
    assert client.get("/auth/me").status_code == 401


def test_authentication_and_permission_come_first(client, make_customer):
    assert client.get("/orders?foo=1").status_code == 401
    assert make_customer().get("/users?foo=1").status_code == 403


def test_a_refused_sign_in_counts_against_the_rate_limit(make_app):
    client = make_app(RATELIMIT_ENABLED=True).test_client()
    for _ in range(5):
        assert_unknown(client.post("/auth/login?foo=1", json={}), "foo")
    assert client.post("/auth/login?foo=1", json={}).status_code == 429


def test_the_console_docs_and_static_files_take_their_own(app, client, owner_client):
    assert client.get("/openapi.json?v=1").status_code == 200
    assert client.get("/swagger?v=1").status_code == 200
    assert client.get("/swagger-ui-assets/swagger-ui.css?v=1").status_code == 200
    assert client.get("/favicon.ico?v=1").status_code == 200
    assert client.get("/admin/login?signed_out=1&utm=x").status_code == 200
    browser = console_client(app, owner_client.email, PASSWORD)
    assert browser.get("/admin/api-keys?page=1&utm=x").status_code == 200


def test_every_query_parameter_taken_is_documented(app, owner_client):
    """The set an operation takes is the one OpenAPI lists for it: no hidden extras."""
    spec = app.test_client().get("/openapi.json").json
    products = {p["name"] for p in spec["paths"]["/products"]["get"]["parameters"]}
    assert {"page", "page_size", "q"} <= products
    for name in products:
        response = owner_client.get(f"/products?{name}=1")
        assert "Unknown field" not in (response.json or {}).get("message", ""), name
