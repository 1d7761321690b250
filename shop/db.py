"""The thin data module: plain SQL with ``:name`` placeholders, on SQLite or PostgreSQL.

SQL is written once with ``:name`` placeholders; ``translate`` rewrites it for psycopg.
Each thread keeps its own connection (gunicorn's gthread workers reuse their threads), so a
connection is never shared between threads. Outside ``transaction()`` every statement commits
on its own; inside, all of them commit or roll back together (nested blocks are savepoints).

A PostgreSQL connection found broken (the server restarted, the network dropped it) is
replaced and the statement run once more when no transaction is open; inside a transaction
its work is lost, so the request fails with ``errors.Unavailable`` (503), as it does when
no connection can be made.

The verbs: ``query`` (all rows as dicts), ``one`` (first row or None), ``value`` (first column
of the first row), ``execute`` (rowcount) and ``execute_many``. ``stats()`` counts the
statements and writes of the current thread, for tests and the benchmark.
"""

import fcntl
import hashlib
import os
import re
import secrets
import sqlite3
import threading
import time
from contextlib import contextmanager, suppress
from functools import lru_cache, wraps
from pathlib import Path

from flask import current_app

from shop.errors import Unavailable, recovered

_WRITE_VERBS = ("insert", "update", "delete", "replace", "create", "drop", "alter")


@lru_cache(maxsize=1024)
def translate(sql: str) -> str:
    """Rewrite ``:name`` placeholders as ``%(name)s`` and escape ``%`` for psycopg.

    Quoted strings, identifiers and ``--`` comments are copied as they are (but for ``%``),
    and ``::`` casts are left alone.
    """
    out = []
    i, n = 0, len(sql)
    while i < n:
        ch = sql[i]
        if ch == "-" and sql.startswith("--", i):
            end = sql.find("\n", i)
            end = n if end == -1 else end
            out.append(sql[i:end].replace("%", "%%"))
            i = end
        elif ch in "'\"":
            end = sql.index(ch, i + 1) + 1
            out.append(sql[i:end].replace("%", "%%"))
            i = end
        elif ch == "%":
            out.append("%%")
            i += 1
        elif ch == ":" and i + 1 < n and sql[i + 1] == ":":
            out.append("::")
            i += 2
        elif ch == ":" and i + 1 < n and (sql[i + 1].isalpha() or sql[i + 1] == "_"):
            match = re.compile(r"[A-Za-z_]\w*").match(sql, i + 1)
            out.append(f"%({match.group()})s")
            i = match.end()
        else:
            out.append(ch)
            i += 1
    return "".join(out)


_STRING_AGG = re.compile(r"\bstring_agg\s*\(", re.IGNORECASE)


@lru_cache(maxsize=1024)
def for_sqlite(sql: str) -> str:
    """PostgreSQL's ``string_agg(value, separator)`` as SQLite's built-in ``group_concat``.

    Same result (NULLs skipped, NULL when there are none), computed in C: a Python aggregate
    cost a callback per row on every session and key resolution.
    """
    return _STRING_AGG.sub("group_concat(", sql)


@lru_cache(maxsize=1024)
def _is_write(sql: str) -> bool:
    """Whether a statement changes data (counted apart in ``stats``)."""
    return sql.lstrip().split(None, 1)[0].lower() in _WRITE_VERBS


_last_id = [0, 0]  # the milliseconds and the random part of this process's newest id
_id_lock = threading.Lock()


def in_list(name: str, values) -> tuple[str, dict]:
    """``(:name0, :name1, ...)`` and its parameters, for ``IN``: one statement whatever the
    list's length, its SQL holding only numbered placeholders."""
    params = {f"{name}{i}": value for i, value in enumerate(values)}
    return "(" + ", ".join(f":{key}" for key in params) + ")", params


def new_id() -> str:
    """An opaque, time-ordered identifier: 12 hex digits of milliseconds, 12 random.

    Monotonic within a process, as ULIDs are: an id made in the same millisecond as the one
    before (or after the system clock stepped back) counts up from it, so rows ordered by
    id, such as an order's status history, keep the order they were written in.
    """
    moment = time.time_ns() // 1_000_000
    with _id_lock:
        last_moment, last_random = _last_id
        if moment > last_moment:
            random_part = secrets.randbits(48)
        elif last_random + 1 < 1 << 48:
            moment, random_part = last_moment, last_random + 1
        else:
            moment, random_part = last_moment + 1, secrets.randbits(48)
        _last_id[:] = moment, random_part
    return f"{moment:012x}{random_part:012x}"


