"""Products (spec 4.2): the catalogue's items, priced in the shop currency.

The public sees active products only; callers holding ``products.read`` (or a key with
``read:product``) see all and may filter on ``active``. ``PATCH`` (and ``PUT``, kept, the
same partial update) changes only the fields it is given, so ``{"stock": 5}`` is a whole
update. Deleting a product is safe for orders: they keep
their own copy of its name and price.
"""

from flask import g, request
from flask.views import MethodView
from marshmallow import Schema, fields, validate

from shop import db
from shop.api.catalogue_input import (
    CategoryId,
    Price,
    ProductCreateSchema,
    ProductUpdateSchema,
    Sku,
)
from shop.api.common import Blueprint, PageQuerySchema, page_schema, query_object
from shop.api.schemas import ProductDetailSchema, ProductSchema
from shop.auth.caller import require
from shop.catalogue import prices, products, slugs, variants
from shop.catalogue.facets import facets
from shop.catalogue.present import get_product, variant_summaries
from shop.catalogue.product_query import (
    MAX_OPTION_NAMES,
    MAX_OPTION_TEXT,
    MAX_OPTION_VALUES,
    SORTS,
    ProductQuery,
    list_page,
)
from shop.http.context import current_actor
from shop.http.decorators import require_permission, shows_more_with
from shop.http.errors import abort
from shop.http.openapi import DateOrDateTime, enum_field, responds

blp = Blueprint("products", __name__, url_prefix="/products", description="Products.")

_SORTS = SORTS


def _id_or_slug(meaning: str) -> fields.String:
    """A filter naming a category or collection by id or by slug."""
    return fields.String(
        validate=validate.Length(min=1, max=slugs.MAX_LENGTH),
        metadata={"description": f"{meaning}; an unknown one matches nothing."},
    )


class ProductFilterSchema(Schema):
    """The filters of the product list and its facets (they combine with AND)."""

    q = fields.String(
        validate=validate.Length(min=1, max=200),
        metadata={
            "description": "Full-text search over name, SKUs, option values and description,"
            " stemmed, every word of it also a prefix (`tea` finds Teapot); ranked by"
            " relevance unless `sort` says otherwise. Any text is safe."
        },
    )
    slug = fields.String(
        validate=validate.Length(min=1, max=200),
        metadata={"description": "The product with this slug (exact)."},
    )
    sku = fields.String(validate=Sku, metadata={"description": "The product with this SKU."})
    category = _id_or_slug("The category of this id or slug and its sub-categories")
    category_id = fields.String(
        validate=CategoryId,
        metadata={"description": "`category` by id only (kept for compatibility)."},
    )
    collection = _id_or_slug("Products in the collection of this id or slug")
    collection_id = fields.String(
        validate=validate.Length(max=64),
        metadata={"description": "`collection` by id only (kept for compatibility)."},
    )
    price_min = fields.Integer(
        validate=Price, metadata={"description": "`price_cents` at least this, in minor units."}
    )
    price_max = fields.Integer(
        validate=Price, metadata={"description": "`price_cents` at most this, in minor units."}
    )
    min_price = fields.Integer(
        validate=Price, metadata={"description": "`price_min` (kept for compatibility)."}
    )
    max_price = fields.Integer(
        validate=Price, metadata={"description": "`price_max` (kept for compatibility)."}
    )
    in_stock = fields.Boolean(
        metadata={"description": "`true`: in stock (stock > 0); `false`: out of stock."}
    )
    active = fields.Boolean(
        metadata={"description": "Needs `products.read` (or a key with `read:product`)."}
    )
    updated_after = DateOrDateTime(
        metadata={
            "description": "Changed at or after this ISO 8601 date or date-time (UTC unless"
            " given): with `sort=updated_at`, how an integration fetches what changed."
        }
    )
    created_after = DateOrDateTime(
        metadata={"description": "Created at or after this ISO 8601 date or date-time."}
    )


class ProductQuerySchema(PageQuerySchema, ProductFilterSchema):
    # Scalar fields and no hooks: a load depends on the query string alone (common.Parser).
    LOADS_KEPT = True

    include = enum_field(
        "ProductInclude",
        ["variants"],
        metadata={
            "description": "`variants`: each item also carries `variants`, a compact summary"
            " of its active variants (id, options, price, stock), so a storefront picks one"
            " without a call per product. Off by default."
        },
    )
    sort = enum_field(
        "ProductSort",
        list(_SORTS),
        metadata={
            "description": "`name`, `price`, `created_at` or `updated_at` (with `id` as the"
            " tie-break, so the order is stable); `-` for descending; `relevance` (needs `q`)."
            " Default: `relevance` with `q`, else `-created_at`."
        },
    )


