"""The API's shipment schema and the domain's ``ShipmentRequest`` refuse the same bodies
in the same words, so the API, the console and the service say one thing."""

import pytest
from marshmallow import ValidationError

from shop.api.schemas import ShipmentCreateSchema
from shop.errors import Invalid
from shop.http.errors import fold_messages
from shop.orders.shipments import ShipmentRequest

OK = {"carrier": "DHL", "tracking_number": "JD0001"}
# Bodies with only the request's fields (an unknown field never reaches the command), and
# no null where the command reads None as "not given".
ODD = [
    {},
    {"carrier": ""},
    {**OK, "carrier": ""},
    {**OK, "carrier": "   "},
    {**OK, "carrier": "x" * 101},
    {**OK, "tracking_number": " \t"},
    {**OK, "carrier": 5},
    {**OK, "carrier": ["DHL"]},
    {**OK, "tracking_number": True},
    {**OK, "tracking_url": ""},
    {**OK, "tracking_url": "ftp://example.com/x"},
    {**OK, "tracking_url": "example.com/track"},
    {**OK, "tracking_url": "http://"},
    {**OK, "tracking_url": "http://a b"},
    {**OK, "tracking_url": "javascript:alert(1)"},
    {**OK, "tracking_url": 7},
    {**OK, "tracking_url": "https://t.example/" + "a" * 2000},
    {**OK, "lines": "all"},
    {**OK, "lines": {}},
    {**OK, "lines": [1]},
    {**OK, "lines": [None]},
    {**OK, "lines": [{}]},
    {**OK, "lines": [{"line": 1}]},
    {**OK, "lines": [{"line": 0, "quantity": 0}]},
    {**OK, "lines": [{"line": 10_001, "quantity": 1_000_001}]},
    {**OK, "lines": [{"line": "1", "quantity": 1.0}]},
    {**OK, "lines": [{"line": True, "quantity": 2.5}]},
    {**OK, "lines": [{"line": 1, "quantity": 1, "sku": "x"}]},
    {**OK, "lines": [{"line": 1, "quantity": 1}] * 501},
    {**OK, "lines": [{"line": 1, "quantity": 1}, {"line": None, "quantity": -1}]},
    {"carrier": "", "tracking_number": 3, "tracking_url": "nope", "lines": [{}]},
]
GOOD = [
    OK,
    {**OK, "tracking_url": None},
    {**OK, "tracking_url": "https://track.example.com/JD0001?x=1#top"},
    {**OK, "tracking_url": "http://localhost:8000/t"},
    {**OK, "tracking_url": "http://carrier/track"},
    {**OK, "lines": []},
    {**OK, "lines": [{"line": 1, "quantity": 2}, {"line": 10_000, "quantity": 1_000_000}]},
]


def _schema_says(body: dict) -> str | None:
    try:
        ShipmentCreateSchema().load(body)
    except ValidationError as error:
        return " ".join(fold_messages(error.messages))
    return None


def _domain_says(body: dict) -> str | None:
    try:
        ShipmentRequest(**body).checked()
    except Invalid as refusal:
        return refusal.message
    return None


@pytest.mark.parametrize("body", ODD, ids=range(len(ODD)))
def test_an_odd_body_gets_the_same_words(body):
    said = _schema_says(body)
    assert said is not None
    assert _domain_says(body) == said


@pytest.mark.parametrize("body", GOOD, ids=range(len(GOOD)))
def test_a_good_body_passes_both_and_loads_alike(body):
    assert _schema_says(body) is None
    assert ShipmentRequest(**body).checked() == ShipmentCreateSchema().load(
        {k: v for k, v in body.items() if v is not None}
    )


def test_the_words_the_api_and_console_give():
    assert _domain_says({**OK, "tracking_url": "mailto:x@y.z"}) == "tracking_url: Not a valid URL."
    assert _domain_says({**OK, "carrier": ""}) == (
        "carrier: Length must be between 1 and 100. carrier: must not be blank."
    )
