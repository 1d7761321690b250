"""Categories (spec 4.3): a tree through ``parent_id``, listed flat by ``position``.

A category cannot become its own ancestor (400), and cannot be deleted while products or
sub-categories use it (409, naming them).
"""

from flask.views import MethodView
from marshmallow import Schema, fields, validate

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
from shop.catalogue import slugs
from shop.catalogue.present import check_exists
from shop.clock import now_iso
from shop.http.context import current_actor
from shop.http.decorators import require_permission
from shop.http.errors import abort
from shop.http.openapi import responds

blp = Blueprint("categories", __name__, url_prefix="/categories", description="Categories.")

_COLUMNS = "id, name, slug, description, parent_id, position, created_at, updated_at"

# The ancestors of :parent_id, itself included (UNION stops on a cycle already stored).
_IS_ANCESTOR_OR_SELF = """
    WITH RECURSIVE up (id, parent_id) AS (
        SELECT id, parent_id FROM categories WHERE id = :parent_id
        UNION
        SELECT c.id, c.parent_id FROM categories c JOIN up ON c.id = up.parent_id
    )
    SELECT 1 FROM up WHERE id = :id"""

_POSITION = validate.Range(min=-1_000_000, max=1_000_000)


class CategorySchema(Schema):
    id = fields.String(required=True)
    name = fields.String(required=True)
    slug = fields.String(required=True)
    description = fields.String(required=True)
    parent_id = fields.String(required=True, allow_none=True)
    position = fields.Integer(required=True)
    created_at = fields.String(required=True)
    updated_at = fields.String(required=True)


class CategoryCreateSchema(Schema):
    name = fields.String(required=True, validate=validate.Length(min=1, max=200))
    slug = fields.String(
        validate=Slug, metadata={"description": "Derived from the name when left out."}
    )
    description = fields.String(load_default="", validate=validate.Length(max=10_000))
    parent_id = fields.String(load_default=None, allow_none=True, validate=validate.Length(max=64))
    position = fields.Integer(strict=True, load_default=0, validate=_POSITION)


class CategoryUpdateSchema(Schema):
    name = fields.String(validate=validate.Length(min=1, max=200))
    slug = fields.String(validate=Slug)
    description = fields.String(validate=validate.Length(max=10_000))
    parent_id = fields.String(allow_none=True, validate=validate.Length(max=64))
    position = fields.Integer(strict=True, validate=_POSITION)


class CategoryQuerySchema(ChangedSinceQuerySchema):
    pass


def _get(category_id: str) -> dict:
    row = db.one(f"SELECT {_COLUMNS} FROM categories WHERE id = :id", {"id": category_id})
    if row is None:
        abort(404, "Category not found.")
    return row


def _check_parent(category_id: str, parent_id: str | None) -> None:
    """400 when ``parent_id`` is unknown, or is the category itself or one of its descendants."""
    check_exists(parent_id, "parent_id")
    if parent_id is not None and db.value(
        _IS_ANCESTOR_OR_SELF, {"parent_id": parent_id, "id": category_id}
    ):
        abort(400, "parent_id: a category cannot sit under itself or one of its sub-categories.")


@blp.route("")
class Categories(MethodView):
    @blp.doc(operationId="listCategories")
    @blp.arguments(CategoryQuerySchema, location="query")
    @blp.response(200, page_schema(CategorySchema))
    def get(self, args):
        """List categories, by position

        Flat: rebuild the tree from `parent_id`. Ties in `position` go by name.
        """
        where = Where()
        order = changed_since(where, args) or " ORDER BY position, name, id"
        return paginate(f"SELECT {_COLUMNS} FROM categories", "categories", where, order, args)

    @blp.doc(operationId="createCategory")
    @responds(409, e409="The `slug` is taken.")
    @blp.arguments(CategoryCreateSchema)
    @blp.response(201, CategorySchema)
    @require_permission("categories.create")
    def post(self, data):
        """Create a category"""
        category_id, moment = db.new_id(), now_iso()
        with db.transaction():
            db.lock("categories")
            check_exists(data["parent_id"], "parent_id")
            slug = slugs.claim("categories", data.get("slug"), data["name"], "category")
            db.execute(
                "INSERT INTO categories (id, name, slug, description, parent_id, position,"
                " created_at, updated_at) VALUES (:id, :name, :slug, :description, :parent_id,"
                " :position, :now, :now)",
                {
                    "id": category_id,
                    "name": data["name"],
                    "slug": slug,
                    "description": data["description"],
                    "parent_id": data["parent_id"],
                    "position": data["position"],
                    "now": moment,
                },
            )
            audit.record(
                "category.created",
                {"category_id": category_id, "slug": slug},
                actor=current_actor(),
            )
        return _get(category_id)


@blp.route("/<id:category_id>")
class CategoryById(MethodView):
    @blp.doc(operationId="getCategory")
    @blp.response(200, CategorySchema)
    def get(self, category_id):
        """One category"""
        return _get(category_id)

    @blp.doc(operationId="updateCategory")
    @responds(409, e409="The `slug` is taken.")
    @blp.arguments(CategoryUpdateSchema)
    @blp.response(200, CategorySchema)
    @require_permission("categories.update")
    def put(self, data, category_id):
        """Change a category

        Fields left out stay as they are; `parent_id: null` makes it a top-level category.
        """
        with db.transaction():
            db.lock("categories")
            row = _get(category_id)
            if "parent_id" in data:
                _check_parent(category_id, data["parent_id"])
            if "slug" in data:
                slugs.claim("categories", data["slug"], row["name"], "category", category_id)
            merged = {**row, **data}
            db.execute(
                "UPDATE categories SET name = :name, slug = :slug, description = :description,"
                " parent_id = :parent_id, position = :position, updated_at = :now"
                " WHERE id = :id",
                {
                    "name": merged["name"],
                    "slug": merged["slug"],
                    "description": merged["description"],
                    "parent_id": merged["parent_id"],
                    "position": merged["position"],
                    "now": now_iso(),
                    "id": category_id,
                },
            )
            audit.record(
                "category.updated", {"category_id": category_id, **data}, actor=current_actor()
            )
        return _get(category_id)

    @blp.doc(operationId="deleteCategory")
    @responds(409, e409="Products or sub-categories still use it.")
    @blp.response(204)
    @require_permission("categories.delete")
    def delete(self, category_id):
        """Delete a category

        Refused (409) while products or sub-categories use it: move or delete them first.
        """
        with db.transaction():
            db.lock("categories")
            row = _get(category_id)
            blockers = _blockers(category_id)
            if blockers:
                abort(409, "This category is still used by " + blockers + ": move them first.")
            db.execute("DELETE FROM categories WHERE id = :id", {"id": category_id})
            audit.record(
                "category.deleted",
                {"category_id": category_id, "slug": row["slug"]},
                actor=current_actor(),
            )


_BLOCKERS = (
    ("product", "products", "products WHERE category_id = :id"),
    ("sub-category", "sub-categories", "categories WHERE parent_id = :id"),
)


def _blockers(category_id: str) -> str:
    """Which products and sub-categories keep a category from being deleted ('' if none)."""
    parts = []
    for one, many, source in _BLOCKERS:
        count = db.value("SELECT COUNT(*) FROM " + source, {"id": category_id})
        if count:
            names = db.query(
                "SELECT name FROM " + source + " ORDER BY name LIMIT 5", {"id": category_id}
            )
            shown = ", ".join(repr(row["name"]) for row in names)
            more = f" and {count - 5} more" if count > 5 else ""
            parts.append(f"{count} {one if count == 1 else many} ({shown}{more})")
    return " and ".join(parts)