OPTION, KEPT_OPTION = "option", "option."
_OPTION_DOC = (
    "Option values, e.g. `option[Size]=M`: products with an active variant of that value."
    " Repeat a name for any of several values (`option[Size]=M&option[Size]=L`: M or L);"
    " different names must all hold for one and the same variant"
    " (`option[Size]=M&option[Colour]=Red`: a red M). Names and values are exact; a name"
    " that no product has is a 400 naming it."
    f" At most {MAX_OPTION_NAMES} names and {MAX_OPTION_VALUES} values per name."
    " The first spelling, `option.Size=M`, is kept and means the same."
)


def _option_name(key: str) -> str | None:
    """The option name of a query parameter (``option[Size]`` or ``option.Size``), or None
    when it is no option filter; 400 for any other ``option...`` (``option=M``, no bracket).
    """
    if key.startswith(KEPT_OPTION):
        return key.removeprefix(KEPT_OPTION)
    if not key.startswith(OPTION):
        return None
    if not key.startswith(OPTION + "[") or not key.endswith("]"):
        abort(400, f"{key}: write option[<name>]=<value>, e.g. option[Size]=M.")
    return key[len(OPTION) + 1 : -1]


def _options() -> dict[str, list[str]]:
    """The ``option[<name>]=<value>`` (or ``option.<name>=<value>``) parameters: each name
    with its values (400 if bad, or if no product has an option of that name)."""
    found: dict[str, set[str]] = {}
    for key, values in request._get_current_object().args.lists():
        name = _option_name(key)
        if name is None:
            continue
        if not name or len(name) > MAX_OPTION_TEXT:
            abort(400, f"{key}: name an option of at most {MAX_OPTION_TEXT} characters,"
                  " e.g. option[Size]=M.")  # fmt: skip
        if any(not value or len(value) > MAX_OPTION_TEXT for value in values):
            abort(400, f"{key}: each value is 1 to {MAX_OPTION_TEXT} characters.")
        found.setdefault(name, set()).update(values)
        if len(found[name]) > MAX_OPTION_VALUES:
            abort(400, f"{key}: at most {MAX_OPTION_VALUES} values.")
    if len(found) > MAX_OPTION_NAMES:
        abort(400, f"{OPTION}: at most {MAX_OPTION_NAMES} option names.")
    unknown = variants.unknown_option_names(list(found))
    if unknown:
        named = ", ".join(f"option[{name}]" for name in unknown)
        abort(400, f"{named}: no product has an option of this name.")
    return {name: sorted(values) for name, values in found.items()}


# The names of the filters and the names the list had first: both work. One filter
# given by both names with different values is a 400 naming them.
_ALIASES = (
    ("category", "category_id"),
    ("collection", "collection_id"),
    ("price_min", "min_price"),
    ("price_max", "max_price"),
)


def _unaliased(args: dict) -> dict:
    """``args`` with each filter under one name: the prices as ``min_price``/``max_price``,
    ``category``/``collection`` (id or slug) over an equal ``category_id``/``collection_id``."""
    args = dict(args)
    for name, old in _ALIASES:
        if name in args and old in args:
            if args[name] != args[old]:
                abort(400, f"{name}, {old}: the same filter with different values; give one.")
            del args[old]
        if name.startswith("price_") and name in args:
            args[old] = args.pop(name)
    return args


def _query(args: dict) -> ProductQuery:
    """The list's filters, ``option.*`` included; ``active`` only for a caller who may see
    inactive products."""
    args = _unaliased(args)
    if "active" in args:
        if g.caller is None:
            abort(401, "active: sign in or send an API key to filter on active.")
        if not _sees_inactive():
            require(g.caller, "products.read", purpose="filter on active")
    return ProductQuery({**args, "options": _options()}, only_active=not _sees_inactive())


def _priced(page: dict) -> dict:
    """A page of products with their prior prices (``catalogue.prices``), in two statements."""
    prices.with_product_priors(page["items"])
    return page


def _update(product_id: str, data: dict) -> dict:
    """PATCH's and PUT's change: the fields given, then the product as it now reads."""
    with db.transaction():
        products.update_product(product_id, data, current_actor())
    return get_product(product_id)


def _sees_inactive() -> bool:
    """Whether the caller may see inactive products."""
    caller = g._get_current_object().caller  # one proxy lookup
    return caller is not None and caller.can("products.read")


