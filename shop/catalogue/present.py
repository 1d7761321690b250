"""The catalogue as more than one caller sees it: a product and its variants as the API shows
them (products, collections, the product events of products and checkout), the category
existence check (products and categories) and the variant image check."""

import json

from shop import db
from shop.catalogue import images, prices
from shop.errors import Invalid, NotFound
from shop.site.settings import CURRENCY_SQL, currency_of

# One statement whatever the page size: the collections and the currency come as columns.
SELECT = f"""
    SELECT p.id, p.name, p.slug, p.description, p.sku, p.price_cents, p.stock, p.active,
           p.category_id, p.created_at, p.updated_at, p.options, p.low_stock_threshold,
           p.tax_class,
           (SELECT string_agg(cp.collection_id, ',') FROM collection_products cp
             WHERE cp.product_id = p.id) AS collection_ids,
           {CURRENCY_SQL} AS currency
    FROM products p"""

_VARIANT_COLUMNS = (
    "id",
    "product_id",
    "sku",
    "options",
    "price_cents",
    "compare_at_price_cents",
    "stock",
    "weight_grams",
    "image_id",
    "active",
    "position",
    "created_at",
    "updated_at",
)
VARIANTS = f"SELECT {', '.join(_VARIANT_COLUMNS)} FROM product_variants"

# A product, its variants and its images in one statement: each list as one JSON array
# column built by the database in C (json_group_array on SQLite, json_agg on PostgreSQL) and
# parsed by one json.loads: no row, dict or options parse per variant in Python.
_FIELDS = {
    "sqlite": {"options": "json(options)", "active": "json(CASE WHEN active = 1"
               " THEN 'true' ELSE 'false' END)"},
    "postgresql": {"options": "options::json", "active": "active = 1"},
}  # fmt: skip


def _json_array(engine: str, table: str, columns, where: str, order: str) -> str:
    """A subquery answering ``table``'s rows for the product ``p`` as a JSON array text."""
    pairs = ", ".join(f"'{c}', {_FIELDS[engine].get(c, c)}" for c in columns)
    rows = f"FROM {table} WHERE product_id = p.id{where}"
    if engine == "sqlite":  # the aggregate follows the ordered subquery's rows
        aggregate = f"json_group_array(json_object({pairs}))"
        return f"(SELECT {aggregate} FROM (SELECT * {rows} ORDER BY {order}))"
    aggregate = f"COALESCE(json_agg(json_build_object({pairs}) ORDER BY {order}), '[]')::text"
    return f"(SELECT {aggregate} {rows})"


def _detail(engine: str, visible: bool) -> str:
    variants = _json_array(
        engine,
        "product_variants",
        _VARIANT_COLUMNS,
        " AND active = 1" if visible else "",
        "position, id",
    )
    pictures = _json_array(engine, "product_images", images.COLUMNS, "", "position, id")
    return (
        SELECT.replace(
            "    FROM products p",
            f"         , {variants} AS variants, {pictures} AS images\n    FROM products p",
        )
        + " WHERE p.id = :id"
        + (" AND p.active = 1" if visible else "")
    )


DETAIL = {(engine, visible): _detail(engine, visible) for engine in _FIELDS for visible in (0, 1)}


def present(row: dict) -> dict:
    """A product row (from ``SELECT``) as the API serves it."""
    options, collections = row["options"], row["collection_ids"]
    return {
        **row,
        "active": bool(row["active"]),
        "options": json.loads(options) if options != "[]" else [],
        "in_stock": row["stock"] > 0,
        "currency": currency_of(row["currency"]),
        "collection_ids": sorted(collections.split(",")) if collections else [],
    }


def present_variant(row: dict) -> dict:
    """A variant row (from ``VARIANTS``) as the API serves it."""
    return {**row, "options": json.loads(row["options"]), "active": bool(row["active"])}


def variants_of(product_id: str, *, active_only: bool = False) -> list[dict]:
    """A product's variants in their order (``position``)."""
    where = " WHERE product_id = :id" + (" AND active = 1" if active_only else "")
    rows = db.query(VARIANTS + where + " ORDER BY position, id", {"id": product_id})
    return prices.with_variant_priors([present_variant(row) for row in rows])


def get_product(product_id: str, *, visible_only: bool = False) -> dict:
    """One product with its ``variants`` (the public sees active ones of active products)
    and its ``images`` in order, in one statement."""
    row = db.one(DETAIL[db.get_db().engine, int(visible_only)], {"id": product_id})
    if row is None:
        raise NotFound("Product not found.")
    variants = prices.with_variant_priors(json.loads(row["variants"]))
    product = present(row)
    return {
        **product,
        "prior_price_cents": prices.product_prior(product["price_cents"], variants),
        "variants": variants,
        "images": [images.present(image) for image in json.loads(row["images"])],
    }


def load_product(product_id: str) -> dict:
    """One product as a reader holding ``products.read`` sees it (404 when there is none)."""
    return get_product(product_id)


def check_exists(category_id: str | None, field: str = "category_id") -> None:
    """400 naming ``field`` when ``category_id`` is given but names no category."""
    if category_id is not None and not db.value(
        "SELECT 1 FROM categories WHERE id = :id", {"id": category_id}
    ):
        raise Invalid(f"{field}: no category has the id {category_id!r}.")


def check_image(product_id: str, image_id: str | None) -> None:
    """400 unless ``image_id`` is None or one of the product's images."""
    images.check_image(product_id, image_id)


# A list item's compact variants (``GET /products?include=variants``): what a storefront
# needs to pick one, for the whole page in one statement.
_SUMMARIES = (
    "SELECT id, product_id, options, price_cents, compare_at_price_cents, stock"
    " FROM product_variants WHERE product_id IN {marks} AND active = 1"
    " ORDER BY product_id, position, id"
)


def variant_summaries(product_ids: list[str]) -> dict[str, list[dict]]:
    """Each product's active variants, compact (id, options, price, availability), in their
    order; one statement for all of ``product_ids``."""
    found: dict[str, list[dict]] = {product_id: [] for product_id in product_ids}
    if not product_ids:
        return found
    marks, params = db.in_list("p", sorted(set(product_ids)))
    for row in db.query(_SUMMARIES.format(marks=marks), params):
        found[row["product_id"]].append(
            {
                "id": row["id"],
                "options": json.loads(row["options"]),
                "price_cents": row["price_cents"],
                "compare_at_price_cents": row["compare_at_price_cents"],
                "stock": row["stock"],
                "in_stock": row["stock"] > 0,
            }
        )
    return found
