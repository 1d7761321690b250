"""The content registry (spec 4.6): pages, blocks and banners as JSON, keyed by slug; one
entry's writes for every caller (``PUT``/``DELETE /content/{key}`` and the console), with
their rules and messages once. ``POST /content/sync`` (shop/api/content.py) writes many.

An entry's ``checksum`` is the SHA-256 of the canonical JSON of its ``data`` (keys sorted, no
spaces, UTF-8), so a sync tool can diff against ``GET /content/registry`` without the data.
"""

import json

from shop import audit, db
from shop.actor import Actor
from shop.checks.fields import Field, Pattern, check
from shop.clock import now_iso
from shop.errors import Invalid, NotFound

MAX_DATA_BYTES = 256 * 1024
KEY_PATTERN = r"^[a-z0-9](?:[a-z0-9_-]{0,126}[a-z0-9])?$"
KEY_ERROR = (
    "Use 1 to 128 lowercase letters, digits, '-' or '_', starting and ending with a"
    " letter or digit."
)
TYPE_PATTERN = r"^[a-z][a-z0-9_-]{0,31}$"
TYPE_ERROR = "Use 1 to 32 lowercase letters, digits, '-' or '_', starting with a letter."
# Paths of their own under /content, so no entry may take these keys.
RESERVED_KEYS = frozenset({"registry", "sync"})

Key = Pattern(KEY_PATTERN + r"\Z", KEY_ERROR)
Type = Pattern(TYPE_PATTERN + r"\Z", TYPE_ERROR)
ENTRY = {
    "type": Field("string", required=True, checks=(Type,)),
    "published": Field("boolean", default=False),
}
COLUMNS = "key, type, data, published, checksum, created_at, updated_at"


def canonical(data: dict) -> str:
    """The canonical JSON of ``data``: what is stored and what the checksum covers."""
    return json.dumps(
        data, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )


def data_problem(data: dict) -> str | None:
    """Why ``data`` cannot be stored (not JSON, over ``MAX_DATA_BYTES``), or None."""
    try:
        text = canonical(data)
    except ValueError:
        return "NaN and Infinity are not JSON numbers."
    size = len(text.encode())
    if size > MAX_DATA_BYTES:
        return f"Too large: {size} bytes of canonical JSON, the limit is {MAX_DATA_BYTES}."
    return None


def check_key(key: str) -> None:
    """400 naming ``key`` unless it is a key an entry may have."""
    problem = Key(key) if len(key) <= 128 else KEY_ERROR
    if problem:
        raise Invalid(f"key: {problem}")
    if key in RESERVED_KEYS:
        raise Invalid(f"key: {key!r} is reserved; choose another key.")


def present(row: dict) -> dict:
    return {**row, "data": json.loads(row["data"]), "published": bool(row["published"])}


def get(key: str) -> dict | None:
    """The entry's stored row, or None."""
    return db.one(f"SELECT {COLUMNS} FROM content_entries WHERE key = :key", {"key": key})


def every() -> list[dict]:
    """Every entry without its data, by key (the console's list: a shop has tens)."""
    rows = db.query(
        "SELECT key, type, published, checksum, updated_at FROM content_entries ORDER BY key"
    )
    return [{**row, "published": bool(row["published"])} for row in rows]


def row(key: str, entry: dict, moment: str) -> dict:
    """The parameters of an INSERT or UPDATE of an entry."""
    text = canonical(entry["data"])
    return {
        "key": key,
        "type": entry["type"],
        "data": text,
        "published": entry["published"],
        "checksum": db.sha256(text),
        "now": moment,
    }


INSERT = (
    "INSERT INTO content_entries (key, type, data, published, checksum, created_at, updated_at)"
    " VALUES (:key, :type, :data, :published, :checksum, :now, :now)"
)
UPDATE = (
    "UPDATE content_entries SET type = :type, data = :data, published = :published,"
    " checksum = :checksum, updated_at = :now WHERE key = :key"
)


def changed(old: dict, new: dict) -> bool:
    return (old["checksum"], old["type"], bool(old["published"])) != (
        new["checksum"],
        new["type"],
        bool(new["published"]),
    )


def put(key: str, entry: dict, actor: Actor, may_create) -> bool:
    """Create or replace the entry ``key`` (``type``, ``data``, ``published``); answer
    whether it was created. ``may_create()`` refuses unless the caller may create entries.
    Its own transaction."""
    check_key(key)
    data = entry.get("data")
    entry = {**check(ENTRY, {k: v for k, v in entry.items() if k != "data"}), "data": data}
    if not isinstance(data, dict):
        raise Invalid("data: Not a valid mapping type.")
    problem = data_problem(data)
    if problem:
        raise Invalid(f"data: {problem}")
    with db.transaction():
        db.lock("content")
        existing = db.one(
            "SELECT type, published, checksum FROM content_entries WHERE key = :key",
            {"key": key},
        )
        new = row(key, entry, now_iso())
        if existing is None:
            may_create()
            db.execute(INSERT, new)
            audit.record("content.created", {"key": key, "checksum": new["checksum"]}, actor=actor)
        elif changed(existing, new):
            db.execute(UPDATE, new)
            audit.record("content.updated", {"key": key, "checksum": new["checksum"]}, actor=actor)
    return existing is None


def delete(key: str, actor: Actor) -> None:
    """Delete the entry ``key`` (404 when there is none). Its own transaction."""
    with db.transaction():
        if not db.execute("DELETE FROM content_entries WHERE key = :key", {"key": key}):
            raise NotFound("Content entry not found.")
        audit.record("content.deleted", {"key": key}, actor=actor)