def sha256(text: str) -> str:
    """Hex SHA-256 of a secret; the only form in which secrets are stored."""
    return hashlib.sha256(text.encode()).hexdigest()


def _queued_when_alone(method):
    """Run a SQLite write made outside a transaction in one of its own, so that it queues
    for the write lock like every other writer (``_queued``)."""

    @wraps(method)
    def run(self, sql: str, *args):
        if self._lone_write(sql):
            with self.transaction():
                return method(self, sql, *args)
        return method(self, sql, *args)

    return run


class Database:
    """A database URL and the per-thread connections to it."""

    def __init__(self, url: str, connect_timeout: int = 3):
        self.url = url
        self.connect_timeout = connect_timeout
        if url.startswith(("postgresql://", "postgres://")):
            from psycopg.pq import ExecStatus

            self.engine = "postgresql"
            self._pg_tuples_ok = ExecStatus.TUPLES_OK
        elif url.startswith("sqlite:///"):
            self.engine = "sqlite"
            self.path = url.removeprefix("sqlite:///")
        else:
            raise ValueError(
                "DATABASE_URL must start with sqlite:/// or postgresql:// "
                f"(got {url.split('://', 1)[0]}://...)"
            )
        self._local = threading.local()
        self._connections = {}  # thread ident -> connection, to close them all
        self._lock = threading.Lock()

    # -- connections -------------------------------------------------------------------

    def _connect(self):
        if self.engine == "postgresql":
            import psycopg
            from psycopg.rows import dict_row

            options = {"connect_timeout": self.connect_timeout}
            if "connect_timeout" in self.url:
                options = {}
            try:
                conn = psycopg.connect(self.url, autocommit=True, row_factory=dict_row, **options)
            except psycopg.OperationalError as error:
                raise Unavailable("database") from error
            recovered("database")
            return conn
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        # check_same_thread=False only so close_all() may close it; one thread uses it.
        conn = sqlite3.connect(
            self.path,
            isolation_level=None,
            timeout=10,  # SQLite's busy wait: for writers that do not queue (another program)
            check_same_thread=False,
            factory=_SQLiteConnection,
        )
        if self.path != ":memory:":
            conn.writer = os.open(self.path + "-writer", os.O_RDWR | os.O_CREAT, 0o600)
        conn.execute("PRAGMA foreign_keys = ON")
        _use_wal(conn)
        conn.execute("PRAGMA synchronous = NORMAL")
        return conn

    def connection(self):
        """This thread's connection, opened (or reopened after a failure) on demand."""
        local = self._local
        conn = getattr(local, "conn", None)
        if conn is None or (self.engine == "postgresql" and conn.closed):
            conn = self._connect()
            local.conn, local.depth = conn, 0
            with self._lock:
                self._forget_dead_threads()
                self._connections[threading.get_ident()] = conn
        return conn

    def _drop(self, conn) -> None:
        """Forget this thread's connection (found broken); the next use opens another."""
        if getattr(self._local, "conn", None) is conn:
            self._local.conn = None
            with self._lock:
                self._connections.pop(threading.get_ident(), None)
        with suppress(Exception):  # it is broken: closing only frees the memory
            conn.close()

    def _pg(self, run):
        """``run(connection)`` on PostgreSQL, surviving a connection that broke while idle.

        Outside a transaction a broken connection is replaced and ``run`` tried once more
        (after a server restart every idle connection fails once); inside one the
        transaction's work is gone with the connection, so the request fails (503).
        """
        import psycopg

        conn = self.connection()
        try:
            return run(conn)
        except psycopg.OperationalError as error:
            if not conn.closed:
                raise  # the server answered with an error: not a lost connection
            self._drop(conn)
            if self._local.depth:
                raise Unavailable("database") from error
        conn = self.connection()
        try:
            return run(conn)
        except psycopg.OperationalError as error:
            if not conn.closed:
                raise
            self._drop(conn)
            raise Unavailable("database") from error

    def _in_transaction(self, conn, sql: str) -> None:
        """A statement of an open transaction (COMMIT, savepoints): never run twice."""
        if self.engine == "sqlite":
            conn.execute(sql)
            return
        import psycopg

        try:
            conn.execute(sql)
        except psycopg.OperationalError as error:
            if not conn.closed:
                raise
            self._drop(conn)
            raise Unavailable("database") from error

    def _forget_dead_threads(self):
        """Close the connections of threads that have ended (called under the lock)."""
        alive = {t.ident for t in threading.enumerate()}
        for ident in [i for i in self._connections if i not in alive]:
            with suppress(Exception):  # a dead thread's connection may already be gone
                self._connections.pop(ident).close()

    def close(self):
        """Close this thread's connection."""
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            self._local.conn = None
            with self._lock:
                self._connections.pop(threading.get_ident(), None)
            conn.close()

    def close_all(self):
        """Close every connection this object opened (tests, shutdown)."""
        with self._lock:
            conns = list(self._connections.values())
            self._connections.clear()
        for conn in conns:
            with suppress(Exception):  # one that is already broken needs no closing
                conn.close()
        self._local = threading.local()

    # -- statements --------------------------------------------------------------------

    def _run(self, sql: str, params):
        local = self._local
        local.statements = getattr(local, "statements", 0) + 1
        if _is_write(sql):
            local.writes = getattr(local, "writes", 0) + 1
        params = _adapt(params)
        if self.engine == "postgresql":
            statement = translate(sql)
            return self._pg(lambda conn: conn.execute(statement, params))
        return self.connection().execute(for_sqlite(sql), params)

    def _has_rows(self, cur) -> bool:
        """Whether the statement answered rows (a SELECT, or a write with RETURNING).

        psycopg's ``description`` builds a Column object per column on every read (a tenth
        of a millisecond for a wide row); the result's status says the same for nothing.
        """
        if self.engine == "sqlite":
            return cur.description is not None
        result = cur.pgresult
        return result is not None and result.status == self._pg_tuples_ok

    def _dicts(self, cur, rows) -> list[dict]:
        """Rows as dicts: psycopg's dict_row already made them, SQLite's tuples get names."""
        if self.engine != "sqlite":
            return rows
        names = [column[0] for column in cur.description]
        return [dict(zip(names, row, strict=True)) for row in rows]

    @_queued_when_alone
    def query(self, sql: str, params=None) -> list[dict]:
        """Every row of a statement, as dicts."""
        cur = self._run(sql, params)
        try:
            if not self._has_rows(cur):
                return []
            return self._dicts(cur, cur.fetchall())
        finally:
            cur.close()

    @_queued_when_alone
    def one(self, sql: str, params=None) -> dict | None:
        """The first row of a statement, or None."""
        cur = self._run(sql, params)
        try:
            row = cur.fetchone() if self._has_rows(cur) else None
            return None if row is None else self._dicts(cur, [row])[0]
        finally:
            cur.close()

    def value(self, sql: str, params=None):
        """The first column of the first row, or None."""
        row = self.one(sql, params)
        return None if row is None else next(iter(row.values()))

    def _lone_write(self, sql: str) -> bool:
        """Whether ``sql`` writes to SQLite outside a transaction (it then needs one, to
        queue for the write lock)."""
        return self.engine == "sqlite" and not getattr(self._local, "depth", 0) and _is_write(sql)

    @_queued_when_alone
    def execute(self, sql: str, params=None) -> int:
        """Run a statement; answer how many rows it changed."""
        cur = self._run(sql, params)
        try:
            if self._has_rows(cur):
                cur.fetchall()  # RETURNING rows must be read before the commit
            return cur.rowcount
        finally:
            cur.close()

    @_queued_when_alone
    def execute_many(self, sql: str, rows) -> None:
        """Run one statement for each parameter mapping in ``rows``."""
        rows = [_adapt(r) for r in rows]
        local = self._local
        local.statements = getattr(local, "statements", 0) + 1
        local.writes = getattr(local, "writes", 0) + 1
        if self.engine == "postgresql":
            statement = translate(sql)

            def run(conn):
                with conn.cursor() as cur:
                    cur.executemany(statement, rows)

            self._pg(run)
        else:
            self.connection().executemany(for_sqlite(sql), rows)

    @contextmanager
    def transaction(self):
        """All statements in the block commit together or not at all.

        SQLite takes the write lock up front (``BEGIN IMMEDIATE``), so a transaction that
        reads and then writes never fails half-way on "database is locked"; its writers
        queue for it first (``_queued``).
        """
        conn = self.connection()
        if self.engine == "sqlite" and self._local.depth == 0:
            with _queued(conn), self._transaction(conn):
                yield self
        else:
            with self._transaction(conn):
                yield self

    @contextmanager
    def _transaction(self, conn):
        local = self._local
        depth = local.depth
        if depth == 0 and self.engine == "postgresql":
            self._pg(lambda c: c.execute("BEGIN"))  # a broken idle connection is replaced
            conn = local.conn
        elif depth == 0:
            conn.execute("BEGIN IMMEDIATE")
        else:
            self._in_transaction(conn, f"SAVEPOINT sp{depth}")
        local.depth = depth + 1
        try:
            yield self
        except BaseException:
            local.depth = depth
            if self.engine == "postgresql" and conn.closed:
                raise
            undo = "ROLLBACK" if depth == 0 else f"ROLLBACK TO SAVEPOINT sp{depth}"
            self._in_transaction(conn, undo)
            raise
        else:
            local.depth = depth
            self._in_transaction(conn, "COMMIT" if depth == 0 else f"RELEASE SAVEPOINT sp{depth}")

    def lock(self, name: str) -> None:
        """Serialise transactions that take the same named lock, until the transaction ends.

        SQLite needs nothing: ``BEGIN IMMEDIATE`` already lets one writer in at a time.
        """
        if self.engine == "postgresql":
            key = int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big", signed=True)
            self.execute("SELECT pg_advisory_xact_lock(:key)", {"key": key})

    def stats(self) -> dict:
        """Statements and writes run by this thread so far."""
        local = self._local
        return {
            "statements": getattr(local, "statements", 0),
            "writes": getattr(local, "writes", 0),
        }


