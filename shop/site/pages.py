"""The shop's own pages (about, terms, privacy, shipping): published content registry entries
of type ``page``, each ``{"title", "body"}``, read by the storefront."""

import json

from shop import db
from shop.errors import NotFound

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
    rows = db.query(
        "SELECT key, data, updated_at FROM content_entries"
        " WHERE type = 'page' AND published = 1 ORDER BY key"
    )
    return [_present(row) for row in rows]


def _present(row: dict) -> dict:
    data = json.loads(row["data"])
    title = data.get("title") if isinstance(data.get("title"), str) else row["key"]
    body = data.get("body") if isinstance(data.get("body"), str) else ""
    return {"key": row["key"], "title": title, "body": body, "updated_at": row["updated_at"]}
