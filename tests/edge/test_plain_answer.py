"""A view's plain dict or list is answered without flask-smorest's response wrapper
(``shop.api.common._plain_answer``): the same status, headers and bytes as that wrapper
gives for the same request, and as the API answered before through HTTP."""

import json

import pytest
from flask import g

from tests.catalogue_helpers import Catalogue


def _short_and_general(view):
    """The plain-answer wrapper in ``view``'s chain and flask-smorest's wrapper it stands for."""
    func = view
    while func is not None:
        general = func.__dict__.get("smorest_wrapper")
        if general is not None and func.__wrapped__ is general:
            return func, general
        func = getattr(func, "__wrapped__", None)
    raise AssertionError(f"no plain answer in {view}")


def _both(app, path, headers, view_class, method, **view_args):
    """(short, general): the response of each wrapper to the same request, in one context."""
    answers = []
    for pick in (0, 1):
        with app.test_request_context(path, headers=headers):
            assert app.preprocess_request() is None
            wrapper = _short_and_general(getattr(view_class, method))[pick]
            answers.append(wrapper(view_class(), **view_args))
            g.pop("caller", None)
    return answers


def _same(short, general):
    assert short.status == general.status
    assert list(short.headers) == list(general.headers)
    assert short.get_data() == general.get_data()


@pytest.fixture
def product(owner_client):
    return Catalogue(owner_client).product()


def test_a_keyed_product_read_is_answered_as_flask_smorest_answers_it(app, make_key, product):
    from shop.api.products import ProductById

    key = make_key("read:product")
    headers = {"Authorization": f"Bearer {key.secret}"}
    short, general = _both(
        app, f"/products/{product['id']}", headers, ProductById, "get", product_id=product["id"]
    )
    _same(short, general)
    response = key.get(f"/products/{product['id']}")
    assert response.status_code == 200
    assert [name for name, _ in response.headers] == [
        "Content-Type",
        "Content-Length",
        "Cache-Control",
        "X-Content-Type-Options",
    ]
    assert response.headers["Content-Type"] == "application/json"
    assert response.get_data() == short.get_data()
    body = json.dumps(response.json, separators=(",", ":")).encode() + b"\n"
    assert response.get_data() == body  # json.dumps's bytes, keys in the schema's order


def test_a_list_and_me_are_answered_as_flask_smorest_answers_them(app, owner_client, product):
    from shop.api.auth import Me
    from shop.api.products import ProductQuerySchema, Products

    args = ProductQuerySchema().load({})
    short, general = _both(app, "/products", {}, Products, "get", args=args)
    _same(short, general)
    assert json.loads(short.get_data())["items"][0]["id"] == product["id"]
    cookie = owner_client.get_cookie("shop_admin_session")
    agent = owner_client.environ_base["HTTP_USER_AGENT"]  # the session's browser
    headers = {"Cookie": f"shop_admin_session={cookie.value}", "User-Agent": agent}
    short, general = _both(app, "/auth/me", headers, Me, "get")
    _same(short, general)
    assert json.loads(short.get_data())["email"] == "owner@example.com"
    response = owner_client.get("/auth/me")
    assert response.get_data() == short.get_data()
    assert [name for name, _ in response.headers] == [
        "Content-Type",
        "Content-Length",
        "Cache-Control",
        "X-Content-Type-Options",
    ]


def test_a_created_record_keeps_its_201_and_a_tuple_goes_through_flask_smorest(owner_client):
    created = owner_client.post(
        "/categories", json={"name": "Lamps", "slug": "lamps"}
    )  # a plain dict answered 201
    assert created.status_code == 201 and created.json["slug"] == "lamps"
    shown = owner_client.get(f"/categories/{created.json['id']}")
    assert created.get_data() == shown.get_data()
    # A view answering (body, status) still takes flask-smorest's wrapper.
    first = owner_client.put("/content/home", json={"type": "page", "data": {"a": 1}})
    again = owner_client.put("/content/home", json={"type": "page", "data": {"a": 1}})
    assert (first.status_code, again.status_code) == (201, 200)
    assert first.json["data"] == again.json["data"] == {"a": 1}
