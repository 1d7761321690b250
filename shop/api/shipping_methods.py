"""Shipping methods (issue 26): where a method ships, what it costs by weight, when it is free.

Staff manage them with ``shipping.*`` (keys: ``read:shipping`` / ``write:shipping``);
``GET /shipping-methods/available`` is public: the methods and prices for a basket and an
address, as the checkout would charge them (``pricing/rules.py`` decides).
"""

from flask.views import MethodView
from marshmallow import Schema, fields, validate

from shop.api.common import (
    Blueprint,
    ChangedSinceQuerySchema,
    Where,
    changed_since,
    page_schema,
    paginate,
)
from shop.api.schemas import country_code
from shop.api.store_input import (
    ShippingMethodCreateSchema,
    ShippingMethodUpdateSchema,
    WeightBandSchema,
)
from shop.http.context import current_actor
from shop.http.decorators import require_permission
from shop.pricing import baskets
from shop.pricing.rules import Refusal, price
from shop.shipping import methods, store
from shop.site import settings as site

blp = Blueprint(
    "shipping_methods",
    __name__,
    url_prefix="/shipping-methods",
    description="Shipping methods and their prices.",
)


class ShippingMethodSchema(Schema):
    id = fields.String(required=True)
    name = fields.String(required=True)
    countries = fields.List(
        fields.String(),
        required=True,
        metadata={"description": "ISO 3166-1 alpha-2 codes; empty: ships everywhere."},
    )
    price_cents = fields.Integer(required=True)
    free_over_cents = fields.Integer(required=True, allow_none=True)
    weight_bands = fields.List(fields.Nested(WeightBandSchema), required=True)
    tax_class = fields.String(required=True)
    active = fields.Boolean(required=True)
    position = fields.Integer(required=True)
    created_at = fields.String(required=True)
    updated_at = fields.String(required=True)


class AvailableQuerySchema(Schema):
    country = country_code(described=False, required=True)
    items = fields.List(
        fields.String(validate=validate.Regexp(r"^[^:]{1,64}:[1-9][0-9]{0,4}$")),
        validate=validate.Length(max=100),
        metadata={
            "description": "The basket: `variant_id:quantity` (or `product_id:quantity` for a"
            " product with one variant), repeated: `items=a:1&items=b:2`."
        },
    )


class AvailableMethodSchema(Schema):
    id = fields.String(required=True)
    name = fields.String(required=True)
    price_cents = fields.Integer(
        required=True, metadata={"description": "For this basket, before a discount code."}
    )
    currency = fields.String(required=True)


class AvailableMethodsSchema(Schema):
    items = fields.List(fields.Nested(AvailableMethodSchema), required=True)


@blp.route("")
class ShippingMethods(MethodView):
    @blp.doc(operationId="listShippingMethods")
    @blp.arguments(ChangedSinceQuerySchema, location="query")
    @blp.response(200, page_schema(ShippingMethodSchema))
    @require_permission("shipping.read")
    def get(self, args):
        """List shipping methods, by position"""
        where = Where()
        order = changed_since(where, args) or " ORDER BY position, name, id"
        sql = f"SELECT {methods.COLUMNS} FROM shipping_methods"
        page = paginate(sql, "shipping_methods", where, order, args)
        page["items"] = [methods.from_row(row) for row in page["items"]]
        return page

    @blp.doc(operationId="createShippingMethod")
    @blp.arguments(ShippingMethodCreateSchema)
    @blp.response(201, ShippingMethodSchema)
    @require_permission("shipping.create")
    def post(self, data):
        """Create a shipping method"""
        return store.create(data, current_actor())


@blp.route("/available")
class AvailableShippingMethods(MethodView):
    @blp.doc(operationId="listAvailableShippingMethods")
    @blp.arguments(AvailableQuerySchema, location="query")
    @blp.response(200, AvailableMethodsSchema)
    def get(self, args):
        """Shipping methods for a basket and a country

        The active methods that serve the country and the basket's weight, each with what
        it would charge (its `free_over_cents` compared with the subtotal before any
        discount code). Public, for storefronts.
        """
        entries = []
        for entry in args.get("items") or []:
            thing, quantity = entry.rsplit(":", 1)
            entries.append((thing, int(quantity)))
        known = baskets.existing_variants([thing for thing, _ in entries])
        items = [
            {"variant_id" if thing in known else "product_id": thing, "quantity": quantity}
            for thing, quantity in entries
        ]
        lines = baskets.product_lines(items) if items else []
        currency = site.current()["currency"]
        available = []
        for method in methods.active():
            try:
                priced = price(lines, country=args["country"], shipping=method, currency=currency)
            except Refusal:
                continue
            available.append(
                {
                    "id": method["id"],
                    "name": method["name"],
                    "price_cents": priced["shipping_cents"],
                    "currency": currency,
                }
            )
        return {"items": available}


@blp.route("/<id:method_id>")
class ShippingMethodById(MethodView):
    @blp.doc(operationId="getShippingMethod")
    @blp.response(200, ShippingMethodSchema)
    @require_permission("shipping.read")
    def get(self, method_id):
        """One shipping method"""
        return store.get(method_id)

    @blp.doc(operationId="updateShippingMethod")
    @blp.arguments(ShippingMethodUpdateSchema)
    @blp.response(200, ShippingMethodSchema)
    @require_permission("shipping.update")
    def put(self, data, method_id):
        """Change a shipping method

        Fields left out stay as they are. Orders placed keep what they were charged.
        """
        return store.update(method_id, data, current_actor())

    @blp.doc(operationId="deleteShippingMethod")
    @blp.response(204)
    @require_permission("shipping.delete")
    def delete(self, method_id):
        """Delete a shipping method

        Orders placed with it keep its name and what they were charged.
        """
        store.delete(method_id, current_actor())
