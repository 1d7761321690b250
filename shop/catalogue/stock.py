"""The order in which writes lock a product's row and its variants' rows (PostgreSQL).

Checkout takes a product's row and then its variants' rows (``checkout/placing.py``): the
trigger ``product_variants_stock`` and its twins (migrations 0020, 0021) update the product
whenever a variant's stock (or price, active flag or SKU) changes, so a decrement holds both.
Every other writer of variants takes the product first too, in product id order, so two
transactions never hold one row each of a pair and wait for the other's: restocks (cancel,
refund), variant edits and deletes, a change of a product's options (which rewrites its
variants' options), an image's removal. A new variant's insert waits for its product's row
anyway (the foreign key's share lock), before its trigger writes the product.
"""

import json

from shop import db


def lock_products(product_ids) -> None:
    """Lock the products' rows, in id order, before any row of their variants is written.

    Checkout locks a product's row and then its variants' (``checkout/placing.py``: the
    trigger ``product_variants_stock`` updates the product when a variant changes), so
    every other writer of variants takes the product first too; otherwise a checkout holding
    the product and a restock holding the variant would wait for each other (PostgreSQL
    breaks that by rolling one back: ``errors.rolled_back_response``). SQLite lets one writer
    in at a time: nothing to do.
    """
    ids = sorted(set(product_ids))
    if not ids or db.get_db().engine != "postgresql":
        return
    marks, params = db.in_list("p", ids)
    db.query(f"SELECT id FROM products WHERE id IN {marks} ORDER BY id FOR UPDATE", params)


def put_back(lines) -> list[str]:
    """Put sold units back on the shelf in the caller's transaction; answer the products
    touched, in id order (for the caller's ``variants.refresh``).

    Each line is ``{"variant_id", "product_id", "quantity"}``; a variant or product deleted
    since matches no row. A line without a variant was sold by a node of the previous
    release during a rolling upgrade: its product's lone variant takes it (one given more
    variants since cannot tell which one sold, and takes none). Products are locked first,
    then variants in variant order, as checkout does.
    """
    lines = sorted(lines, key=lambda line: (line["variant_id"] or "", line["product_id"] or ""))
    products = sorted({line["product_id"] for line in lines if line["product_id"]})
    lock_products(products)
    by_variant = [line for line in lines if line["variant_id"]]
    if by_variant:
        db.execute_many(
            "UPDATE product_variants SET stock = stock + :quantity WHERE id = :variant_id",
            by_variant,
        )
    by_product = [line for line in lines if not line["variant_id"] and line["product_id"]]
    if by_product:
        db.execute_many(
            "UPDATE product_variants SET stock = stock + :quantity"
            " WHERE product_id = :product_id AND (SELECT COUNT(*) FROM product_variants"
            " WHERE product_id = :product_id) = 1",
            by_product,
        )
    return products


def low_variants(limit: int = 10) -> list[dict]:
    """Variants marked low on stock (at or under their product's ``low_stock_threshold``,
    ``variants.mark_low_stock``), the emptiest first: the console's dashboard."""
    rows = db.query(
        "SELECT v.id, v.product_id, v.sku, v.options, v.stock, p.name AS product_name"
        " FROM product_variants v JOIN products p ON p.id = v.product_id"
        " WHERE v.stock_low = 1 ORDER BY v.stock, p.name, v.id LIMIT :limit",
        {"limit": limit},
    )
    return [{**row, "options": json.loads(row["options"] or "{}")} for row in rows]
