"""The catalogue as more than one caller sees it: a product and its variants as the API shows
them (products, collections, the product events of products and checkout), the category
existence check (products and categories) and the variant image check."""

import json

from shop import db
from shop.errors import abort
from shop.services import images
from shop.settings import CURRENCY_SQL, currency_of

# One statement whatever the page size: the collections and the currency come as columns.
SELECT = f"""
    SELECT p.id, p.name, p.slug, p.description, p.sku, p.price_cents, p.stock, p.active,
           p.category_id, p.created_at, p.updated_at, p.options, p.low_stock_threshold,
           p.tax_class,
           (SELECT string_agg(cp.collection_id, ',') FROM collection_products cp
             WHERE cp.product_id = p.id) AS collection_ids,
           {CURRENCY_SQL} AS currency
    FROM products p"""

VARIANTS = (
    "SELECT id, product_id, sku, options, price_cents, compare_at_price_cents, stock,"
    " weight_grams, image_id, active, position, created_at, updated_at FROM product_variants"
)


def present(row: dict) -> dict:
    """A product row (from ``SELECT``) as the API serves it."""
    return {
        **row,
        "active": bool(row["active"]),
        "options": json.loads(row["options"]),
        "in_stock": row["stock"] > 0,
        "currency": currency_of(row["currency"]),
        "collection_ids": sorted(row["collection_ids"].split(",")) if row["collection_ids"] else [],
    }


def present_variant(row: dict) -> dict:
    """A variant row (from ``VARIANTS``) as the API serves it."""
    return {**row, "options": json.loads(row["options"]), "active": bool(row["active"])}


def variants_of(product_id: str, *, active_only: bool = False) -> list[dict]:
    """A product's variants in their order (``position``)."""
    where = " WHERE product_id = :id" + (" AND active = 1" if active_only else "")
    rows = db.query(VARIANTS + where + " ORDER BY position, id", {"id": product_id})
    return [present_variant(row) for row in rows]


def get_product(product_id: str, *, visible_only: bool = False) -> dict:
    """One product with its ``variants`` (the public sees active ones of active products)
    and its ``images`` in order."""
    sql = SELECT + " WHERE p.id = :id" + (" AND p.active = 1" if visible_only else "")
    row = db.one(sql, {"id": product_id})
    if row is None:
        abort(404, "Product not found.")
    return {
        **present(row),
        "variants": variants_of(product_id, active_only=visible_only),
        "images": images.list_for(product_id),
    }


def load_product(product_id: str) -> dict:
    """One product as a reader holding ``products.read`` sees it (404 when there is none)."""
    return get_product(product_id)


def check_exists(category_id: str | None, field: str = "category_id") -> None:
    """400 naming ``field`` when ``category_id`` is given but names no category."""
    if category_id is not None and not db.value(
        "SELECT 1 FROM categories WHERE id = :id", {"id": category_id}
    ):
        abort(400, f"{field}: no category has the id {category_id!r}.")


def check_image(product_id: str, image_id: str | None) -> None:
    """400 unless ``image_id`` is None or one of the product's images."""
    images.check_image(product_id, image_id)
