"""Products (spec 4.2): the catalogue's items, priced in the shop currency.

The public sees active products only; callers holding ``products.read`` (or a key with
``read:product``) see all and may filter on ``active``. ``PUT`` changes only the fields it is
given, so ``{"stock": 5}`` is a whole update. Deleting a product is safe for orders: they keep
their own copy of its name and price.
"""

from flask import g
from flask.views import MethodView
from marshmallow import fields, validate

from shop import db, totals
from shop.api.common import (
    LIKE,
    Blueprint,
    PageQuerySchema,
    Where,
    like_pattern,
    page_schema,
    paginate,
)
from shop.api.schemas import ProductDetailSchema, ProductSchema
from shop.auth.caller import require
from shop.auth.decorators import require_permission, shows_more_with
from shop.errors import abort
from shop.openapi import enum_field, responds
from shop.services import products
from shop.services.catalogue import SELECT, get_product, present
from shop.services.catalogue_input import (
    CategoryId,
    Price,
    ProductCreateSchema,
    ProductUpdateSchema,
)

blp = Blueprint("products", __name__, url_prefix="/products", description="Products.")

# The category :category_id and every category below it.
_IN_CATEGORY_TREE = """p.category_id IN (
    WITH RECURSIVE tree (id) AS (
        SELECT id FROM categories WHERE id = :category_id
        UNION
        SELECT c.id FROM categories c JOIN tree t ON c.parent_id = t.id
    )
    SELECT id FROM tree)"""

_SORTS = {
    "name": "p.name, p.id",
    "-name": "p.name DESC, p.id DESC",
    "price": "p.price_cents, p.id",
    "-price": "p.price_cents DESC, p.id DESC",
    "created_at": "p.created_at, p.id",
    "-created_at": "p.created_at DESC, p.id DESC",
}


class ProductQuerySchema(PageQuerySchema):
    q = fields.String(
        validate=validate.Length(min=1, max=200),
        metadata={"description": "Part of the name, SKU or description, any case."},
    )
    category_id = fields.String(
        validate=CategoryId, metadata={"description": "This category and its sub-categories."}
    )
    collection_id = fields.String(validate=validate.Length(max=64))
    min_price = fields.Integer(validate=Price, metadata={"description": "In minor units."})
    max_price = fields.Integer(validate=Price, metadata={"description": "In minor units."})
    in_stock = fields.Boolean()
    active = fields.Boolean(
        metadata={"description": "Needs `products.read` (or a key with `read:product`)."}
    )
    sort = enum_field(
        "ProductSort",
        list(_SORTS),
        load_default="-created_at",
        metadata={"description": "`name`, `price` or `created_at`; `-` for descending."},
    )


def _sees_inactive() -> bool:
    """Whether the caller may see inactive products."""
    return g.caller is not None and g.caller.can("products.read")


@blp.route("")
class Products(MethodView):
    @blp.doc(operationId="listProducts")
    @shows_more_with("products.read", "inactive products and may filter on `active`")
    @blp.arguments(ProductQuerySchema, location="query")
    @blp.response(200, page_schema(ProductSchema))
    @responds(
        401,
        403,
        e401="`active` given anonymously, or an invalid API key.",
        e403="`active` without `products.read`.",
    )
    def get(self, args):
        """List products, newest first

        The public sees active products only. Filters combine with AND.
        """
        where = Where()
        if "active" in args:
            if g.caller is None:
                abort(401, "active: sign in or send an API key to filter on active.")
            if not _sees_inactive():
                require(g.caller, "products.read", purpose="filter on active")
            where.add("p.active = :active", active=args["active"])
        elif not _sees_inactive():
            where.add("p.active = 1")
        if "q" in args:
            where.add(
                f"(LOWER(p.name) {LIKE} OR LOWER(p.sku) {LIKE} OR LOWER(p.description) {LIKE})",
                q=like_pattern(args["q"]),
            )
        if "category_id" in args:
            where.add(_IN_CATEGORY_TREE, category_id=args["category_id"])
        if "collection_id" in args:
            where.add(
                "EXISTS (SELECT 1 FROM collection_products cp"
                " WHERE cp.collection_id = :collection_id AND cp.product_id = p.id)",
                collection_id=args["collection_id"],
            )
        if "min_price" in args:
            where.add("p.price_cents >= :min_price", min_price=args["min_price"])
        if "max_price" in args:
            where.add("p.price_cents <= :max_price", max_price=args["max_price"])
        if "in_stock" in args:
            where.add("p.stock > 0" if args["in_stock"] else "p.stock = 0")
        clause, only = where.sql(), where.conditions
        count = "SELECT COUNT(*) FROM products p" + clause
        if not only:
            count = totals.SQL[totals.PRODUCTS]
        elif only == ["p.active = 1"] or only == ["p.active = :active"] and args["active"]:
            count = totals.SQL[totals.ACTIVE_PRODUCTS]
        return paginate(
            SELECT + clause + " ORDER BY " + _SORTS[args["sort"]],
            count,
            where.params,
            args,
            convert=present,
        )

    @blp.doc(operationId="createProduct")
    @responds(409, e409="The `sku` or `slug` is taken.")
    @blp.arguments(ProductCreateSchema)
    @blp.response(201, ProductDetailSchema)
    @require_permission("products.create")
    def post(self, data):
        """Create a product

        It starts with one variant: the first value of each option (none without options),
        priced and stocked from `price_cents` and `stock`, with the `sku`.
        """
        with db.transaction():
            product_id = products.create_product(data)
        return get_product(product_id)


@blp.route("/<id:product_id>")
class ProductById(MethodView):
    @blp.doc(operationId="getProduct")
    @shows_more_with("products.read", "inactive products")
    @blp.response(200, ProductDetailSchema)
    def get(self, product_id):
        """One product

        With its `variants`. An inactive product is a 404 unless you hold `products.read`;
        the public sees active variants only.
        """
        return get_product(product_id, visible_only=not _sees_inactive())

    @blp.doc(operationId="updateProduct")
    @responds(409, e409="The `sku` or `slug` is taken, or variants use an option value removed.")
    @blp.arguments(ProductUpdateSchema)
    @blp.response(200, ProductDetailSchema)
    @require_permission("products.update")
    def put(self, data, product_id):
        """Change a product

        Only the fields given change (as Shopify's PUT does): `{"stock": 5}` is a valid update.
        `price_cents`, `stock` and `sku` are its variant's while it has one; with several
        variants they are a 400 naming them. Removing an option value that variants use is
        a 409 naming them.
        """
        with db.transaction():
            products.update_product(product_id, data)
        return get_product(product_id)

    @blp.doc(operationId="deleteProduct")
    @blp.response(204)
    @require_permission("products.delete")
    def delete(self, product_id):
        """Delete a product

        Its variants go with it; it leaves its collections; orders keep their own copy of
        its name, price and options.
        """
        with db.transaction():
            products.delete_product(product_id)
