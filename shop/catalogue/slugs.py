"""URL slugs of products, categories and collections: derived from a name, unique per table.

A slug given by the caller that is already taken is a 409; a slug derived from a name gets
the first free suffix (``mug``, ``mug-2``, ``mug-3``...), as two products may share a name.
"""

import re
import unicodedata

from shop import db
from shop.checks.fields import Length, Pattern
from shop.errors import Conflict

MAX_LENGTH = 200

# What a given slug may be: both checks run, as the API's schemas run theirs.
SLUG = (
    Length(min=1, max=MAX_LENGTH),
    Pattern(
        r"^[a-z0-9]+(?:-[a-z0-9]+)*$",
        "Use lowercase letters and digits separated by single '-'.",
    ),
)

# Constant SQL per table: table names never come from input. Ids are never empty, so
# ``id <> ''`` excludes nothing when no row is being updated.
_TABLES = ("products", "categories", "collections")
_EXACT = {t: f"SELECT 1 FROM {t} WHERE slug = :slug AND id <> :own_id" for t in _TABLES}
_FAMILY = {
    t: f"SELECT slug FROM {t} WHERE (slug = :slug OR slug LIKE :prefix) AND id <> :own_id"
    for t in _TABLES
}


def slugify(text: str, fallback: str) -> str:
    """``text`` as a slug: accents dropped, lowercase, words joined by '-'."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")
    return slug[: MAX_LENGTH - 8].rstrip("-") or fallback


def claim(table: str, given: str | None, name: str, fallback: str, own_id: str = "") -> str:
    """The slug to store: ``given`` when free (409 otherwise), else one derived from ``name``.

    Call it inside the transaction that writes the row, after taking the table's lock.
    """
    if given is not None:
        if db.value(_EXACT[table], {"slug": given, "own_id": own_id}):
            raise Conflict(f"slug: {given!r} is already taken.")
        return given
    base = slugify(name, fallback)
    rows = db.query(_FAMILY[table], {"slug": base, "prefix": base + "-%", "own_id": own_id})
    taken = {row["slug"] for row in rows}
    suffix, slug = 1, base
    while slug in taken:
        suffix += 1
        slug = f"{base}-{suffix}"
    return slug
