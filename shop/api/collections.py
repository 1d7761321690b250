"""Collections: hand-picked, ordered groups of products, apart from the category tree.

The public sees a collection's active products only; callers holding ``products.read`` see
every id in ``product_ids``, which is what ``PUT`` replaces. The rules are
``shop/catalogue/collections.py``'s.
"""

from flask import g
from flask.views import MethodView
from marshmallow import Schema, ValidationError, fields, validate

from shop import db
from shop.api.catalogue_input import Slug
from shop.api.common import (
    Blueprint,
    ChangedSinceQuerySchema,
    Where,
    changed_since,
    page_schema,
    paginate,
)
from shop.api.schemas import ProductSchema
from shop.catalogue import collections, prices
from shop.catalogue.present import SELECT as PRODUCT_SELECT
from shop.catalogue.present import present as present_product
from shop.http.context import current_actor
from shop.http.decorators import require_permission, shows_more_with
from shop.http.openapi import responds

blp = Blueprint("collections", __name__, url_prefix="/collections", description="Collections.")

MAX_PRODUCTS = collections.MAX_PRODUCTS


def _unique(ids: list) -> None:
    seen = set()
    for product_id in ids:
        if product_id in seen:
            raise ValidationError(f"{product_id!r} appears more than once.")
        seen.add(product_id)


ProductIds = fields.List(
    fields.String(validate=validate.Length(min=1, max=64)),
    validate=[validate.Length(max=MAX_PRODUCTS), _unique],
    metadata={"description": "In display order; replaces the whole list.", "uniqueItems": True},
)


class CollectionSchema(Schema):
    id = fields.String(required=True)
    title = fields.String(required=True)
    slug = fields.String(required=True)
    description = fields.String(required=True)
    product_ids = fields.List(
        fields.String(),
        required=True,
        metadata={"description": "In order; the public sees active products only."},
    )
    created_at = fields.String(required=True)
    updated_at = fields.String(required=True)


class CollectionDetailSchema(CollectionSchema):
    products = fields.List(
        fields.Nested(ProductSchema),
        required=True,
        metadata={"description": "Its active products, in order."},
    )


class CollectionCreateSchema(Schema):
    title = fields.String(required=True, validate=validate.Length(min=1, max=200))
    slug = fields.String(
        validate=Slug, metadata={"description": "Derived from the title when left out."}
    )
    description = fields.String(load_default="", validate=validate.Length(max=10_000))
    product_ids = ProductIds


class CollectionUpdateSchema(Schema):
    title = fields.String(validate=validate.Length(min=1, max=200))
    slug = fields.String(validate=Slug)
    description = fields.String(validate=validate.Length(max=10_000))
    product_ids = ProductIds


class CollectionQuerySchema(ChangedSinceQuerySchema):
    pass


def _sees_all() -> bool:
    return g.caller is not None and g.caller.can("products.read")


@blp.route("")
class Collections(MethodView):
    @blp.doc(operationId="listCollections")
    @shows_more_with("products.read", "inactive products in `product_ids`")
    @blp.arguments(CollectionQuerySchema, location="query")
    @blp.response(200, page_schema(CollectionSchema))
    def get(self, args):
        """List collections, by title"""
        where = Where()
        order = changed_since(where, args, "c.") or collections.ORDER
        sees_all = _sees_all()
        return paginate(
            collections.SELECT,
            "collections c",
            where,
            order,
            args,
            convert=lambda row: collections.present(row, sees_all),
        )

    @blp.doc(operationId="createCollection")
    @responds(409, e409="The `slug` is taken.")
    @blp.arguments(CollectionCreateSchema)
    @blp.response(201, CollectionSchema)
    @require_permission("collections.create")
    def post(self, data):
        """Create a collection"""
        collection_id = collections.create(data, current_actor())
        return collections.get(collection_id, _sees_all())


@blp.route("/<id:collection_id>")
class CollectionById(MethodView):
    @blp.doc(operationId="getCollection")
    @shows_more_with("products.read", "inactive products in `product_ids`")
    @blp.response(200, CollectionDetailSchema)
    def get(self, collection_id):
        """One collection, with its active products in order"""
        collection = collections.get(collection_id, _sees_all())
        rows = db.query(
            PRODUCT_SELECT + " JOIN collection_products c ON c.product_id = p.id"
            " WHERE c.collection_id = :id AND p.active = 1 ORDER BY c.position",
            {"id": collection_id},
        )
        shown = prices.with_product_priors([present_product(row) for row in rows])
        return {**collection, "products": shown}

    @blp.doc(operationId="updateCollection")
    @responds(409, e409="The `slug` is taken.")
    @blp.arguments(CollectionUpdateSchema)
    @blp.response(200, CollectionSchema)
    @require_permission("collections.update")
    def put(self, data, collection_id):
        """Change a collection

        Fields left out stay as they are; `product_ids` replaces the whole list.
        """
        collections.update(collection_id, data, current_actor())
        return collections.get(collection_id, _sees_all())

    @blp.doc(operationId="deleteCollection")
    @blp.response(204)
    @require_permission("collections.delete")
    def delete(self, collection_id):
        """Delete a collection

        Its products stay; only the grouping goes.
        """
        collections.delete(collection_id, current_actor())
