"""Product search: the full-text index, kept by the writes, and the query a user types.

Per product, its name, SKUs, option values and description are indexed (FTS5 with ``bm25``
on SQLite, a weighted ``tsvector`` with ``ts_rank`` on PostgreSQL, stemmed as
``SHOP_SEARCH_LANGUAGE`` says). ``refresh(product_id)`` keeps a product's row current in the
transaction of its write; ``build_if_changed`` rebuilds the index when its recorded definition
differs. User text never becomes query syntax. What is matched, ranked and stemmed, per
engine: docs/catalogue-and-content.md, "Search and facets".
"""

import re
import string
from typing import NamedTuple

from flask import current_app

from shop import db
from shop.catalogue.search import cache as search_cache
from shop.clock import now_iso

INDEX = "products"
MAX_PIECES = 16  # whitespace-separated pieces of one query; the rest are ignored

_WORD = re.compile(r"[^\W_]+")

# The text of one product's index row, per column: its name, its active variants' SKUs and
# option values (a variant's SKU finds its product), its description.
_NAME = "p.name"
_SKUS = """COALESCE((SELECT string_agg(v.sku, ' ') FROM product_variants v
    WHERE v.product_id = p.id AND v.active = 1 AND v.sku IS NOT NULL), '')"""
_OPTIONS = """COALESCE((SELECT string_agg(x.value, ' ') FROM (SELECT DISTINCT o.value
    FROM product_variants v JOIN variant_option_values o ON o.variant_id = v.id
    WHERE v.product_id = p.id AND v.active = 1) x), '')"""
_DESCRIPTION = "p.description"

# SQLite's index also holds the word "hidden" for an inactive product, in a column of its
# own that user text never searches: the public's search filters in the index alone.
_FLAGS = "CASE WHEN p.active = 1 THEN '' ELSE 'hidden' END"
_SQLITE_COLUMNS = f"{_NAME}, {_SKUS}, {_OPTIONS}, {_DESCRIPTION}, {_FLAGS}"
_SQLITE_WRITE = f"""
    INSERT INTO product_search (product_id, name, skus, options, description, flags)
    SELECT p.id, {_SQLITE_COLUMNS} FROM products p WHERE p.id = :id
    ON CONFLICT (product_id) DO UPDATE SET name = excluded.name, skus = excluded.skus,
        options = excluded.options, description = excluded.description,
        flags = excluded.flags"""
_SQLITE_FILL = f"""
    INSERT INTO product_search (product_id, name, skus, options, description, flags)
    SELECT p.id, {_SQLITE_COLUMNS} FROM products p"""
_SEARCHED = "{name skus options description}"  # the columns user text is matched in
_TITLES = "{name skus options}"  # where the last word typed is also a prefix

# The FTS5 table and the triggers that keep it: made by ``build`` (with the language's
# tokenizer), not by the schema files, so that one text says what they are.
_SQLITE_INDEX = (
    """CREATE VIRTUAL TABLE product_search_fts USING fts5 (
        name, skus, options, description, flags,
        content = 'product_search', content_rowid = 'id',
        tokenize = '{tokenizer}', prefix = '2 3')""",
    """CREATE TRIGGER product_search_ai AFTER INSERT ON product_search BEGIN
        INSERT INTO product_search_fts (rowid, name, skus, options, description, flags)
            VALUES (new.id, new.name, new.skus, new.options, new.description, new.flags);
    END""",
    """CREATE TRIGGER product_search_ad AFTER DELETE ON product_search BEGIN
        INSERT INTO product_search_fts (product_search_fts, rowid, name, skus, options,
            description, flags) VALUES ('delete', old.id, old.name, old.skus, old.options,
            old.description, old.flags);
    END""",
    """CREATE TRIGGER product_search_au AFTER UPDATE ON product_search BEGIN
        INSERT INTO product_search_fts (product_search_fts, rowid, name, skus, options,
            description, flags) VALUES ('delete', old.id, old.name, old.skus, old.options,
            old.description, old.flags);
        INSERT INTO product_search_fts (rowid, name, skus, options, description, flags)
            VALUES (new.id, new.name, new.skus, new.options, new.description, new.flags);
    END""",
)
_SQLITE_DROP = (
    "DROP TRIGGER IF EXISTS product_search_ai",
    "DROP TRIGGER IF EXISTS product_search_ad",
    "DROP TRIGGER IF EXISTS product_search_au",
    "DROP TABLE IF EXISTS product_search_fts",
)
# bm25 weights of name, skus, options, description, flags.
_SQLITE_RANK = "bm25(product_search_fts, 10.0, 10.0, 4.0, 1.0, 0.0)"

