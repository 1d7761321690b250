"""The engine: a database URL and its per-thread connections, the verbs on them, and
transactions (nested ones are savepoints). See the package's docstring."""

import hashlib
import os
import sqlite3
import threading
from contextlib import contextmanager, suppress
from functools import wraps
from pathlib import Path

from shop.db.sql import adapt, for_sqlite, in_list, is_write, translate
from shop.db.sqlite import AUTOCHECKPOINT_PAGES, Checkpointer, SQLiteConnection, queued, use_wal
from shop.outages import Unavailable, recovered


def _queued_when_alone(method):
    """Run a SQLite write made outside a transaction in one of its own, so that it queues
    for the write lock like every other writer (``queued``)."""

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
        self.checkpointer = None  # a SQLite file's WAL checkpoints (shop/db/sqlite.py)
        if url.startswith(("postgresql://", "postgres://")):
            from psycopg.pq import ExecStatus

            self.engine = "postgresql"
            self._pg_tuples_ok = ExecStatus.TUPLES_OK
        elif url.startswith("sqlite:///"):
            self.engine = "sqlite"
            self.path = url.removeprefix("sqlite:///")
            if self.path != ":memory:":
                self.checkpointer = Checkpointer(self.path)
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
            factory=SQLiteConnection,
        )
        if self.path != ":memory:":
            conn.writer = os.open(self.path + "-writer", os.O_RDWR | os.O_CREAT, 0o600)
        conn.execute("PRAGMA foreign_keys = ON")
        use_wal(conn)
        conn.execute("PRAGMA synchronous = NORMAL")
        if self.checkpointer is not None:  # its checkpoints, after the commit
            conn.execute(f"PRAGMA wal_autocheckpoint = {AUTOCHECKPOINT_PAGES}")
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

    def plan_each_statement(self) -> None:
        """Plan every statement of the open transaction for its own parameters (PostgreSQL).

        For a bulk write into tables it grows: psycopg prepares a statement run five times,
        and PostgreSQL may then switch to a generic plan costed on the tables' statistics as
        they were before the transaction (an empty product table: a sequential scan), which
        every later row pays for more as the transaction adds rows. 10,000 rows imported into
        an empty shop took 35-37 s that way and 12.7 s planned each time (docs/performance.md,
        catalogue import). SQLite plans each statement anyway.
        """
        if self.engine == "postgresql":
            self.execute("SET LOCAL plan_cache_mode = force_custom_plan")

    def analyze(self, full: bool = False, tables: tuple[str, ...] = ()) -> None:
        """Refresh the query planner's statistics: after an upgrade or a bulk write.

        SQLite never gathers them by itself, and without them it picks the wrong index for
        a filtered, sorted list (sorting the whole table). ``full`` runs ``ANALYZE``,
        otherwise ``PRAGMA optimize`` (only the tables this connection read whose statistics
        are stale or missing). PostgreSQL analyzes ``tables``, or every table of this schema
        (autovacuum also does, later).
        """
        conn = self.connection()
        if self.engine == "sqlite":
            conn.execute("ANALYZE" if full else "PRAGMA optimize")
            return
        sql = "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
        marks, names = in_list("t", tables)
        if tables:
            sql += f" AND tablename IN {marks}"
        for table in self.query(sql, names):
            name = table["tablename"].replace('"', '""')  # a name from the catalogue, quoted
            conn.execute(f'ANALYZE "{name}"')

    def close_all(self):
        """Close every connection this object opened (tests, shutdown)."""
        with self._lock:
            conns = list(self._connections.values())
            self._connections.clear()
        for conn in conns:
            with suppress(Exception):  # one that is already broken needs no closing
                conn.close()
        if self.checkpointer is not None:
            self.checkpointer.close()
        self._local = threading.local()

    # -- statements --------------------------------------------------------------------

    def _run(self, sql: str, params):
        local = self._local
        local.statements = getattr(local, "statements", 0) + 1
        if is_write(sql):
            local.writes = getattr(local, "writes", 0) + 1
        params = adapt(params)
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
        return self.engine == "sqlite" and not getattr(self._local, "depth", 0) and is_write(sql)

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
        rows = [adapt(r) for r in rows]
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
        queue for it first (``queued``).
        """
        conn = self.connection()
        if self.engine == "sqlite" and self._local.depth == 0:
            with queued(conn), self._transaction(conn):
                yield self
            if self.checkpointer is not None:  # out of the queue: no writer waits for it
                self.checkpointer.committed()
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
            local.marks = set()
        elif depth == 0:
            conn.execute("BEGIN IMMEDIATE")
            local.marks = set()
        else:
            self._in_transaction(conn, f"SAVEPOINT sp{depth}")
        local.depth = depth + 1
        try:
            yield self
        except BaseException:
            local.depth = depth
            local.marks = set()  # what was marked may have been rolled back
            if self.engine == "postgresql" and conn.closed:
                raise
            undo = "ROLLBACK" if depth == 0 else f"ROLLBACK TO SAVEPOINT sp{depth}"
            self._in_transaction(conn, undo)
            raise
        else:
            local.depth = depth
            self._in_transaction(conn, "COMMIT" if depth == 0 else f"RELEASE SAVEPOINT sp{depth}")

    def first_in_transaction(self, name: str) -> bool:
        """Whether ``name`` is new to the open transaction (and mark it): True once per
        transaction, and again after any rollback (of a savepoint too), which may have undone
        what the first call wrote; always True outside a transaction."""
        local = self._local
        if not getattr(local, "depth", 0):
            return True
        if name in local.marks:
            return False
        local.marks.add(name)
        return True

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
