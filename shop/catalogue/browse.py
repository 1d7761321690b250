"""What a visitor browses: categories, collections and products found by their slugs, and
every public address of the catalogue (for a sitemap). Only active products are public."""

from shop import db
from shop.catalogue import images
from shop.catalogue.present import get_product
from shop.catalogue.product_query import CATEGORY_TREE
from shop.errors import NotFound

_KEYS = ("id", "name", "slug", "description", "parent_id")  # a category, as pages show it
_CATEGORY = f"SELECT {', '.join(_KEYS)} FROM categories"
# A category page's category by its slug, with its ancestors (``above`` = 1: its trail) and
# the ids of it and every category below it (``above`` = 0: ``CATEGORY_TREE``'s answer).
# UNION stops both walks on a cycle already stored.
_CATEGORY_PAGE = """
    WITH RECURSIVE up (id, name, slug, description, parent_id) AS (
        SELECT id, name, slug, description, parent_id FROM categories WHERE slug = :slug
        UNION
        SELECT c.id, c.name, c.slug, c.description, c.parent_id
        FROM categories c JOIN up ON c.id = up.parent_id
    ),
    down (id) AS (
        SELECT id FROM categories WHERE slug = :slug
        UNION
        SELECT c.id FROM categories c JOIN down ON c.parent_id = down.id
    )
    SELECT 1 AS above, id, name, slug, description, parent_id FROM up
    UNION ALL
    SELECT 0 AS above, id, NULL, NULL, NULL, NULL FROM down"""
_COLLECTION = "SELECT id, title, slug, description FROM collections"


def product_by_slug(slug: str) -> dict:
    """The active product at ``slug`` with its active variants and images (NotFound else)."""
    product_id = db.value(
        "SELECT id FROM products WHERE slug = :slug AND active = 1", {"slug": slug}
    )
    if product_id is None:
        raise NotFound("Product not found.")
    return get_product(product_id, visible_only=True)


def category_page(slug: str) -> tuple[dict, list[dict], dict]:
    """The category at ``slug`` (NotFound else), its ``trail`` and the ``trees`` of a
    ``ProductQuery`` of its products (its tree's ids, as ``tree_ids`` keeps them), in one
    statement: three to five on a category page before (docs/performance.md, "The category
    page's statements")."""
    rows = db.query(_CATEGORY_PAGE, {"slug": slug})
    above = {row["id"]: {key: row[key] for key in _KEYS} for row in rows if row["above"]}
    found = next((row for row in above.values() if row["slug"] == slug), None)
    if found is None:
        raise NotFound("Category not found.")
    tree = sorted(row["id"] for row in rows if not row["above"])  # as CATEGORY_TREE orders it
    trail = _trail(found, lambda step: above.get(step["parent_id"]))
    return found, trail, {(CATEGORY_TREE, "category_id", found["id"]): tree}


def category_by_id(category_id: str | None) -> dict | None:
    """The category ``category_id``, or None."""
    if category_id is None:
        return None
    return db.one(_CATEGORY + " WHERE id = :id", {"id": category_id})


def collection_by_slug(slug: str) -> dict:
    """The collection at ``slug`` (NotFound else)."""
    row = db.one(_COLLECTION + " WHERE slug = :slug", {"slug": slug})
    if row is None:
        raise NotFound("Collection not found.")
    return row


def top_categories() -> list[dict]:
    """The categories at the top of the tree (no parent) in the shop's order (``position``,
    then name): a home page's, without reading every category."""
    return db.query(_CATEGORY + " WHERE parent_id IS NULL ORDER BY position, name, id")


def collections() -> list[dict]:
    """Every collection by title."""
    return db.query(_COLLECTION + " ORDER BY title, id")


def trail(category: dict | None) -> list[dict]:
    """``category`` and its parents, the top one first (a breadcrumb); a cycle ends it."""
    return _trail(category, lambda step: category_by_id(step["parent_id"]))


def _trail(category: dict | None, parent) -> list[dict]:
    """``category`` and its parents (``parent(step)``: None above the top), the top one
    first; a cycle ends it."""
    found, seen = [], set()
    while category is not None and category["id"] not in seen:
        seen.add(category["id"])
        found.append(category)
        category = parent(category)
    return found[::-1]


def public_addresses(limit: int) -> dict[str, list[dict]]:
    """The slugs and last changes of what a sitemap lists: active products (newest change
    first, at most ``limit``), categories and collections."""
    return {
        "products": db.query(
            "SELECT slug, updated_at FROM products WHERE active = 1"
            " ORDER BY updated_at DESC, id LIMIT :limit",
            {"limit": limit},
        ),
        "categories": db.query("SELECT slug, updated_at FROM categories ORDER BY position, id"),
        "collections": db.query("SELECT slug, updated_at FROM collections ORDER BY title, id"),
    }


def first_images(product_ids: list[str]) -> dict[str, dict]:
    """Each product's first image (``id``, ``url``, ``width``, ``height``, ``alt``), by
    product id, for a page of cards: one statement for the page."""
    if not product_ids:
        return {}
    marks, params = db.in_list("pid", product_ids)
    rows = db.query(
        "SELECT i.product_id, i.id, i.width, i.height, i.alt FROM product_images i"
        f" WHERE i.product_id IN {marks} AND i.position ="
        " (SELECT MIN(j.position) FROM product_images j WHERE j.product_id = i.product_id)",
        params,
    )
    return {row["product_id"]: {**row, "url": images.url_of(row["id"])} for row in rows}