# PostgreSQL's parser reads "SNK-100" as "snk" and the number "-100", and keeps e-mail,
# URL and path forms whole: ASCII punctuation becomes spaces first, so a document is cut
# into words as the query is (and as SQLite's unicode61 tokenizer cuts it).
_PUNCTUATION = string.punctuation


def _pg_words(column: str) -> str:
    return f"to_tsvector(CAST(:language AS regconfig), translate({column}, :punct, :spaces))"


_PG_DOCUMENT = f"""
    setweight({_pg_words(_NAME)}, 'A') || setweight({_pg_words(_SKUS)}, 'A')
    || setweight({_pg_words(_OPTIONS)}, 'B') || setweight({_pg_words(_DESCRIPTION)}, 'C')"""
# PostgreSQL's index row also keeps the product's ``active``, so the public's search ranks
# and counts in the index alone.
_PG_WRITE = f"""
    INSERT INTO product_search (product_id, document, active)
    SELECT p.id, {_PG_DOCUMENT}, p.active FROM products p WHERE p.id = :id
    ON CONFLICT (product_id) DO UPDATE SET document = excluded.document,
        active = excluded.active"""
_PG_FILL = f"""
    INSERT INTO product_search (product_id, document, active)
    SELECT p.id, {_PG_DOCUMENT}, p.active FROM products p"""


def _pg_params() -> dict:
    return {"language": language(), "punct": _PUNCTUATION, "spaces": " " * len(_PUNCTUATION)}


class SearchLanguageError(RuntimeError):
    """``SHOP_SEARCH_LANGUAGE`` names no text search configuration of this database."""


def _engine() -> str:
    return db.get_db().engine


def language() -> str:
    """The configured language (``SHOP_SEARCH_LANGUAGE``)."""
    return current_app.config.get("SEARCH_LANGUAGE") or "english"


def _tokenizer() -> str:
    stemmer = "porter " if language() == "english" else ""
    return stemmer + "unicode61 remove_diacritics 2"


def _sqlite_index() -> list[str]:
    return [statement.format(tokenizer=_tokenizer()) for statement in _SQLITE_INDEX]


def definition() -> str:
    """What the index is, as a checksum of everything that shapes it; recorded at each build."""
    if _engine() == "sqlite":
        text = "".join(_sqlite_index()) + _SQLITE_WRITE + _SQLITE_FILL
    else:
        text = _PG_WRITE + _PG_FILL + _PUNCTUATION
    return f"{_engine()} {language()} {db.sha256(text)[:16]}"


def refresh(product_id: str) -> None:
    """Bring one product's index row up to date (its text, or its removal), in the caller's
    transaction. Every product and variant write ends here."""
    if _engine() == "sqlite":
        changed = db.execute(_SQLITE_WRITE, {"id": product_id})
    else:
        changed = db.execute(_PG_WRITE, {"id": product_id, **_pg_params()})
    if not changed:
        db.execute("DELETE FROM product_search WHERE product_id = :id", {"id": product_id})
    search_cache.bump()  # what a search finds may have changed: rankings cached are old


MISSING_BATCH = 1000


def index_missing() -> int:
    """Index the products without an index row, at most ``MISSING_BATCH`` (the worker's job):
    those a node of the previous release created during a rolling upgrade, or a bulk load
    wrote. Answers how many."""
    missing = db.query(
        "SELECT p.id FROM products p WHERE NOT EXISTS"
        " (SELECT 1 FROM product_search s WHERE s.product_id = p.id) LIMIT :n",
        {"n": MISSING_BATCH},
    )
    with db.transaction():
        for row in missing:
            refresh(row["id"])
    return len(missing)


