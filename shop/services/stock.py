"""The order in which writes lock a product's row and its variants' rows (PostgreSQL).

Checkout takes a product's row and then its variants' rows (``services/checkout.py``): the
trigger ``product_variants_stock`` and its twins (migrations 0020, 0021) update the product
whenever a variant's stock (or price, active flag or SKU) changes, so a decrement holds both.
Every other writer of variants takes the product first too, in product id order, so two
transactions never hold one row each of a pair and wait for the other's: restocks (cancel,
refund), variant edits and deletes, a change of a product's options (which rewrites its
variants' options), an image's removal. A new variant's insert waits for its product's row
anyway (the foreign key's share lock), before its trigger writes the product.
"""

from shop import db


def lock_products(product_ids) -> None:
    """Lock the products' rows, in id order, before any row of their variants is written.

    Checkout locks a product's row and then its variants' (``services/checkout.py``: the
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
