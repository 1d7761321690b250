"""Categories (spec 4.3): a tree through ``parent_id``, listed flat by ``position``; their
writes for every caller (the API, the console), with their rules and messages once.

A category cannot become its own ancestor (400), and cannot be deleted while products or
sub-categories use it (409, naming them). Each write takes a plain dict, checked here.
"""

from shop import audit, db
from shop.actor import Actor
from shop.catalogue import slugs
from shop.catalogue.present import check_exists
from shop.checks.fields import Field, Length, Range, check
from shop.clock import now_iso
from shop.errors import Conflict, Invalid, NotFound

COLUMNS = "id, name, slug, description, parent_id, position, created_at, updated_at"
ORDER = " ORDER BY position, name, id"

Name = Length(min=1, max=200)
Description = Length(max=10_000)
ParentId = Length(max=64)
Position = Range(min=-1_000_000, max=1_000_000)

CREATE = {
    "name": Field("string", required=True, checks=(Name,)),
    "slug": Field("string", checks=slugs.SLUG),
    "description": Field("string", default="", checks=(Description,)),
    "parent_id": Field("string", default=None, allow_none=True, checks=(ParentId,)),
    "position": Field("integer", default=0, checks=(Position,)),
}
UPDATE = {
    "name": Field("string", checks=(Name,)),
    "slug": Field("string", checks=slugs.SLUG),
    "description": Field("string", checks=(Description,)),
    "parent_id": Field("string", allow_none=True, checks=(ParentId,)),
    "position": Field("integer", checks=(Position,)),
}

# The ancestors of :parent_id, itself included (UNION stops on a cycle already stored).
_IS_ANCESTOR_OR_SELF = """
    WITH RECURSIVE up (id, parent_id) AS (
        SELECT id, parent_id FROM categories WHERE id = :parent_id
        UNION
        SELECT c.id, c.parent_id FROM categories c JOIN up ON c.id = up.parent_id
    )
    SELECT 1 FROM up WHERE id = :id"""


def get(category_id: str) -> dict:
    """One category (404 when there is none)."""
    row = db.one(f"SELECT {COLUMNS} FROM categories WHERE id = :id", {"id": category_id})
    if row is None:
        raise NotFound("Category not found.")
    return row


def every() -> list[dict]:
    """Every category, by position (a shop has tens, not thousands: the console's pickers)."""
    return db.query(f"SELECT {COLUMNS} FROM categories" + ORDER)


def _check_parent(category_id: str, parent_id: str | None) -> None:
    """400 when ``parent_id`` is unknown, or is the category itself or one of its descendants."""
    check_exists(parent_id, "parent_id")
    if parent_id is not None and db.value(
        _IS_ANCESTOR_OR_SELF, {"parent_id": parent_id, "id": category_id}
    ):
        raise Invalid("parent_id: a category cannot sit under itself or one of its sub-categories.")


def create(data: dict, actor: Actor) -> str:
    """Create a category, audited as ``actor``'s; answer its id. Its own transaction."""
    data = check(CREATE, data)
    category_id, moment = db.new_id(), now_iso()
    with db.transaction():
        db.lock("categories")
        check_exists(data["parent_id"], "parent_id")
        slug = slugs.claim("categories", data.get("slug"), data["name"], "category")
        db.execute(
            "INSERT INTO categories (id, name, slug, description, parent_id, position,"
            " created_at, updated_at) VALUES (:id, :name, :slug, :description, :parent_id,"
            " :position, :now, :now)",
            {**data, "id": category_id, "slug": slug, "now": moment},
        )
        audit.record("category.created", {"category_id": category_id, "slug": slug}, actor=actor)
    return category_id


def update(category_id: str, data: dict, actor: Actor) -> None:
    """Change the fields given (``parent_id: None``: top level). Its own transaction."""
    data = check(UPDATE, data)
    with db.transaction():
        db.lock("categories")
        row = get(category_id)
        if "parent_id" in data:
            _check_parent(category_id, data["parent_id"])
        if "slug" in data:
            slugs.claim("categories", data["slug"], row["name"], "category", category_id)
        merged = {**row, **data}
        db.execute(
            "UPDATE categories SET name = :name, slug = :slug, description = :description,"
            " parent_id = :parent_id, position = :position, updated_at = :now"
            " WHERE id = :id",
            {
                "name": merged["name"],
                "slug": merged["slug"],
                "description": merged["description"],
                "parent_id": merged["parent_id"],
                "position": merged["position"],
                "now": now_iso(),
                "id": category_id,
            },
        )
        audit.record("category.updated", {"category_id": category_id, **data}, actor=actor)


def delete(category_id: str, actor: Actor) -> None:
    """Delete a category; 409 naming what still uses it. Its own transaction."""
    with db.transaction():
        db.lock("categories")
        row = get(category_id)
        blockers = _blockers(category_id)
        if blockers:
            raise Conflict("This category is still used by " + blockers + ": move them first.")
        db.execute("DELETE FROM categories WHERE id = :id", {"id": category_id})
        audit.record(
            "category.deleted", {"category_id": category_id, "slug": row["slug"]}, actor=actor
        )


_BLOCKERS = (
    ("product", "products", "products WHERE category_id = :id"),
    ("sub-category", "sub-categories", "categories WHERE parent_id = :id"),
)


def _blockers(category_id: str) -> str:
    """Which products and sub-categories keep a category from being deleted ('' if none)."""
    parts = []
    for one, many, source in _BLOCKERS:
        count = db.value("SELECT COUNT(*) FROM " + source, {"id": category_id})
        if count:
            names = db.query(
                "SELECT name FROM " + source + " ORDER BY name LIMIT 5", {"id": category_id}
            )
            shown = ", ".join(repr(row["name"]) for row in names)
            more = f" and {count - 5} more" if count > 5 else ""
            parts.append(f"{count} {one if count == 1 else many} ({shown}{more})")
    return " and ".join(parts)
