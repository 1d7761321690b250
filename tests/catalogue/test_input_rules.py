"""The catalogue's plain checks (shop.catalogue.input) and the API's schemas
(shop.api.catalogue_input) refuse the same input with the same words: the importer and the
console meet the messages an API body gets. Pure rules, tested without an app."""

import pytest
from marshmallow import ValidationError

from shop.api import catalogue_input as api
from shop.catalogue import input as rules
from shop.checks.fields import check
from shop.errors import Invalid
from shop.http.errors import fold_messages

SHAPES = {
    "product_create": (rules.PRODUCT_CREATE, api.ProductCreateSchema),
    "product_update": (rules.PRODUCT_UPDATE, api.ProductUpdateSchema),
    "variant": (rules.VARIANT, api.VariantCreateSchema),
    "generate": (rules.GENERATE, api.GenerateSchema),
}

# Values tried in every field: of each kind, at and beyond the limits.
ODD = [
    None,
    True,
    0,
    -1,
    1,
    1.5,
    10**9,
    10**9 + 1,
    10**12,
    10**12 + 1,
    "",
    "x",
    "Mug",
    "mug-2",
    "Mug Blue",
    "mug--2",
    "mug\n",
    "a" * 64,
    "a" * 65,
    "a" * 101,
    "a" * 201,
    "a" * 50_001,
    "reduced",
    "Reduced",
    [],
    [1],
    ["x"],
    {},
    {"Size": "M"},
    {"": "M", "Size": ""},
    {"Size": 1, 2: "x"},
    [{"name": "Size", "values": ["S", "M"]}],
    [{"name": "Size", "values": ["S", "S"]}],
    [{"name": "Size", "values": ["S"]}, {"name": "Size", "values": ["M"]}],
    [{"name": "", "values": []}, "x", None, {"name": "C", "values": ["S"], "x": 1}],
    [{"name": f"O{i}", "values": ["v"]} for i in range(4)],
    [{"name": "Size", "values": ["v"] * 101}],
    [{"values": ["a", "a"]}],
]


def _api(schema, data) -> str | None:
    try:
        schema().load(data)
    except ValidationError as error:
        return " ".join(fold_messages(error.messages))
    return None


def _domain(shape, data) -> str | None:
    try:
        check(shape, data)
    except Invalid as error:
        return error.message
    return None


def _cases(shape) -> list:
    bodies = [None, [], "x", {}, {"unknown": 1}]
    for name in shape:
        bodies += [{name: value} for value in ODD]
    bodies.append({name: ODD[index % len(ODD)] for index, name in enumerate(shape)})
    bodies.append({name: ODD[-index % len(ODD)] for index, name in enumerate(shape)})
    return bodies


@pytest.mark.parametrize("name", SHAPES)
def test_the_domain_refuses_as_the_api_does_word_for_word(name):
    shape, schema = SHAPES[name]
    refused = 0
    for body in _cases(shape):
        expected = _api(schema, body)
        assert _domain(shape, body) == expected, body
        refused += expected is not None
    assert refused > 100


@pytest.mark.parametrize("name", SHAPES)
def test_the_domain_loads_what_the_api_loads(name):
    shape, schema = SHAPES[name]
    good = {
        "product_create": {"name": "Mug", "price_cents": 500, "options": ODD[31]},
        "product_update": {"slug": "mug-2", "sku": None, "active": False},
        "variant": {"options": {"Size": "M"}, "stock": 3, "compare_at_price_cents": None},
        "generate": {},
    }[name]
    assert check(shape, good) == schema().load(good)
    assert check(shape, check(shape, good)) == check(shape, good)  # the API's output passes
