"""The thin data module: plain SQL with ``:name`` placeholders, on SQLite or PostgreSQL.

The verbs: ``query`` (rows as dicts), ``one`` (first row or None), ``value`` (first column of
the first row), ``execute`` (rowcount), ``execute_many``, ``send`` and ``send_many`` (a
write whose answer nobody reads: on PostgreSQL pipelined with the commit); ``transaction()``
makes them one unit (nested blocks are savepoints); ``stats()`` counts the current thread's
statements.
One connection per thread. What a broken or silent database does (a retry, a 503, the
statement time limit) is in docs/operations.md. Callers use ``from shop import db``.
"""

import sqlite3

from flask import current_app

from shop.db.engine import Database
from shop.db.ids import ID_PATTERN, ID_RE, hash_matches, new_id, sha256
from shop.db.sql import for_sqlite, in_list, psycopg_errors, translate, unique_violation
from shop.outages import Unavailable

__all__ = [
    "ID_PATTERN",
    "after_commit",
    "ID_RE",
    "Database",
    "execute",
    "execute_many",
    "for_sqlite",
    "get_db",
    "in_list",
    "lock",
    "new_id",
    "one",
    "one_of",
    "psycopg_errors",
    "query",
    "send",
    "send_many",
    "sha256",
    "hash_matches",
    "transaction",
    "translate",
    "unique_violation",
    "unreachable_errors",
    "value",
]

# -- the module-level verbs, bound to the current app's database --------------------------


def get_db() -> Database:
    """The current app's database."""
    return current_app._get_current_object().extensions["shop.db"]  # one proxy lookup


def query(sql: str, params=None) -> list[dict]:
    """Every row of a statement, as dicts."""
    return get_db().query(sql, params)


def one(sql: str, params=None) -> dict | None:
    """The first row of a statement, or None."""
    return get_db().one(sql, params)


def unreachable_errors() -> tuple[type[Exception], ...]:
    """What a statement raises when the database cannot be reached or read, on either
    engine, for a check that reports it rather than fails (readiness, the metrics, the
    start-up's schema check): psycopg's only once a PostgreSQL database loaded it."""
    return (Unavailable, sqlite3.Error, OSError, *psycopg_errors("Error"))


def one_of(name: str, values) -> tuple[str, dict]:
    """A condition's right-hand side, ``column {condition}``: the column is one of ``values``,
    and its parameters. For a long list (a hundred ids): on PostgreSQL ``= ANY(:name)``, one
    array parameter (psycopg adapts one list, not a parameter per value: ~2 µs of the
    worker's CPU a value, and the statement is the same whatever the length); on SQLite,
    in-process, ``IN (:name0, ...)`` as ``in_list``."""
    if get_db().engine == "postgresql":
        return f"= ANY(:{name})", {name: list(values)}
    marks, params = in_list(name, values)
    return f"IN {marks}", params


def value(sql: str, params=None):
    """The first column of the first row, or None."""
    return get_db().value(sql, params)


def execute(sql: str, params=None) -> int:
    """Run a statement; answer how many rows it changed."""
    return get_db().execute(sql, params)


def execute_many(sql: str, rows) -> None:
    """Run one statement for each parameter mapping in ``rows``."""
    get_db().execute_many(sql, rows)


def send(sql: str, params=None) -> None:
    """Run a write whose answer is not read; on PostgreSQL, in a transaction, it goes to the
    server with the next ones and the COMMIT (its error comes then)."""
    get_db().send(sql, params)


def send_many(sql: str, rows) -> None:
    """``execute_many``, sent as ``send`` sends."""
    get_db().send_many(sql, rows)


def transaction():
    """All statements in the block commit together or not at all."""
    return get_db().transaction()


def after_commit(action) -> None:
    """Run ``action()`` once the open transaction commits (at once outside one)."""
    get_db().after_commit(action)


def lock(name: str) -> None:
    """Serialise transactions that take the same named lock (inside ``transaction()``)."""
    get_db().lock(name)