class _SQLiteConnection(sqlite3.Connection):
    """A SQLite connection with its own handle on the database's ``-writer`` lock file."""

    writer: int | None = None

    def close(self):
        if self.writer is not None:
            os.close(self.writer)
            self.writer = None
        super().close()


@contextmanager
def _queued(conn):
    """Hold the SQLite database's writer lock for the block: its writers queue here.

    SQLite's own wait for its write lock sleeps 1, 2, 5, 10... up to 100 ms between tries,
    so under load the lock sat free while every writer slept, and a writer in another
    process (the worker) lost nearly every race to the web's threads. Each connection holds
    its own handle on ``<database>-writer``, and ``flock`` wakes the next writer, thread or
    process, the moment the lock is released. Like a PostgreSQL row lock it waits as long as
    the holder takes: a transaction of ours, short by design. An in-memory database has no
    file to queue on and needs none.
    """
    if conn.writer is None:
        yield
        return
    fcntl.flock(conn.writer, fcntl.LOCK_EX)
    try:
        yield
    finally:
        fcntl.flock(conn.writer, fcntl.LOCK_UN)


def _use_wal(conn, seconds: float = 2.0) -> None:
    """Put a SQLite file in WAL mode (it persists in the file: usually already done).

    Switching needs the file to itself, and SQLite answers "database is locked" at once,
    without waiting out its busy timeout, when it sees that waiting could deadlock: two
    workers, or two ``flask db upgrade``, starting together on a new database. Such a
    refusal is retried for a couple of seconds; one that waited out the timeout is final.
    """
    deadline = time.monotonic() + seconds
    while True:
        try:
            if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) or time.monotonic() > deadline:
                raise
            time.sleep(0.02)  # back off before the next try; bounded by the deadline


def _adapt(params):
    """Booleans become 0/1: both engines store flags as integers."""
    if not params:
        return {}
    if isinstance(params, dict):
        return {k: int(v) if isinstance(v, bool) else v for k, v in params.items()}
    return [int(v) if isinstance(v, bool) else v for v in params]


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


_SQLITE_UNIQUE = re.compile(r"UNIQUE constraint failed: \w+\.(\w+)")
_PG_UNIQUE_KEY = re.compile(r"Key \((?:lower\()?(\w+)")


def unique_violation(error: BaseException) -> str | None:
    """The column whose unique constraint ``error`` reports, or None for any other error.

    A check-then-insert inside a transaction can still lose a race on PostgreSQL (read
    committed): the constraint decides, and this names what it refused on either engine.
    """
    if isinstance(error, sqlite3.IntegrityError):
        match = _SQLITE_UNIQUE.search(str(error))
        return match.group(1) if match else None
    if type(error).__name__ == "UniqueViolation":  # psycopg.errors.UniqueViolation
        detail = getattr(getattr(error, "diag", None), "message_detail", None) or ""
        match = _PG_UNIQUE_KEY.search(detail)
        return match.group(1) if match else "value"
    return None
