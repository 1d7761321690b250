"""Variants (issue 25): what a product sells, one per combination of its option values.

Variants are part of the product: reading them follows the product's rules (the public sees
the active variants of active products), changing them needs ``products.update`` (a key:
``write:product``). The rules live in ``shop/catalogue/variants.py``.
"""

from flask import g
from flask.views import MethodView
from marshmallow import Schema, fields

from shop import db
from shop.api.catalogue_input import GenerateSchema, VariantCreateSchema, VariantUpdateSchema
from shop.api.common import Blueprint
from shop.api.schemas import VariantSchema
from shop.catalogue import prices, variants
from shop.catalogue.present import variants_of
from shop.http.decorators import require_permission, shows_more_with
from shop.http.errors import abort
from shop.http.openapi import responds

blp = Blueprint("variants", __name__, url_prefix="/products", description="Variants of products.")


class VariantListSchema(Schema):
    items = fields.List(fields.Nested(VariantSchema), required=True)
    total = fields.Integer(required=True)


def _listed(items: list[dict]) -> dict:
    return {"items": items, "total": len(items)}


def _visible(product_id: str) -> bool:
    """Whether the caller sees the product's inactive variants (404 for a product it can't see)."""
    staff = g.caller is not None and g.caller.can("products.read")
    sql = "SELECT 1 FROM products WHERE id = :id" + ("" if staff else " AND active = 1")
    if not db.value(sql, {"id": product_id}):
        abort(404, "Product not found.")
    return staff


@blp.route("/<id:product_id>/variants")
class Variants(MethodView):
    @blp.doc(operationId="listVariants")
    @shows_more_with("products.read", "inactive variants and products")
    @blp.response(200, VariantListSchema)
    def get(self, product_id):
        """List a product's variants

        In their `position` order, all of them (a product has at most a few hundred).
        """
        staff = _visible(product_id)
        return _listed(variants_of(product_id, active_only=not staff))

    @blp.doc(operationId="createVariant")
    @responds(409, e409="Another variant has these option values or this `sku`.")
    @blp.arguments(VariantCreateSchema)
    @blp.response(201, VariantSchema)
    @require_permission("products.update")
    def post(self, data, product_id):
        """Add a variant

        `options` names one value of every option of the product. The price is the
        product's when left out, the stock 0.
        """
        with db.transaction():
            db.lock("products")
            return variants.create_variant(product_id, data)


@blp.route("/<id:product_id>/variants/generate")
class GenerateVariants(MethodView):
    @blp.doc(operationId="generateVariants")
    @blp.arguments(GenerateSchema)
    @blp.response(200, VariantListSchema)
    @require_permission("products.update")
    def post(self, data, product_id):
        """Create the missing combinations

        Every combination of the option values that has no variant yet, priced from the
        request or the product's price; answers the variants created (none when run again).
        More than 250 combinations is a 400.
        """
        with db.transaction():
            db.lock("products")
            return _listed(variants.generate(product_id, data))


@blp.route("/<id:product_id>/variants/<id:variant_id>")
class VariantById(MethodView):
    @blp.doc(operationId="updateVariant")
    @responds(409, e409="Another variant has these option values or this `sku`.")
    @blp.arguments(VariantUpdateSchema)
    @blp.response(200, VariantSchema)
    @require_permission("products.update")
    def patch(self, data, product_id, variant_id):
        """Change a variant

        Only the fields given change.
        """
        with db.transaction():
            db.lock("products")
            return variants.update_variant(product_id, variant_id, data)

    @blp.doc(operationId="deleteVariant")
    @responds(409, e409="It is the product's only variant.")
    @blp.response(204)
    @require_permission("products.update")
    def delete(self, product_id, variant_id):
        """Delete a variant

        A product keeps at least one: deleting its last is a 409. Orders keep their copy.
        """
        with db.transaction():
            db.lock("products")
            variants.delete_variant(product_id, variant_id)


class PriceChangeSchema(Schema):
    price_cents = fields.Integer(required=True)
    at = fields.String(required=True, metadata={"description": "When this price took effect."})


class PriceHistorySchema(Schema):
    items = fields.List(
        fields.Nested(PriceChangeSchema),
        required=True,
        metadata={"description": "Newest first: the first is the current price."},
    )


@blp.route("/<id:product_id>/variants/<id:variant_id>/price-history")
class VariantPriceHistory(MethodView):
    @blp.doc(operationId="getVariantPriceHistory")
    @shows_more_with("products.read", "inactive variants and products")
    @blp.response(200, PriceHistorySchema)
    def get(self, product_id, variant_id):
        """A variant's price changes

        Every price it has had and when it took effect, newest first, kept at least 61
        days (what the prior price needs: docs/invoicing.md). Visible as the variant is.
        """
        staff = _visible(product_id)
        if not staff and not db.value(
            "SELECT 1 FROM product_variants WHERE id = :id AND active = 1", {"id": variant_id}
        ):
            abort(404, "Variant not found.")
        return {"items": prices.history(product_id, variant_id)}
