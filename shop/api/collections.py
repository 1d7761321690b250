"""Collections: hand-picked, ordered groups of products, apart from the category tree.

The public sees a collection's active products only; callers holding ``products.read`` see
every id in ``product_ids``, which is what ``PUT`` replaces.
"""

from flask import g
from flask.views import MethodView
from marshmallow import Schema, ValidationError, fields, validate

from shop import audit, db
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
from shop.catalogue import prices, slugs
from shop.catalogue.present import SELECT as PRODUCT_SELECT
from shop.catalogue.present import present as present_product
from shop.clock import now_iso
from shop.http.context import current_actor
from shop.http.decorators import require_permission, shows_more_with
from shop.http.errors import abort
from shop.http.openapi import responds

blp = Blueprint("collections", __name__, url_prefix="/collections", description="Collections.")

MAX_PRODUCTS = 1000

# ``position:product_id`` pairs in one column (string_agg keeps no order on SQLite), and a
# second column that leaves out inactive products for the public.
_SELECT = """
    SELECT c.id, c.title, c.slug, c.description, c.created_at, c.updated_at,
           (SELECT string_agg(cp.position || ':' || cp.product_id, ',')
              FROM collection_products cp WHERE cp.collection_id = c.id) AS all_products,
           (SELECT string_agg(cp.position || ':' || cp.product_id, ',')
              FROM collection_products cp JOIN products p ON p.id = cp.product_id
             WHERE cp.collection_id = c.id AND p.active = 1) AS active_products
    FROM collections c"""


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


def _ordered(pairs: str | None) -> list[str]:
    """Product ids from ``position:id`` pairs, by position."""
    if not pairs:
        return []
    split = (pair.split(":", 1) for pair in pairs.split(","))
    return [product_id for _, product_id in sorted((int(p), i) for p, i in split)]


def _present(row: dict) -> dict:
    sees_all = g.caller is not None and g.caller.can("products.read")
    return {
        "id": row["id"],
        "title": row["title"],
        "slug": row["slug"],
        "description": row["description"],
        "product_ids": _ordered(row["all_products" if sees_all else "active_products"]),
        "created_at": row["created_at"],
        "updated_at": row["updated_at"],
    }


def _get(collection_id: str) -> dict:
    row = db.one(_SELECT + " WHERE c.id = :id", {"id": collection_id})
    if row is None:
        abort(404, "Collection not found.")
    return _present(row)


def _set_products(collection_id: str, product_ids: list[str]) -> None:
    """Replace the collection's products (400 naming unknown ids, nothing written)."""
    if product_ids:
        db.lock("products")  # so none of them is deleted before the insert
        marks, params = db.in_list("id", product_ids)
        known = db.query(f"SELECT id FROM products WHERE id IN {marks}", params)
        known_ids = {row["id"] for row in known}
        unknown = [i for i in product_ids if i not in known_ids]
        if unknown:
            abort(400, "product_ids: unknown product ids " + ", ".join(map(repr, unknown)) + ".")
    db.execute("DELETE FROM collection_products WHERE collection_id = :id", {"id": collection_id})
    db.execute_many(
        "INSERT INTO collection_products (collection_id, product_id, position)"
        " VALUES (:collection_id, :product_id, :position)",
        [
            {"collection_id": collection_id, "product_id": product_id, "position": position}
            for position, product_id in enumerate(product_ids)
        ],
    )


@blp.route("")
class Collections(MethodView):
    @blp.doc(operationId="listCollections")
    @shows_more_with("products.read", "inactive products in `product_ids`")
    @blp.arguments(CollectionQuerySchema, location="query")
    @blp.response(200, page_schema(CollectionSchema))
    def get(self, args):
        """List collections, by title"""
        where = Where()
        order = changed_since(where, args, "c.") or " ORDER BY c.title, c.id"
        return paginate(_SELECT, "collections c", where, order, args, convert=_present)

    @blp.doc(operationId="createCollection")
    @responds(409, e409="The `slug` is taken.")
    @blp.arguments(CollectionCreateSchema)
    @blp.response(201, CollectionSchema)
    @require_permission("collections.create")
    def post(self, data):
        """Create a collection"""
        collection_id, moment = db.new_id(), now_iso()
        with db.transaction():
            db.lock("collections")
            slug = slugs.claim("collections", data.get("slug"), data["title"], "collection")
            db.execute(
                "INSERT INTO collections (id, title, slug, description, created_at, updated_at)"
                " VALUES (:id, :title, :slug, :description, :now, :now)",
                {
                    "id": collection_id,
                    "title": data["title"],
                    "slug": slug,
                    "description": data["description"],
                    "now": moment,
                },
            )
            _set_products(collection_id, data.get("product_ids", []))
            audit.record(
                "collection.created",
                {"collection_id": collection_id, "slug": slug},
                actor=current_actor(),
            )
        return _get(collection_id)


@blp.route("/<id:collection_id>")
class CollectionById(MethodView):
    @blp.doc(operationId="getCollection")
    @shows_more_with("products.read", "inactive products in `product_ids`")
    @blp.response(200, CollectionDetailSchema)
    def get(self, collection_id):
        """One collection, with its active products in order"""
        collection = _get(collection_id)
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
        with db.transaction():
            db.lock("collections")
            row = db.one(
                "SELECT title, slug, description FROM collections WHERE id = :id",
                {"id": collection_id},
            )
            if row is None:
                abort(404, "Collection not found.")
            if "slug" in data:
                slugs.claim("collections", data["slug"], "", "collection", collection_id)
            merged = {**row, **data}
            db.execute(
                "UPDATE collections SET title = :title, slug = :slug, description = :description,"
                " updated_at = :now WHERE id = :id",
                {
                    "title": merged["title"],
                    "slug": merged["slug"],
                    "description": merged["description"],
                    "now": now_iso(),
                    "id": collection_id,
                },
            )
            if "product_ids" in data:
                _set_products(collection_id, data["product_ids"])
            audit.record(
                "collection.updated",
                {
                    "collection_id": collection_id,
                    **{k: v for k, v in data.items() if k != "description"},
                },
                actor=current_actor(),
            )
        return _get(collection_id)

    @blp.doc(operationId="deleteCollection")
    @blp.response(204)
    @require_permission("collections.delete")
    def delete(self, collection_id):
        """Delete a collection

        Its products stay; only the grouping goes.
        """
        with db.transaction():
            slug = db.value("SELECT slug FROM collections WHERE id = :id", {"id": collection_id})
            if slug is None:
                abort(404, "Collection not found.")
            db.execute("DELETE FROM collections WHERE id = :id", {"id": collection_id})
            audit.record(
                "collection.deleted",
                {"collection_id": collection_id, "slug": slug},
                actor=current_actor(),
            )
