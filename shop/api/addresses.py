"""A signed-in customer's address book (issue 38): ``/auth/me/addresses``.

Parse, call ``shop/customers/addresses.py``, present. An address takes the checkout's fields,
checked by the checkout's own schema (``ShippingAddressSchema``), so an address the book
accepts is one the checkout accepts; ``POST /payments/checkout`` and ``POST /payments/quote``
take its id as ``shipping_address_id``.
"""

from flask import g, request
from flask.views import MethodView
from marshmallow import fields, validate

from shop.api.common import Blueprint, PageQuerySchema, StrictBoolean, page_schema, paginate_rows
from shop.api.schemas import OrderAddressSchema, ShippingAddressSchema
from shop.customers import addresses
from shop.http.decorators import require_auth
from shop.http.openapi import responds

blp = Blueprint(
    "addresses", __name__, url_prefix="/auth/me/addresses", description="Your address book."
)

_FLAG_DOC = {
    "default_shipping": "The address checkouts and carts offer first; setting it takes the"
    " flag off your other address that had it.",
    "default_billing": "Your billing address; setting it takes the flag off your other"
    " address that had it.",
}


class AddressCreateSchema(ShippingAddressSchema):
    """A new address: the checkout's fields and the default flags (your first address is
    both defaults unless you say otherwise)."""

    default_shipping = StrictBoolean(metadata={"description": _FLAG_DOC["default_shipping"]})
    default_billing = StrictBoolean(metadata={"description": _FLAG_DOC["default_billing"]})


class AddressUpdateSchema(AddressCreateSchema):
    """The fields to change; those left out stay. `line2` and `region` may be null (cleared)."""

    line2 = fields.String(
        allow_none=True,
        validate=validate.Length(max=200),
        metadata={"description": "null or empty clears it."},
    )
    region = fields.String(
        allow_none=True,
        validate=validate.Length(min=1, max=50),
        metadata={"description": "State or province code, such as NY; null clears it."},
    )


class AddressSchema(OrderAddressSchema):
    id = fields.String(required=True)
    default_shipping = fields.Boolean(required=True)
    default_billing = fields.Boolean(required=True)
    created_at = fields.String(required=True)
    updated_at = fields.String(required=True)


def _change(data: dict, given) -> addresses.AddressChange:
    """The command from a loaded body; ``given``: the names the body holds (a PATCH)."""
    return addresses.AddressChange(
        fields={k: data[k] for k in addresses.FIELDS if k in data and k in given},
        flags={k: data[k] for k in addresses.FLAGS if k in data},
    )


@blp.route("")
class Addresses(MethodView):
    @blp.doc(operationId="listMyAddresses")
    @blp.arguments(PageQuerySchema, location="query")
    @blp.response(200, page_schema(AddressSchema))
    @require_auth("customer")
    def get(self, args):
        """Your saved addresses, oldest first"""
        return paginate_rows(addresses.list_addresses(g.caller.id), args)

    @blp.doc(operationId="addMyAddress")
    @responds(409, e409=f"You already have {addresses.MAX_ADDRESSES} addresses.")
    @blp.arguments(AddressCreateSchema)
    @blp.response(201, AddressSchema)
    @require_auth("customer")
    def post(self, data):
        """Save an address

        The fields and rules of the checkout's `shipping_address`. Your first address becomes
        your default shipping and billing address unless the flags say otherwise; a flag
        set to true takes it off the address that had it, in the same transaction.
        """
        return addresses.add_address(g.caller.id, _change(data, data))


@blp.route("/<id:address_id>")
class AddressById(MethodView):
    @blp.doc(operationId="getMyAddress")
    @blp.response(200, AddressSchema)
    @require_auth("customer")
    def get(self, address_id):
        """One of your addresses

        Another customer's address is a 404, as one that does not exist.
        """
        return addresses.get_address(g.caller.id, address_id)

    @blp.doc(operationId="updateMyAddress")
    @blp.arguments(AddressUpdateSchema(partial=True))
    @blp.response(200, AddressSchema)
    @require_auth("customer")
    def patch(self, data, address_id):
        """Change one of your addresses

        Fields left out stay as they are; an empty object is a 400. `default_shipping: true`
        (or `default_billing`) takes the flag off your other address that had it, in the
        same transaction; `false` leaves you without a default of that kind.
        """
        given = set(request.get_json())
        return addresses.change_address(g.caller.id, address_id, _change(data, given))

    @blp.doc(operationId="deleteMyAddress")
    @blp.response(204)
    @require_auth("customer")
    def delete(self, address_id):
        """Delete one of your addresses

        Orders sent to it keep their own copy. Deleting a default leaves no default of its
        kind.
        """
        addresses.delete_address(g.caller.id, address_id)