def build() -> None:
    """Rebuild the whole index from the catalogue, in the caller's transaction."""
    if _engine() == "sqlite":
        for statement in _SQLITE_DROP:
            db.execute(statement)
        db.execute("DELETE FROM product_search")
        db.execute(_SQLITE_FILL)
        for statement in _sqlite_index():
            db.execute(statement)
        db.execute("INSERT INTO product_search_fts (product_search_fts) VALUES ('rebuild')")
    else:
        if not db.value("SELECT 1 FROM pg_ts_config WHERE cfgname = :l", {"l": language()}):
            names = ", ".join(r["cfgname"] for r in db.query("SELECT cfgname FROM pg_ts_config"))
            raise SearchLanguageError(
                f"SHOP_SEARCH_LANGUAGE={language()!r} is no text search configuration of"
                f" this database (it has: {names})"
            )
        db.execute("DELETE FROM product_search")
        db.execute(_PG_FILL, _pg_params())
    search_cache.bump()
    db.execute(
        "INSERT INTO search_index (name, definition, built_at) VALUES (:name, :definition, :at)"
        " ON CONFLICT (name) DO UPDATE SET definition = excluded.definition,"
        " built_at = excluded.built_at",
        {"name": INDEX, "definition": definition(), "at": now_iso()},
    )


def build_if_changed() -> bool:
    """Rebuild the index when its recorded definition is not the code's, or when it does not
    hold one row per product (rows written by other means): run by ``flask db upgrade``."""
    recorded = db.value("SELECT definition FROM search_index WHERE name = :n", {"n": INDEX})
    if search_cache.version() is None:  # a database of an older release: searches may cache
        search_cache.bump()
    if recorded == definition() and db.value(
        "SELECT (SELECT COUNT(*) FROM products) = (SELECT COUNT(*) FROM product_search)"
    ):
        return False
    build()
    return True


# -- what a user typed --------------------------------------------------------------------


def pieces(text: str) -> list[list[str]]:
    """The words of each whitespace-separated piece of ``text`` (pieces without any dropped)."""
    found = [_WORD.findall(piece.lower()) for piece in text.split()]
    return [words for words in found if words][:MAX_PIECES]


class _Ranked(NamedTuple):
    """``Match._ranked``: the FROM clause of the ranked matches (``m``), each one's product
    id and the total of the matches as SQL expressions over it, its order, the statement
    that counts the matches alone, and the parameters of both."""

    source: str
    product_id: str
    total: str
    order: str
    count: str
    params: dict


