"""Products (spec 4.2): the catalogue's items, priced in the shop currency.

The public sees active products only; callers holding ``products.read`` (or a key with
``read:product``) see all and may filter on ``active``. ``PUT`` changes only the fields it is
given, so ``{"stock": 5}`` is a whole update. Deleting a product is safe for orders: they keep
their own copy of its name and price.
"""

from flask import g
from flask.views import MethodView
from marshmallow import Schema, fields, validate

from shop import audit, db, slugs, totals, webhooks
from shop.api.common import (
    LIKE,
    Blueprint,
    PageQuerySchema,
    StrictBoolean,
    Where,
    like_pattern,
    page_schema,
    paginate,
)
from shop.api.schemas import ProductSchema
from shop.api.schemas import tax_class as tax_class_field
from shop.auth.caller import require
from shop.auth.decorators import require_permission, shows_more_with
from shop.clock import now_iso
from shop.errors import abort
from shop.openapi import enum_field, responds
from shop.services.catalogue import SELECT, check_exists, get_product, load_product, present

blp = Blueprint("products", __name__, url_prefix="/products", description="Products.")

MAX_PRICE = 10**12  # minor units; far beyond any shop, well inside JSON's safe integers
MAX_STOCK = 10**9

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

Name = validate.Length(min=1, max=200)
Description = validate.Length(max=50_000)
Sku = validate.Length(min=1, max=64)
Price = validate.Range(min=0, max=MAX_PRICE)
Stock = validate.Range(min=0, max=MAX_STOCK)
CategoryId = validate.Length(max=64)


class ProductCreateSchema(Schema):
    name = fields.String(required=True, validate=Name)
    slug = fields.String(
        validate=slugs.Slug, metadata={"description": "Derived from the name when left out."}
    )
    description = fields.String(load_default="", validate=Description)
    sku = fields.String(load_default=None, allow_none=True, validate=Sku)
    price_cents = fields.Integer(required=True, strict=True, validate=Price)
    stock = fields.Integer(load_default=0, strict=True, validate=Stock)
    active = StrictBoolean(load_default=True)
    category_id = fields.String(load_default=None, allow_none=True, validate=CategoryId)
    tax_class = tax_class_field(load_default="standard")


class ProductUpdateSchema(Schema):
    name = fields.String(validate=Name)
    slug = fields.String(validate=slugs.Slug)
    description = fields.String(validate=Description)
    sku = fields.String(allow_none=True, validate=Sku)
    price_cents = fields.Integer(strict=True, validate=Price)
    stock = fields.Integer(strict=True, validate=Stock)
    active = StrictBoolean()
    category_id = fields.String(allow_none=True, validate=CategoryId)
    tax_class = tax_class_field()


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


def _check_sku(sku: str | None, own_id: str = "") -> None:
    if sku is not None and db.value(
        "SELECT 1 FROM products WHERE sku = :sku AND id <> :id", {"sku": sku, "id": own_id}
    ):
        abort(409, f"sku: {sku!r} is already used by another product.")


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
    @blp.response(201, ProductSchema)
    @require_permission("products.create")
    def post(self, data):
        """Create a product"""
        product_id, moment = db.new_id(), now_iso()
        with db.transaction():
            db.lock("products")
            if data["category_id"] is not None:
                db.lock("categories")  # so the category cannot be deleted meanwhile
                check_exists(data["category_id"])
            _check_sku(data["sku"])
            slug = slugs.claim("products", data.get("slug"), data["name"], "product")
            db.execute(
                "INSERT INTO products (id, name, slug, description, sku, price_cents, stock,"
                " active, category_id, created_at, updated_at, tax_class) VALUES (:id, :name,"
                " :slug, :description, :sku, :price_cents, :stock, :active, :category_id, :now,"
                " :now, :tax_class)",
                {**data, "id": product_id, "slug": slug, "now": moment},
            )
            totals.bump(totals.PRODUCTS)
            totals.bump(totals.ACTIVE_PRODUCTS, int(data["active"]))
            audit.record(
                "product.created",
                {"product_id": product_id, "slug": slug, "price_cents": data["price_cents"]},
            )
            webhooks.emit("product.created", product_id, load_product)
        return get_product(product_id)


# SET fragments for PUT: only the fields given are written, so a concurrent stock change by
# an order is not overwritten by an edit of the name.
_SETS = {
    field: f"{field} = :{field}"
    for field in (
        "name",
        "slug",
        "description",
        "sku",
        "price_cents",
        "stock",
        "active",
        "category_id",
        "tax_class",
    )
}


@blp.route("/<id:product_id>")
class ProductById(MethodView):
    @blp.doc(operationId="getProduct")
    @shows_more_with("products.read", "inactive products")
    @blp.response(200, ProductSchema)
    def get(self, product_id):
        """One product

        An inactive product is a 404 unless you hold `products.read`.
        """
        return get_product(product_id, visible_only=not _sees_inactive())

    @blp.doc(operationId="updateProduct")
    @responds(409, e409="The `sku` or `slug` is taken.")
    @blp.arguments(ProductUpdateSchema)
    @blp.response(200, ProductSchema)
    @require_permission("products.update")
    def put(self, data, product_id):
        """Change a product

        Only the fields given change (as Shopify's PUT does): `{"stock": 5}` is a valid update.
        """
        with db.transaction():
            db.lock("products")
            was_active = db.value("SELECT active FROM products WHERE id = :id", {"id": product_id})
            if was_active is None:
                abort(404, "Product not found.")
            if data.get("category_id") is not None:
                db.lock("categories")
                check_exists(data["category_id"])
            if "sku" in data:
                _check_sku(data["sku"], product_id)
            if "slug" in data:
                slugs.claim("products", data["slug"], "", "product", product_id)
            sold_out = data.get("stock") == 0 and _stock_of(product_id) > 0
            sets = [_SETS[field] for field in _SETS if field in data]
            db.execute(
                "UPDATE products SET "
                + ", ".join([*sets, "updated_at = :now"])
                + " WHERE id = :id",
                {**data, "now": now_iso(), "id": product_id},
            )
            if "active" in data:
                totals.bump(totals.ACTIVE_PRODUCTS, int(data["active"]) - was_active)
            audit.record("product.updated", {"product_id": product_id, **_audited(data)})
            webhooks.emit("product.updated", product_id, load_product)
            if sold_out:
                webhooks.emit("product.out_of_stock", product_id, load_product)
        return get_product(product_id)

    @blp.doc(operationId="deleteProduct")
    @blp.response(204)
    @require_permission("products.delete")
    def delete(self, product_id):
        """Delete a product

        It leaves its collections; orders keep their own copy of its name and price.
        """
        with db.transaction():
            db.lock("products")
            row = db.one(
                "SELECT slug, sku, active FROM products WHERE id = :id", {"id": product_id}
            )
            if row is None:
                abort(404, "Product not found.")
            webhooks.emit("product.deleted", product_id, load_product)  # rendered before it goes
            db.execute("DELETE FROM products WHERE id = :id", {"id": product_id})
            totals.bump(totals.PRODUCTS, -1)
            totals.bump(totals.ACTIVE_PRODUCTS, -row.pop("active"))
            audit.record("product.deleted", {"product_id": product_id, **row})


def _stock_of(product_id: str) -> int:
    return db.value("SELECT stock FROM products WHERE id = :id", {"id": product_id}) or 0


def _audited(data: dict) -> dict:
    """What an update's audit entry keeps: every field but the long description."""
    return {k: v for k, v in data.items() if k != "description"}
