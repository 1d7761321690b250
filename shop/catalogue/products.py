"""Product writes for every caller (the API, the importer, the console): create, update and
delete, with their audit entries, list totals and events, each ending in
``variants.product_changed``.

A product's ``price_cents``, ``stock`` and ``sku`` are its default variant's for the clients
that know no variants: on create they make its first variant; on update they change its
variant while it has only one; with several variants they are a 400 naming them (change the
variants instead). Each function takes a plain dict, checked by ``shop.catalogue.input``.
"""

from shop import audit, db, webhooks
from shop.actor import Actor
from shop.catalogue import search, slugs, variants
from shop.catalogue.input import PRODUCT_CREATE, PRODUCT_UPDATE, check
from shop.catalogue.present import check_exists, load_product
from shop.clock import now_iso
from shop.db import totals
from shop.errors import Invalid, NotFound

# The fields of the default variant, as the product showed them before variants.
VARIANT_FIELDS = ("price_cents", "stock", "sku")

# SET fragments for an update: only the fields given are written, so a concurrent stock
# change by an order is not overwritten by an edit of the name.
_SETS = {
    field: f"{field} = :{field}"
    for field in (
        "name",
        "slug",
        "description",
        "active",
        "category_id",
        "low_stock_threshold",
        "tax_class",
    )
}


def create_product(data: dict, actor: Actor) -> str:
    """Create a product and its first variant (audited as ``actor``'s); answer its id. Call
    inside a transaction."""
    data = check(PRODUCT_CREATE, data)
    product_id, moment = db.new_id(), now_iso()
    db.lock("products")
    if data["category_id"] is not None:
        db.lock("categories")  # so the category cannot be deleted meanwhile
        check_exists(data["category_id"])
    variants.check_sku(data["sku"])
    slug = slugs.claim("products", data.get("slug"), data["name"], "product")
    db.execute(
        "INSERT INTO products (id, name, slug, description, sku, price_cents, stock, active,"
        " category_id, low_stock_threshold, created_at, updated_at, tax_class) VALUES (:id,"
        " :name, :slug, :description, :sku, :price_cents, :stock, :active, :category_id,"
        " :threshold, :now, :now, :tax_class)",
        {
            **data,
            "id": product_id,
            "slug": slug,
            "threshold": data.get("low_stock_threshold"),
            "now": moment,
        },
    )
    # The default variant has the product's id (the database's trigger may have made it).
    db.execute(
        "INSERT INTO product_variants (id, product_id, sku, price_cents, stock, created_at,"
        " updated_at) VALUES (:id, :id, :sku, :price_cents, :stock, :now, :now)"
        " ON CONFLICT (id) DO NOTHING",
        {**data, "id": product_id, "now": moment},
    )
    if data.get("options"):
        variants.set_options(product_id, data["options"])
    totals.bump(totals.PRODUCTS)
    totals.bump(totals.ACTIVE_PRODUCTS, int(data["active"]))
    audit.record(
        "product.created",
        {"product_id": product_id, "slug": slug, "price_cents": data["price_cents"]},
        actor=actor,
    )
    variants.product_changed(product_id, "product.created")
    return product_id


def update_product(product_id: str, data: dict, actor: Actor) -> None:
    """Change the fields given of a product, audited as ``actor``'s. In a transaction."""
    data = check(PRODUCT_UPDATE, data)
    db.lock("products")
    row = db.one("SELECT active, stock FROM products WHERE id = :id", {"id": product_id})
    if row is None:
        raise NotFound("Product not found.")
    if data.get("category_id") is not None:
        db.lock("categories")
        check_exists(data["category_id"])
    if "slug" in data:
        slugs.claim("products", data["slug"], "", "product", product_id)
    if "options" in data:
        variants.set_options(product_id, data["options"])
    given = {field: data[field] for field in VARIANT_FIELDS if field in data}
    if given:
        _update_default_variant(product_id, given)
    sets = [_SETS[field] for field in _SETS if field in data]
    db.execute(
        "UPDATE products SET " + ", ".join([*sets, "updated_at = :now"]) + " WHERE id = :id",
        {**data, "now": now_iso(), "id": product_id},
    )
    if "active" in data:
        totals.bump(totals.ACTIVE_PRODUCTS, int(data["active"]) - row["active"])
    audit.record(
        "product.updated",
        {"product_id": product_id, **{k: v for k, v in data.items() if k != "description"}},
        actor=actor,
    )
    if variants.product_changed(product_id) == 0 and row["stock"] > 0:
        webhooks.emit("product.out_of_stock", product_id, load_product)


def _update_default_variant(product_id: str, given: dict) -> None:
    """``price_cents``/``stock``/``sku`` of a product: its variant's while it has one."""
    ids = [
        row["id"]
        for row in db.query(
            "SELECT id FROM product_variants WHERE product_id = :id ORDER BY position, id",
            {"id": product_id},
        )
    ]
    if len(ids) > 1:
        field = next(iter(given))
        raise Invalid(
            f"{field}: this product has {len(ids)} variants ({', '.join(ids)}); change"
            f" {', '.join(given)} on each with PATCH /products/{{id}}/variants/{{variant_id}}.",
        )
    variants.update_variant(product_id, ids[0], given, announce=False)


def delete_product(product_id: str, actor: Actor) -> None:
    """Delete a product and its variants (audited as ``actor``'s); orders keep their own
    copy. In a transaction."""
    db.lock("products")
    row = db.one("SELECT slug, sku, active FROM products WHERE id = :id", {"id": product_id})
    if row is None:
        raise NotFound("Product not found.")
    webhooks.emit("product.deleted", product_id, load_product)  # rendered before it goes
    db.execute("DELETE FROM products WHERE id = :id", {"id": product_id})
    search.refresh(product_id)  # its index row is gone with it: a new catalogue version
    totals.bump(totals.PRODUCTS, -1)
    totals.bump(totals.ACTIVE_PRODUCTS, -row.pop("active"))
    audit.record("product.deleted", {"product_id": product_id, **row}, actor=actor)


def image_changed(product_id: str, event: str, details: dict, actor: Actor) -> None:
    """The end of a write of a product's images (``product.image_added``, ``_updated``,
    ``_deleted``): its audit entry and ``product.updated``, in the write's transaction."""
    audit.record(event, {"product_id": product_id, **details}, actor=actor)
    webhooks.emit("product.updated", product_id, load_product)