class Match:
    """A search's part of a product list query.

    ``condition`` selects the matching products (``p`` is ``products``), for counts and
    other sorts. For a page sorted by relevance, ``ranked_join`` goes after
    ``FROM products p`` with ``ranked_condition`` in the WHERE clause, and ``order`` sorts.
    ``driving_join`` (after ``FROM products p``, instead of ``condition``) joins the matches
    so that the search's index leads: a few of them without reading them all.
    """

    def __init__(self, text: str):
        found = pieces(text)
        self.empty = not found
        if _engine() == "sqlite":
            # Each piece a quoted phrase of plain words in the searched columns; the last one
            # also as a prefix in the titles:
            # {...}: "blue" AND ({...}: "tea pot" OR {...}: "tea pot"*)
            phrases = [f'{_SEARCHED} : "' + " ".join(words) + '"' for words in found]
            if phrases:
                last = '"' + " ".join(found[-1]) + '"'
                phrases[-1] = f"({phrases[-1]} OR {_TITLES} : {last}*)"
            matching = (
                "SELECT s.product_id{score} FROM product_search_fts JOIN product_search s"
                " ON s.id = product_search_fts.rowid WHERE product_search_fts MATCH :search"
            )
            self.condition = "p.id IN (" + matching.format(score="") + ")"
            score = f", {_SQLITE_RANK} AS score"
            self.ranked_join = f" JOIN ({matching.format(score=score)}) m ON m.product_id = p.id"
            self.ranked_condition = ""
            found = matching.format(score="")
            self.driving_join = f" JOIN ({found}) found ON found.product_id = p.id"
            self.order = "m.score, p.id"
            self.params = {"search": " AND ".join(phrases)}
        else:
            # 'blue' & ('tea' <-> 'pot' | 'tea' <-> 'pot':*AB): quoted lexemes, normalised by
            # the configuration; the prefix in the titles only (weights A and B).
            phrases = [" <-> ".join(f"'{word}'" for word in words) for words in found]
            if phrases:
                phrases[-1] = f"{phrases[-1]} | {phrases[-1]}:*AB"
            tsquery = "to_tsquery(CAST(:language AS regconfig), :search)"
            self.condition = (
                f"p.id IN (SELECT product_id FROM product_search WHERE document @@ {tsquery})"
            )
            self.ranked_join = " JOIN product_search s ON s.product_id = p.id"
            self.ranked_condition = f"s.document @@ {tsquery}"
            self.driving_join = (
                f" JOIN product_search found ON found.product_id = p.id"
                f" AND found.document @@ {tsquery}"
            )
            self.order = f"ts_rank(s.document, {tsquery}) DESC, p.id"
            query = " & ".join(f"({phrase})" for phrase in phrases)
            self.params = {"search": query, "language": language()}
            self.tsquery = tsquery

    def quick_page(self, active: bool | None, offset: int, limit: int, select: str):
        """A search of all products or of the active ones (``active`` None or True): the
        page's rows of ``select`` (``SELECT ... FROM products p``), ranked, and the total of
        the matches, in one statement ranked by the index alone, or from ``search_cache``
        within its first ids; None for any other filter. Why: docs/performance.md, "Search".
        """
        if active is False:
            return None
        columns, found, _ = select.rpartition("FROM products p")
        assert found, "select reads FROM products p"  # noqa: S101 - our own constant
        cache = search_cache.cache()
        if cache is not None and offset + limit <= search_cache.depth():
            version = search_cache.version()
            if version is not None:
                return self._cached_page(cache, version, bool(active), offset, limit, select)
        ranked = self._ranked(active, offset, limit)
        rows = db.query(
            f"{columns.rstrip()}, {ranked.total} AS _total FROM {ranked.source}"
            f" JOIN products p ON p.id = {ranked.product_id} ORDER BY {ranked.order}",
            ranked.params,
        )
        if rows:
            total = rows[0]["_total"]
            for row in rows:
                del row["_total"]
        else:  # past the end, or nothing
            total = 0 if not offset else db.value(ranked.count, ranked.params)
        return rows, total

    def _ranking(self, active: bool, depth: int) -> search_cache.Ranking:
        """The first ``depth`` ids of the ranking and the total of the matches (one statement)."""
        ranked = self._ranked(active, 0, depth)
        rows = db.query(
            f"SELECT {ranked.product_id} AS product_id, {ranked.total} AS total"
            f" FROM {ranked.source} ORDER BY {ranked.order}",
            ranked.params,
        )
        total = rows[0]["total"] if rows else 0
        return search_cache.Ranking([row["product_id"] for row in rows], total)

    def _ranked(self, active: bool | None, offset: int, limit: int) -> "_Ranked":
        """The matches ranked by the index alone, ``limit`` of them from ``offset``, as the
        source ``m`` that ``quick_page`` and ``_ranking`` read (all products, or the active
        ones when ``active``)."""
        params = {**self.params, "limit": limit, "offset": offset}
        if _engine() == "postgresql":
            where = f"document @@ {self.tsquery}" + (" AND active = 1" if active else "")
            ranked = (
                f"SELECT product_id, ts_rank(document, {self.tsquery}) AS score,"
                f" COUNT(*) OVER () AS total FROM product_search WHERE {where}"
                " ORDER BY score DESC, product_id LIMIT :limit OFFSET :offset"
            )
            count = f"SELECT COUNT(*) FROM product_search WHERE {where}"
            return _Ranked(
                f"({ranked}) m", "m.product_id", "m.total", "m.score DESC, m.product_id",
                count, params,
            )  # fmt: skip
        params["search"] += " NOT flags : hidden" if active else ""
        matching = "FROM product_search_fts WHERE product_search_fts MATCH :search"
        ranked = (
            f"SELECT rowid AS sid, {_SQLITE_RANK} AS score {matching}"
            " ORDER BY score, rowid LIMIT :limit OFFSET :offset"
        )
        count = f"SELECT COUNT(*) {matching}"
        return _Ranked(
            f"({ranked}) m JOIN product_search s ON s.id = m.sid", "s.product_id",
            f"({count})", "m.score, m.sid", count, params,
        )  # fmt: skip

    def _cached_page(self, cache, version, active: bool, offset: int, limit: int, select: str):
        """``quick_page`` from the ranking cached at ``version`` (ranked now if none is): the
        page's rows read fresh by id, so stock, price and ``active`` are today's."""
        key = (active, self.params["search"])
        ranking = cache.get(version, key)
        if ranking is None:
            ranking = self._ranking(active, search_cache.depth())
            cache.put(version, key, ranking)
        ids = ranking.page(offset, limit)
        if not ids:
            return [], ranking.total
        marks, params = db.in_list("id", ids)
        fresh = " AND p.active = 1" if active else ""  # a second guard; a deactivation bumps
        found = db.query(f"{select} WHERE p.id IN {marks}{fresh}", params)
        rows = {row["id"]: row for row in found}
        return [rows[i] for i in ids if i in rows], ranking.total
