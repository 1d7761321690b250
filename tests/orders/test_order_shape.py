"""The order's shape (``shop/orders/shape.py``) is the one definition of an order's JSON:
the database's reader is built from it (and refuses to build from anything else), and the
API's ``OrderSchema`` and the presenter of a just-placed order must match it field for
field, nested objects too, so a field added in one place only fails here."""

import json

import pytest
from marshmallow import fields

from shop.api.schemas import OrderSchema
from shop.orders import order_json, shape
from shop.orders.lifecycle import present_new


def _schema_shape(schema, fields_of: tuple[str, ...], path: str = "order") -> None:
    """``schema``'s dumped fields are ``fields_of`` in its order, nested ones too."""
    dumped = schema.dump_fields
    assert tuple(dumped) == fields_of, path
    for name, nested_shape in shape.NESTED.get(fields_of, {}).items():
        field = dumped[name]
        if isinstance(field, fields.List):
            field = field.inner
        assert isinstance(field, fields.Nested), f"{path}.{name}"
        _schema_shape(field.schema, nested_shape, f"{path}.{name}")


def _value_shape(value: dict, fields_of: tuple[str, ...], path: str = "order") -> None:
    """``value`` holds exactly ``fields_of`` (any order), nested ones too where present."""
    assert sorted(value) == sorted(fields_of), path
    for name, nested_shape in shape.NESTED.get(fields_of, {}).items():
        inner = value[name]
        for element in inner if isinstance(inner, list) else [inner]:
            if element is not None:
                _value_shape(element, nested_shape, f"{path}.{name}")


def test_the_api_schema_is_the_order_shape():
    _schema_shape(OrderSchema(), shape.ORDER)


def test_a_just_placed_order_has_the_order_shape():
    line = {name: None for name in shape.ITEM}
    pricing = {
        "tax_lines": [{"name": "VAT", "rate": "20", "amount_cents": 100}],
        "shipping_tax_cents": 0,
        "prices_include_tax": False,
        "shipping_method": {"id": "m1", "name": "Post"},
        "discount_code": "SAVE",
        "applied": [{"rule": "discount", "detail": "SAVE"}],
    }
    address = {key: "x" for key in shape.ADDRESS}
    row = {
        **{name: None for name in ("id", "number", "customer_id", "customer_email")},
        **{name: 1 for name in ("subtotal_cents", "discount_cents", "shipping_cents")},
        **{name: 1 for name in ("tax_cents", "total_cents")},
        "customer_name": None,
        "status": "pending",
        "currency": "EUR",
        "pricing": json.dumps(pricing),
        "shipping_address": json.dumps(address),
        "created_at": "t",
        "updated_at": "t",
    }
    payment = {"provider": "manual", "amount_cents": 1, "status": "pending", "reference": None}
    history = [{"status": "pending", "at": "t", "by_kind": "user", "by_id": "u"}]
    history[0].update(by_label="U", note=None)
    placed = present_new(row, payment, [line], history)
    _value_shape(placed, shape.ORDER)


def test_the_reader_builds_only_from_the_shape():
    with pytest.raises(ValueError, match="extra \\['gift'\\]"):
        order_json._shaped(
            "sqlite", shape.SHIPMENT_LINE, {"line": "1", "quantity": "1", "gift": "1"}
        )
    with pytest.raises(ValueError, match="missing \\['quantity'\\]"):
        order_json._shaped("sqlite", shape.SHIPMENT_LINE, {"line": "1"})
