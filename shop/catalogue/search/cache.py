"""The search's cache of rankings: a search by relevance ranks once per catalogue version.

Each worker keeps the ranked product ids (the first ``SEARCH_CACHE_IDS``) and the exact total
of its last ``SEARCH_CACHE_SIZE`` unfiltered searches by relevance, keyed by the ``counters``
row ``search_version`` that ``bump`` sets anew on every change of the search index, and reads
the page's rows fresh by id. Why it is never stale, which searches it serves, and its bounds:
docs/performance.md, "The cache of rankings: fresh, bounded, not hot".
"""

import secrets
import threading
from collections import OrderedDict

from flask import current_app

from shop import db

NAME = "search_version"
VERSION = f"SELECT value FROM counters WHERE name = '{NAME}'"


def bump() -> None:
    """Give the catalogue a new version, in the caller's transaction (once per transaction)."""
    if db.get_db().first_in_transaction(NAME):
        db.execute(
            "INSERT INTO counters (name, value) VALUES (:name, :value)"
            " ON CONFLICT (name) DO UPDATE SET value = excluded.value",
            {"name": NAME, "value": secrets.randbits(62)},
        )


def version():
    """The catalogue's version, or None when no writer has set one."""
    return db.value(VERSION)


class Ranking:
    """The first ids of a search's ranking, in order, and the total of its matches."""

    __slots__ = ("_ids", "_width", "total")

    def __init__(self, ids: list[str], total: int):
        self.total = total
        width = len(ids[0]) if ids else 0
        if all(len(i) == width for i in ids):
            self._ids, self._width = "".join(ids), width
        else:
            self._ids, self._width = tuple(ids), 0

    def page(self, offset: int, limit: int) -> list[str]:
        """The ids from ``offset``, at most ``limit`` of them."""
        if not self._width:
            return list(self._ids[offset : offset + limit])
        w, ids = self._width, self._ids
        end = min(len(ids), (offset + limit) * w)
        return [ids[i : i + w] for i in range(offset * w, end, w)]


class RankCache:
    """An LRU of rankings by (version, audience, search), holding one version's at a time."""

    def __init__(self, size: int):
        self.size = size
        self._version = None
        self._entries: OrderedDict = OrderedDict()
        self._lock = threading.Lock()

    def get(self, current, key) -> Ranking | None:
        with self._lock:
            if current != self._version:
                self._entries.clear()
                self._version = current
                return None
            found = self._entries.get(key)
            if found is not None:
                self._entries.move_to_end(key)
            return found

    def put(self, made_at, key, ranking: Ranking) -> None:
        with self._lock:
            if made_at != self._version:
                return  # a newer version was seen meanwhile: this one is of no use
            self._entries[key] = ranking
            self._entries.move_to_end(key)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)


def cache() -> RankCache | None:
    """This app's cache in this worker, or None when ``SEARCH_CACHE_SIZE`` is 0."""
    size = current_app.config.get("SEARCH_CACHE_SIZE", 256)
    if not size:
        return None
    extensions = current_app.extensions
    found = extensions.get("shop.search_cache")
    if found is None:
        found = extensions.setdefault("shop.search_cache", RankCache(size))
    return found


def depth() -> int:
    """How many ids of a ranking are kept (``SEARCH_CACHE_IDS``)."""
    return current_app.config.get("SEARCH_CACHE_IDS", 200)
