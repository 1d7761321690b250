"""Checkout's body is loaded by a compiled function (``shop/api/load.py``, issue 42): for
every body, valid or not, it answers what marshmallow's own load answers, or raises the same
errors."""

import copy

import pytest
from marshmallow import ValidationError

from shop.api.load import compile_load
from shop.api.payments import CheckoutSchema, QuoteRequestSchema

VALID = {
    "items": [{"product_id": "p1", "quantity": 1}, {"variant_id": "v2", "quantity": 3}],
    "shipping_address": {
        "name": " Robin ",
        "line1": "1 High Street",
        "line2": "",
        "city": "Bath",
        "postal_code": "BA1 1AA",
        "country": "GB",
        "region": "ny",
    },
    "payment_method": "manual",
    "shipping_method_id": "m1",
    "discount_code": "SAVE10",
}
ODD_VALUES = [None, "", " ", "x" * 300, 0, -1, 1, 10_001, 1.0, 2.5, True, False, [], {}, ["a"]]


def _bodies():
    """The valid body, and it with each field (the lines' and the address's too) removed or
    set to each odd value, plus the odd shapes a client sends."""
    yield VALID
    paths = [(k,) for k in VALID] + [("shipping_address", k) for k in VALID["shipping_address"]]
    paths += [("items", 0, k) for k in ("product_id", "quantity")] + [("items", 1, "variant_id")]
    for path in paths:
        for value in [*ODD_VALUES, "absent"]:
            body = copy.deepcopy(VALID)
            parent = body
            for step in path[:-1]:
                parent = parent[step]
            if value == "absent":
                del parent[path[-1]]
            else:
                parent[path[-1]] = value
            yield body
    yield {**VALID, "unknown": 1}
    yield {**VALID, "shipping_address_id": "a1"}
    yield {k: v for k, v in VALID.items() if k != "shipping_address"} | {"shipping_address_id": "a"}
    yield {**VALID, "items": [{"product_id": "p1", "quantity": 1}] * 2}
    yield {**VALID, "items": [{"quantity": 1}]}
    yield {**VALID, "items": [{"product_id": "p1", "quantity": 1, "extra": 1}]}
    yield {**VALID, "items": [{"product_id": "p", "quantity": 1}] * 101}
    yield {**VALID, "items": [None]}
    yield {**VALID, "shipping_address": {**VALID["shipping_address"], "extra": "x"}}
    yield {**VALID, "payment_method": "bitcoin"}
    yield []
    yield "text"


def _outcome(load, body):
    try:
        return "loaded", load(copy.deepcopy(body))
    except ValidationError as error:
        return "refused", error.messages


@pytest.mark.parametrize("schema_class", [CheckoutSchema, QuoteRequestSchema])
def test_the_compiled_load_answers_what_marshmallow_answers(app, schema_class):
    with app.app_context():
        compiled = compile_load(schema_class())
        assert compiled is not None
        reference = schema_class()
        outcomes = set()
        for body in _bodies():
            expected = _outcome(reference.load, body)
            assert _outcome(compiled, body) == expected, body
            outcomes.add(expected[0])
    assert outcomes == {"loaded", "refused"}


def test_a_schema_the_compiler_does_not_know_is_left_to_marshmallow():
    from marshmallow import Schema, fields, pre_load

    class Dated(Schema):
        at = fields.DateTime()

    class Prepared(Schema):
        name = fields.String()

        @pre_load
        def prepare(self, data, **_kwargs):
            return data

    assert compile_load(Dated()) is None
    assert compile_load(Prepared()) is None
