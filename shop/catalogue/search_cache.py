"""The search's cache of rankings: a search by relevance ranks once per catalogue version.

Ranking is most of a search's cost (FTS5's ``bm25`` or ``ts_rank`` over every match, before
the LIMIT: 2.4-3.3 ms of CPU for a one-word search at 100,000 variants), and a storefront's
searches repeat (a search box, type-ahead prefixes, the pages of one search). So each worker
keeps the ranked product ids of recent searches, and reads the page's rows fresh by id.

**Never stale.** The ``counters`` row ``search_version`` holds the catalogue's version: a
random number that every change of the search index sets anew in its own transaction
(``bump``, called by ``search.refresh`` and ``search.build``, where every product and
variant write, the import and a product's deletion end), so no writer can change what a
search finds without it. A search reads the version first (one keyed statement, on every
node: several nodes share the database, so a process alone cannot know) and uses a ranking
only if it was made at that version; a ranking made after reading the version is at least as
new as it. Random, not counted: a restored backup brings back its own version with the
catalogue it ranked, never a number another history reused. Without the row (a database no
writer of this release has touched yet) nothing is cached; ``flask db upgrade`` makes it.

Only the ranking is kept (the first ``SEARCH_CACHE_IDS`` ids and the exact total), never a
price, stock or ``active``: a checkout changes stock without a new version, and the page's
rows come from ``products`` at each request. The public's fresh read keeps ``active = 1``
as a second guard (deactivating is a product write, which sets a new version anyway).

What is cached: a search sorted by relevance with no filter but the audience's (the public's
active products, or staff's all of them, or staff's ``active=true``, which is the public's
set); any other filter, and a page past the first ``SEARCH_CACHE_IDS`` matches, is ranked by
the database each time (``Match.quick_page``'s other path). Statements per search: the
version, then on a miss the ranking (ids and total), then the page's rows: 2 on a hit, 3 on a
miss (issue 25's bound is 3).

**The row is not hot**: only catalogue writes set it, once per transaction however many
products they touch (an import of 10,000 rows sets it once), and they already run one at a
time (``db.lock("products")``); checkout, stock and prices changed by orders never touch it.
Reading it is a primary-key lookup that no writer blocks (MVCC on PostgreSQL, WAL on SQLite).

Bounded: an LRU of ``SEARCH_CACHE_SIZE`` rankings per worker (default 256; 0 turns the cache
off), each of the first ``SEARCH_CACHE_IDS`` ids (default 200: ten pages of 20) kept as one
string of 24 characters an id: 200 ids take 5 kB, 256 rankings 1.3 MB (1,000 ids: 6 MB).
Why 200 and not more: a miss reads that many ids, and at 1,000 a miss cost ~0.7 ms of CPU
more than an uncached search (at 200 about the same), for pages few shoppers open. A worker
that sees a new version drops every ranking of the older ones. One lock guards the LRU
(gthread serves requests from several threads); two threads that miss the same search both
rank it.
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
