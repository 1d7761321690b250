"""The catalogue as more than one caller sees it: a product as the API shows it (products,
collections, the product events of products and checkout) and the category existence check
(products and categories)."""

from shop import db
from shop.errors import abort
from shop.settings import CURRENCY_SQL, currency_of

# One statement whatever the page size: the collections and the currency come as columns.
SELECT = f"""
    SELECT p.id, p.name, p.slug, p.description, p.sku, p.price_cents, p.stock, p.active,
           p.category_id, p.created_at, p.updated_at, p.tax_class,
           (SELECT string_agg(cp.collection_id, ',') FROM collection_products cp
             WHERE cp.product_id = p.id) AS collection_ids,
           {CURRENCY_SQL} AS currency
    FROM products p"""


def present(row: dict) -> dict:
    """A product row (from ``SELECT``) as the API serves it."""
    return {
        **row,
        "active": bool(row["active"]),
        "currency": currency_of(row["currency"]),
        "collection_ids": sorted(row["collection_ids"].split(",")) if row["collection_ids"] else [],
    }


def get_product(product_id: str, *, visible_only: bool = False) -> dict:
    sql = SELECT + " WHERE p.id = :id" + (" AND p.active = 1" if visible_only else "")
    row = db.one(sql, {"id": product_id})
    if row is None:
        abort(404, "Product not found.")
    return present(row)


def load_product(product_id: str) -> dict:
    """One product as a reader holding ``products.read`` sees it (404 when there is none)."""
    return get_product(product_id)


def check_exists(category_id: str | None, field: str = "category_id") -> None:
    """400 naming ``field`` when ``category_id`` is given but names no category."""
    if category_id is not None and not db.value(
        "SELECT 1 FROM categories WHERE id = :id", {"id": category_id}
    ):
        abort(400, f"{field}: no category has the id {category_id!r}.")
