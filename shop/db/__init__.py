"""The thin data module: plain SQL with ``:name`` placeholders, on SQLite or PostgreSQL.

SQL is written once with ``:name`` placeholders; ``translate`` rewrites it for psycopg.
Each thread keeps its own connection (gunicorn's gthread workers reuse their threads), so a
connection is never shared between threads. Outside ``transaction()`` every statement commits
on its own; inside, all of them commit or roll back together (nested blocks are savepoints).

A PostgreSQL connection found broken (the server restarted, the network dropped it) is
replaced and the statement run once more when no transaction is open; inside a transaction
its work is lost, so the request fails with ``outages.Unavailable`` (503), as it does when
no connection can be made. Every statement has a time limit (``SHOP_DB_STATEMENT_TIMEOUT``;
``Database.time_limit`` lifts it for an upgrade): past it, or when the server answers nothing
at all, the request fails the same way and the connection is replaced; on SQLite the limit
bounds the wait for the write lock.

The verbs: ``query`` (all rows as dicts), ``one`` (first row or None), ``value`` (first column
of the first row), ``execute`` (rowcount) and ``execute_many``. ``stats()`` counts the
statements and writes of the current thread, for tests and the benchmark.

The rooms: ``engine`` (connections, the verbs, transactions), ``sqlite`` (SQLite's writer
lock, WAL and its checkpoints), ``postgres`` (PostgreSQL's connection settings and the watch
that cuts a statement whose server stops answering), ``sql`` (statement text: placeholders,
``IN`` lists, constraint names) and ``ids`` (the id format). Callers use this module:
``from shop import db``.
"""

from flask import current_app

from shop.db.engine import Database
from shop.db.ids import ID_PATTERN, ID_RE, new_id, sha256
from shop.db.sql import for_sqlite, in_list, translate, unique_violation

__all__ = [
    "ID_PATTERN",
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
    "query",
    "sha256",
    "transaction",
    "translate",
    "unique_violation",
    "value",
]

# -- the module-level verbs, bound to the current app's database --------------------------


def get_db() -> Database:
    """The current app's database."""
    return current_app.extensions["shop.db"]


def query(sql: str, params=None) -> list[dict]:
    """Every row of a statement, as dicts."""
    return get_db().query(sql, params)


def one(sql: str, params=None) -> dict | None:
    """The first row of a statement, or None."""
    return get_db().one(sql, params)


def value(sql: str, params=None):
    """The first column of the first row, or None."""
    return get_db().value(sql, params)


def execute(sql: str, params=None) -> int:
    """Run a statement; answer how many rows it changed."""
    return get_db().execute(sql, params)


def execute_many(sql: str, rows) -> None:
    """Run one statement for each parameter mapping in ``rows``."""
    get_db().execute_many(sql, rows)


def transaction():
    """All statements in the block commit together or not at all."""
    return get_db().transaction()


def lock(name: str) -> None:
    """Serialise transactions that take the same named lock (inside ``transaction()``)."""
    get_db().lock(name)
