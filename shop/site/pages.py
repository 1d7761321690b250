"""The shop's own pages (about, terms, privacy, shipping): published content registry entries
of type ``page``, each ``{"title", "body"}``, read by the storefront."""

import json

from shop import db
from shop.errors import NotFound
from shop.site import settings

_PUBLISHED = "FROM content_entries WHERE type = 'page' AND published = 1"
# The pages a storefront's footer links to, in this order, when they are published.
FOOTER = ("about", "shipping", "terms", "privacy")


def page(key: str) -> dict:
    """The published page ``key``: ``key``, ``title``, ``body``, ``updated_at``."""
    row = db.one(
        "SELECT key, data, updated_at FROM content_entries"
        " WHERE key = :key AND type = 'page' AND published = 1",
        {"key": key},
    )
    if row is None:
        raise NotFound("Page not found.")
    return _present(row)


def published() -> list[dict]:
    """Every published page, by key."""
    rows = db.query(f"SELECT key, data, updated_at {_PUBLISHED} ORDER BY key")
    return [_present(row) for row in rows]


# The settings' rows and the published pages', in one statement (``with_settings``).
_WITH_SETTINGS = f"""
    SELECT 0 AS page, key, value, NULL AS updated_at FROM settings
    UNION ALL
    SELECT 1 AS page, key, data, updated_at {_PUBLISHED}
    ORDER BY page, key"""


def with_settings() -> tuple[dict, list[dict]]:
    """The shop's settings (``settings.current()``) and every published page by key
    (``published()``), in one statement: a storefront page shows both (its frame and its
    footer), a round trip each on PostgreSQL before (docs/performance.md, "The category
    page's statements")."""
    rows = db.query(_WITH_SETTINGS)
    return settings.from_rows([row for row in rows if not row["page"]]), [
        _present({"key": row["key"], "data": row["value"], "updated_at": row["updated_at"]})
        for row in rows
        if row["page"]
    ]


def _present(row: dict) -> dict:
    data = json.loads(row["data"])
    title = data.get("title") if isinstance(data.get("title"), str) else row["key"]
    body = data.get("body") if isinstance(data.get("body"), str) else ""
    return {"key": row["key"], "title": title, "body": body, "updated_at": row["updated_at"]}