@blp.route("")
class Products(MethodView):
    @blp.doc(operationId="listProducts")
    @shows_more_with("products.read", "inactive products and may filter on `active`")
    @query_object(OPTION, _OPTION_DOC, kept_prefixes=(KEPT_OPTION,))
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

        The public sees active products only. Filters combine with AND. With
        `include=variants` each item carries its active variants, compact.
        """
        page = _priced(list_page(_query(args), args))
        if args.get("include") == "variants":
            summaries = variant_summaries([item["id"] for item in page["items"]])
            page["items"] = [{**item, "variants": summaries[item["id"]]} for item in page["items"]]
        return page

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
            product_id = products.create_product(data, current_actor())
        return get_product(product_id)


class CategoryFacetSchema(Schema):
    id = fields.String(required=True)
    name = fields.String(required=True)
    slug = fields.String(required=True)
    count = fields.Integer(
        required=True, metadata={"description": "Matching products in it or below it."}
    )


class PriceBandSchema(Schema):
    """A band, named as the list's filters are: `?price_min=<price_min>&price_max=<price_max>`
    lists its products."""

    price_min = fields.Integer(
        required=True, metadata={"description": "The list's `price_min`, in minor units."}
    )
    price_max = fields.Integer(
        required=True,
        allow_none=True,
        metadata={
            "description": "The list's `price_max`, in minor units, inclusive; null for the"
            " top band (leave `price_max` out)."
        },
    )
    min_price = fields.Integer(
        required=True,
        metadata={"description": "`price_min` (kept for compatibility).", "deprecated": True},
    )
    max_price = fields.Integer(
        required=True,
        allow_none=True,
        metadata={"description": "`price_max` (kept for compatibility).", "deprecated": True},
    )
    count = fields.Integer(required=True)


class OptionValueFacetSchema(Schema):
    value = fields.String(required=True)
    count = fields.Integer(required=True)


class OptionFacetSchema(Schema):
    name = fields.String(required=True)
    values = fields.List(fields.Nested(OptionValueFacetSchema), required=True)


class ProductFacetsSchema(Schema):
    """Counts per value a storefront's filter sidebar offers. Each group is counted with
    every filter but its own: a count is the `total` the list answers when that value
    replaces the group's filter, the other filters kept; `total` is the list's own."""

    total = fields.Integer(required=True, metadata={"description": "The filtered list's `total`."})
    total_is_exact = fields.Boolean(
        required=True,
        metadata={
            "description": "False when `total` is a lower bound: the matches were counted "
            "up to `SHOP_FACET_COUNT_CAP` (see `counts_are_exact`)."
        },
    )
    categories = fields.List(fields.Nested(CategoryFacetSchema), required=True)
    price_bands = fields.List(fields.Nested(PriceBandSchema), required=True)
    options = fields.List(fields.Nested(OptionFacetSchema), required=True)
    counts_are_exact = fields.Boolean(
        required=True,
        metadata={
            "description": "False when a group was counted over its first "
            "`SHOP_FACET_COUNT_CAP` matching products (100 by default), not all of them: "
            "exact below the cap, as the kept counts of the catalogue and of a category "
            "always are."
        },
    )


@blp.route("/facets")
class ProductFacets(MethodView):
    @blp.doc(operationId="getProductFacets")
    @shows_more_with("products.read", "inactive products and may filter on `active`")
    @query_object(OPTION, _OPTION_DOC, kept_prefixes=(KEPT_OPTION,))
    @blp.arguments(ProductFilterSchema, location="query")
    @blp.response(200, ProductFacetsSchema)
    @responds(
        401,
        403,
        e401="`active` given anonymously, or an invalid API key.",
        e403="`active` without `products.read`.",
    )
    def get(self, args):
        """Facets of the product list

        Takes the list's filters and answers the counts per category (sub-categories
        included), per price band (fixed bands in minor units: 0-999, 1000-2499, 2500-4999,
        5000-9999, 10000-24999, 25000 and up) and per option value, so a storefront draws
        its filter sidebar in one call. Each group is counted with every filter but its own
        (a shopper who chose a band still sees the others' counts). The catalogue's and a
        category's counts are kept exact; a search, a collection or a price range is
        counted over at most `SHOP_FACET_COUNT_CAP` matching products (100 by default):
        `counts_are_exact` says which.
        """
        query = _query(args)  # the same rules for `active` and the options
        found = facets(query.args, only_active=not _sees_inactive(), trees=query.trees)
        found["price_bands"] = [
            {"price_min": band["min_price"], "price_max": band["max_price"], **band}
            for band in found["price_bands"]
        ]
        return found


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
    def patch(self, data, product_id):
        """Change a product

        Only the fields given change: `{"stock": 5}` is a valid update.
        `price_cents`, `stock` and `sku` are its variant's while it has one; with several
        variants they are a 400 naming them. Removing an option value that variants use is
        a 409 naming them.
        """
        return _update(product_id, data)

    @blp.doc(operationId="updateProductByPut")
    @responds(409, e409="The `sku` or `slug` is taken, or variants use an option value removed.")
    @blp.arguments(ProductUpdateSchema)
    @blp.response(200, ProductDetailSchema)
    @require_permission("products.update")
    def put(self, data, product_id):
        """Change a product (as PATCH)

        Kept for clients written before `PATCH`: a partial update too, as Shopify's PUT is
        (only the fields given change), not a replacement. Use `PATCH /products/{id}`.
        """
        return _update(product_id, data)

    @blp.doc(operationId="deleteProduct")
    @blp.response(204)
    @require_permission("products.delete")
    def delete(self, product_id):
        """Delete a product

        Its variants go with it; it leaves its collections; orders keep their own copy of
        its name, price and options.
        """
        with db.transaction():
            products.delete_product(product_id, current_actor())
