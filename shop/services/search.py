"""Product search: the full-text index, kept by the writes, and the query a user types.

What is searched, per product: its name, its SKUs, its option values and its description
(weighted in that order: a name or SKU match ranks above a description match).

- SQLite: ``product_search`` holds that text, one row per product; an FTS5 table with
  external content (``product_search_fts``) indexes it, kept in step by triggers. Ranked by
  ``bm25`` with column weights. Stemming by FTS5's ``porter`` tokenizer (English).
- PostgreSQL: ``product_search.document`` is a weighted ``tsvector`` (A name and SKUs, B
  option values, C description) under a GIN index; ranked by ``ts_rank``; stemmed by the
  text search configuration ``SHOP_SEARCH_LANGUAGE`` names (``english`` by default).

The language: ``SHOP_SEARCH_LANGUAGE`` (default ``english``). On PostgreSQL any installed text
search configuration (``SELECT cfgname FROM pg_ts_config``: ``german``, ``french``,
``simple`` for no stemming...). SQLite has only an English stemmer: ``english`` uses it, any
other value indexes words unstemmed (accents folded). After changing it, run
``flask db upgrade``: the index is rebuilt because its recorded definition differs.

Every write of a product or its variants calls ``refresh(product_id)`` in its own
transaction (``variants.product_changed``, where each such write ends), so the index is never
behind the catalogue; a sale changes no searched text and does not touch it.
``build_if_changed`` (run by every ``flask db upgrade``) rebuilds the whole index when the
definition recorded in ``search_index`` differs from the code's, which is how a change of
what is indexed reaches existing databases.

User text never becomes query syntax: it is cut into words (letters and digits), each
whitespace-separated piece a phrase, and the pieces must all match (AND); the last word
typed is also a prefix, for type-ahead (``tea`` finds "Teapot", ``TS-RED`` finds the SKU
``TS-RED-M``, ``blue tea`` finds "Blue Teapot"). Quotes, ``*``,
``-``, ``AND``/``OR``/``NOT`` and parentheses are plain text. A query without any word
matches nothing. On PostgreSQL the configuration's stop words ("the", "and") are ignored;
SQLite keeps them.
"""

import re
import string

from flask import current_app

