"""Categories (spec 4.3): a tree through ``parent_id``, listed flat by ``position``.

A category cannot become its own ancestor (400), and cannot be deleted while products or
sub-categories use it (409, naming them). The rules are ``shop/catalogue/categories.py``'s.
"""

from flask.views import MethodView
from marshmallow import Schema, fields, validate

from shop.api.catalogue_input import Slug
from shop.api.common import (
    Blueprint,
    ChangedSinceQuerySchema,
    Where,
    changed_since,
    page_schema,
    paginate,
)
from shop.catalogue import categories
from shop.http.context import current_actor
from shop.http.decorators import require_permission
from shop.http.openapi import responds

blp = Blueprint("categories", __name__, url_prefix="/categories", description="Categories.")

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
        order = changed_since(where, args) or categories.ORDER
        select = f"SELECT {categories.COLUMNS} FROM categories"
        return paginate(select, "categories", where, order, args)

    @blp.doc(operationId="createCategory")
    @responds(409, e409="The `slug` is taken.")
    @blp.arguments(CategoryCreateSchema)
    @blp.response(201, CategorySchema)
    @require_permission("categories.create")
    def post(self, data):
        """Create a category"""
        category_id = categories.create(data, current_actor())
        return categories.get(category_id)


@blp.route("/<id:category_id>")
class CategoryById(MethodView):
    @blp.doc(operationId="getCategory")
    @blp.response(200, CategorySchema)
    def get(self, category_id):
        """One category"""
        return categories.get(category_id)

    @blp.doc(operationId="updateCategory")
    @responds(409, e409="The `slug` is taken.")
    @blp.arguments(CategoryUpdateSchema)
    @blp.response(200, CategorySchema)
    @require_permission("categories.update")
    def put(self, data, category_id):
        """Change a category

        Fields left out stay as they are; `parent_id: null` makes it a top-level category.
        """
        categories.update(category_id, data, current_actor())
        return categories.get(category_id)

    @blp.doc(operationId="deleteCategory")
    @responds(409, e409="Products or sub-categories still use it.")
    @blp.response(204)
    @require_permission("categories.delete")
    def delete(self, category_id):
        """Delete a category

        Refused (409) while products or sub-categories use it: move or delete them first.
        """
        categories.delete(category_id, current_actor())
