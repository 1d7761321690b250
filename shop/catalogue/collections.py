"""Collections: hand-picked, ordered groups of products, apart from the category tree; their
writes for every caller (the API, the console), with their rules and messages once.

Each write takes a plain dict, checked here; ``product_ids`` replaces the whole list.
"""

from shop import audit, db
from shop.actor import Actor
from shop.catalogue import slugs
from shop.checks.fields import Field, Length, check
from shop.clock import now_iso
from shop.errors import Invalid, NotFound

MAX_PRODUCTS = 1000
Title = Length(min=1, max=200)
Description = Length(max=10_000)
ProductId = Length(min=1, max=64)


def _unique(ids: list) -> str | None:
    seen = set()
    for product_id in ids:
        if product_id in seen:
            return f"{product_id!r} appears more than once."
        seen.add(product_id)
    return None


_PRODUCT_IDS = Field(
    "list",
    item=Field("string", checks=(ProductId,)),
    checks=(Length(max=MAX_PRODUCTS), _unique),
)
CREATE = {
    "title": Field("string", required=True, checks=(Title,)),
    "slug": Field("string", checks=slugs.SLUG),
    "description": Field("string", default="", checks=(Description,)),
    "product_ids": _PRODUCT_IDS,
}
UPDATE = {
    "title": Field("string", checks=(Title,)),
    "slug": Field("string", checks=slugs.SLUG),
    "description": Field("string", checks=(Description,)),
    "product_ids": _PRODUCT_IDS,
}

# ``position:product_id`` pairs in one column (string_agg keeps no order on SQLite), and a
# second column that leaves out inactive products for the public.
SELECT = """
    SELECT c.id, c.title, c.slug, c.description, c.created_at, c.updated_at,
           (SELECT string_agg(cp.position || ':' || cp.product_id, ',')
              FROM collection_products cp WHERE cp.collection_id = c.id) AS all_products,
           (SELECT string_agg(cp.position || ':' || cp.product_id, ',')
              FROM collection_products cp JOIN products p ON p.id = cp.product_id
             WHERE cp.collection_id = c.id AND p.active = 1) AS active_products
    FROM collections c"""
ORDER = " ORDER BY c.title, c.id"


def ordered(pairs: str | None) -> list[str]:
    """Product ids from ``position:id`` pairs, by position."""
    if not pairs:
        return []
    split = (pair.split(":", 1) for pair in pairs.split(","))
    return [product_id for _, product_id in sorted((int(p), i) for p, i in split)]


def present(row: dict, sees_all: bool) -> dict:
    """A collection row (from ``SELECT``) as a reader sees it: ``sees_all`` (``products.read``)
    sees the ids of inactive products too."""
    return {
        "id": row["id"],
        "title": row["title"],
        "slug": row["slug"],
        "description": row["description"],
        "product_ids": ordered(row["all_products" if sees_all else "active_products"]),
        "created_at": row["created_at"],
        "updated_at": row["updated_at"],
    }


def get(collection_id: str, sees_all: bool = True) -> dict:
    """One collection (404 when there is none)."""
    row = db.one(SELECT + " WHERE c.id = :id", {"id": collection_id})
    if row is None:
        raise NotFound("Collection not found.")
    return present(row, sees_all)


def every() -> list[dict]:
    """Every collection by title, as a holder of ``products.read`` sees it (the console)."""
    return [present(row, True) for row in db.query(SELECT + ORDER)]


def _set_products(collection_id: str, product_ids: list[str]) -> None:
    """Replace the collection's products (400 naming unknown ids, nothing written)."""
    if product_ids:
        db.lock("products")  # so none of them is deleted before the insert
        marks, params = db.in_list("id", product_ids)
        known = db.query(f"SELECT id FROM products WHERE id IN {marks}", params)
        known_ids = {row["id"] for row in known}
        unknown = [i for i in product_ids if i not in known_ids]
        if unknown:
            raise Invalid("product_ids: unknown product ids " + ", ".join(map(repr, unknown)) + ".")
    db.execute("DELETE FROM collection_products WHERE collection_id = :id", {"id": collection_id})
    db.execute_many(
        "INSERT INTO collection_products (collection_id, product_id, position)"
        " VALUES (:collection_id, :product_id, :position)",
        [
            {"collection_id": collection_id, "product_id": product_id, "position": position}
            for position, product_id in enumerate(product_ids)
        ],
    )


def create(data: dict, actor: Actor) -> str:
    """Create a collection, audited as ``actor``'s; answer its id. Its own transaction."""
    data = check(CREATE, data)
    collection_id, moment = db.new_id(), now_iso()
    with db.transaction():
        db.lock("collections")
        slug = slugs.claim("collections", data.get("slug"), data["title"], "collection")
        db.execute(
            "INSERT INTO collections (id, title, slug, description, created_at, updated_at)"
            " VALUES (:id, :title, :slug, :description, :now, :now)",
            {
                "id": collection_id,
                "title": data["title"],
                "slug": slug,
                "description": data["description"],
                "now": moment,
            },
        )
        _set_products(collection_id, data.get("product_ids", []))
        audit.record(
            "collection.created", {"collection_id": collection_id, "slug": slug}, actor=actor
        )
    return collection_id


def update(collection_id: str, data: dict, actor: Actor) -> None:
    """Change the fields given; ``product_ids`` replaces the list. Its own transaction."""
    data = check(UPDATE, data)
    with db.transaction():
        db.lock("collections")
        row = db.one(
            "SELECT title, slug, description FROM collections WHERE id = :id",
            {"id": collection_id},
        )
        if row is None:
            raise NotFound("Collection not found.")
        if "slug" in data:
            slugs.claim("collections", data["slug"], "", "collection", collection_id)
        merged = {**row, **data}
        db.execute(
            "UPDATE collections SET title = :title, slug = :slug, description = :description,"
            " updated_at = :now WHERE id = :id",
            {
                "title": merged["title"],
                "slug": merged["slug"],
                "description": merged["description"],
                "now": now_iso(),
                "id": collection_id,
            },
        )
        if "product_ids" in data:
            _set_products(collection_id, data["product_ids"])
        audit.record(
            "collection.updated",
            {
                "collection_id": collection_id,
                **{k: v for k, v in data.items() if k != "description"},
            },
            actor=actor,
        )


def delete(collection_id: str, actor: Actor) -> None:
    """Delete a collection (its products stay). Its own transaction."""
    with db.transaction():
        slug = db.value("SELECT slug FROM collections WHERE id = :id", {"id": collection_id})
        if slug is None:
            raise NotFound("Collection not found.")
        db.execute("DELETE FROM collections WHERE id = :id", {"id": collection_id})
        audit.record(
            "collection.deleted", {"collection_id": collection_id, "slug": slug}, actor=actor
        )