from shop import db
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
    FROM variant_option_values o JOIN product_variants v ON v.id = o.variant_id
    WHERE o.product_id = p.id AND v.active = 1) x), '')"""
_DESCRIPTION = "p.description"

_SQLITE_COLUMNS = f"{_NAME}, {_SKUS}, {_OPTIONS}, {_DESCRIPTION}"
_SQLITE_WRITE = f"""
    INSERT INTO product_search (product_id, name, skus, options, description)
    SELECT p.id, {_SQLITE_COLUMNS} FROM products p WHERE p.id = :id
    ON CONFLICT (product_id) DO UPDATE SET name = excluded.name, skus = excluded.skus,
        options = excluded.options, description = excluded.description"""
_SQLITE_FILL = f"""
    INSERT INTO product_search (product_id, name, skus, options, description)
    SELECT p.id, {_SQLITE_COLUMNS} FROM products p"""

# The FTS5 table and the triggers that keep it: made by ``build`` (with the language's
# tokenizer), not by the schema files, so that one text says what they are.
_SQLITE_INDEX = (
    """CREATE VIRTUAL TABLE product_search_fts USING fts5 (
        name, skus, options, description,
        content = 'product_search', content_rowid = 'id',
        tokenize = '{tokenizer}', prefix = '2 3')""",
    """CREATE TRIGGER product_search_ai AFTER INSERT ON product_search BEGIN
        INSERT INTO product_search_fts (rowid, name, skus, options, description)
            VALUES (new.id, new.name, new.skus, new.options, new.description);
    END""",
    """CREATE TRIGGER product_search_ad AFTER DELETE ON product_search BEGIN
        INSERT INTO product_search_fts (product_search_fts, rowid, name, skus, options,
            description) VALUES ('delete', old.id, old.name, old.skus, old.options,
            old.description);
    END""",
    """CREATE TRIGGER product_search_au AFTER UPDATE ON product_search BEGIN
        INSERT INTO product_search_fts (product_search_fts, rowid, name, skus, options,
            description) VALUES ('delete', old.id, old.name, old.skus, old.options,
            old.description);
        INSERT INTO product_search_fts (rowid, name, skus, options, description)
            VALUES (new.id, new.name, new.skus, new.options, new.description);
    END""",
)
_SQLITE_DROP = (
    "DROP TRIGGER IF EXISTS product_search_ai",
    "DROP TRIGGER IF EXISTS product_search_ad",
    "DROP TRIGGER IF EXISTS product_search_au",
    "DROP TABLE IF EXISTS product_search_fts",
)
# bm25 weights of name, skus, options, description.
_SQLITE_RANK = "bm25(product_search_fts, 10.0, 10.0, 4.0, 1.0)"

# PostgreSQL's parser reads "SNK-100" as "snk" and the number "-100", and keeps e-mail,
# URL and path forms whole: ASCII punctuation becomes spaces first, so a document is cut
# into words as the query is (and as SQLite's unicode61 tokenizer cuts it).
_PUNCTUATION = string.punctuation


def _pg_words(column: str) -> str:
    return f"to_tsvector(CAST(:language AS regconfig), translate({column}, :punct, :spaces))"


_PG_DOCUMENT = f"""
    setweight({_pg_words(_NAME)}, 'A') || setweight({_pg_words(_SKUS)}, 'A')
    || setweight({_pg_words(_OPTIONS)}, 'B') || setweight({_pg_words(_DESCRIPTION)}, 'C')"""
_PG_WRITE = f"""
    INSERT INTO product_search (product_id, document)
    SELECT p.id, {_PG_DOCUMENT} FROM products p WHERE p.id = :id
    ON CONFLICT (product_id) DO UPDATE SET document = excluded.document"""
_PG_FILL = f"""
    INSERT INTO product_search (product_id, document)
    SELECT p.id, {_PG_DOCUMENT} FROM products p"""


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


class Match:
    """A search's part of a product list query.

    ``condition`` selects the matching products (``p`` is ``products``), for counts and
    other sorts. For a page sorted by relevance, ``ranked_join`` goes after
    ``FROM products p`` with ``ranked_condition`` in the WHERE clause, and ``order`` sorts.
    """

    def __init__(self, text: str):
        found = pieces(text)
        self.empty = not found
        if _engine() == "sqlite":
            # Each piece a quoted phrase of plain words, the last one's last word a prefix:
            # "blue" "tea pot"*
            phrases = ['"' + " ".join(words) + '"' for words in found]
            if phrases:
                phrases[-1] += "*"
            matching = (
                "SELECT s.product_id{score} FROM product_search_fts JOIN product_search s"
                " ON s.id = product_search_fts.rowid WHERE product_search_fts MATCH :search"
            )
            self.condition = "p.id IN (" + matching.format(score="") + ")"
            score = f", {_SQLITE_RANK} AS score"
            self.ranked_join = f" JOIN ({matching.format(score=score)}) m ON m.product_id = p.id"
            self.ranked_condition = ""
            self.order = "m.score, p.id"
            self.params = {"search": " ".join(phrases)}
        else:
            # 'blue' & ('tea' <-> 'pot':*): quoted lexemes, normalised by the configuration.
            phrases = [" <-> ".join(f"'{word}'" for word in words) for words in found]
            if phrases:
                phrases[-1] += ":*"
            tsquery = "to_tsquery(CAST(:language AS regconfig), :search)"
            self.condition = (
                f"p.id IN (SELECT product_id FROM product_search WHERE document @@ {tsquery})"
            )
            self.ranked_join = " JOIN product_search s ON s.product_id = p.id"
            self.ranked_condition = f"s.document @@ {tsquery}"
            self.order = f"ts_rank(s.document, {tsquery}) DESC, p.id"
            query = " & ".join(f"({phrase})" for phrase in phrases)
            self.params = {"search": query, "language": language()}
