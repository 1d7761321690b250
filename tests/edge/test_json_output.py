"""The orjson encoding of JSON answers writes exactly the bytes of Flask's own provider
(shop/http/json_output.py); every answer of the suite is also held to it by
tests/openapi_check.py."""

import dataclasses
import datetime
import decimal
import uuid

import pytest
from flask import Flask
from flask.json.provider import DefaultJSONProvider

from shop.http.json_output import Provider


@dataclasses.dataclass
class Point:
    x: int
    label: str


VALUES = [
    {"name": "Oak Lamp", "price_cents": 4200, "active": True, "stock": None, "tags": []},
    {"z": 1, "a": 2, "m": {"b": [1, 2.5, -0.0]}},  # key order kept, not sorted
    'Café crème à 5,50 € — 日本 \U0001f600 \u2028 \x7f \x00 \x1f " \\ /',
    [0.1, 12.5, 1e-7, 1e-5, 0.0001, 1e16, 1e21, 1.5e-07, 123456789012345678.0, 3.0],
    [2**63 - 1, -(2**63), 2**64, 10**30],  # past 64 bits: json's way
    {1: "int key", "s": "str key"},
    datetime.datetime(2026, 11, 28, 12, 0, tzinfo=datetime.UTC),
    datetime.date(2026, 11, 28),
    decimal.Decimal("5.50"),
    uuid.UUID("12345678-1234-5678-1234-567812345678"),
    Point(1, "é"),
    "2e-commerce 1.0000001",
    [],
    {},
    None,
]


@pytest.mark.parametrize("value", VALUES, ids=range(len(VALUES)))
def test_the_bytes_are_flasks_own(value):
    app = Flask(__name__)
    reference = DefaultJSONProvider(app)
    reference.sort_keys = False
    ours = Provider(app)
    with app.app_context():
        assert ours.response(value).get_data() == reference.response(value).get_data()


def test_debug_mode_keeps_flasks_indented_output():
    app = Flask(__name__)
    app.debug = True
    reference = DefaultJSONProvider(app)
    reference.sort_keys = False
    with app.app_context():
        value = {"b": 1, "a": [1, 2]}
        assert Provider(app).response(value).get_data() == reference.response(value).get_data()
