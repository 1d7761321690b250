"""The engine: a database URL and its per-thread connections, the verbs on them, and
transactions (nested ones are savepoints). See the package's docstring."""

import hashlib
import logging
import sqlite3
import threading
from contextlib import ExitStack, contextmanager, suppress
from functools import wraps
from pathlib import Path

from shop.db.sql import adapt, for_sqlite, in_list, is_write, translate
from shop.db.sqlite import (
    AUTOCHECKPOINT_PAGES,
    Checkpointer,
    SQLiteConnection,
    busy,
    busy_timeout,
    open_writer,
    queued,
    use_wal,
)
from shop.outages import Unavailable, recovered

log = logging.getLogger("shop")

SQLITE_BUSY = 5  # sqlite3's error code when another connection holds the lock past the wait


def _queued_when_alone(method):
    """Run a SQLite write made outside a transaction in one of its own, so that it queues
    for the write lock like every other writer (``sqlite.queued``)."""

    @wraps(method)
    def run(self, sql: str, *args):
        if self._lone_write(sql):
            with self.transaction():
                return method(self, sql, *args)
        return method(self, sql, *args)

    return run


class Database:
    """A database URL and the per-thread connections to it.

    ``statement_timeout`` (seconds, None for none) bounds each statement and, on SQLite, the
    wait for the write lock; ``time_limit`` changes it for one thread's block.
    """

    def __init__(self, url: str, connect_timeout: int = 3, statement_timeout: float | None = None):
        self.url = url
        self.connect_timeout = connect_timeout
        self.statement_timeout = statement_timeout
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

            from shop.db import postgres

            params = postgres.connect_params(self.url, self.connect_timeout, self.limit())
            try:
                conn = postgres.Connection.open(params, autocommit=True, row_factory=dict_row)
            except psycopg.OperationalError as error:
                raise Unavailable("database") from error
            recovered("database")
            return conn
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        # check_same_thread=False only so close_all() may close it; one thread uses it.
        limit = self.limit()
        conn = sqlite3.connect(
            self.path,
            isolation_level=None,
            # SQLite's busy wait: for writers that do not queue (another program).
            timeout=busy_timeout(limit) / 1000,
            check_same_thread=False,
            factory=SQLiteConnection,
        )
        if self.path != ":memory:":
            conn.writer, conn.writer_path = open_writer(self.path), self.path
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
        """``run(connection)`` on PostgreSQL, within the thread's time limit, surviving a
        connection that broke while idle.

        Outside a transaction a broken connection is replaced and ``run`` tried once more
        (after a server restart every idle connection fails once); inside one the
        transaction's work is gone with the connection, so the request fails (503). A
        statement past its limit (the server's statement timeout, or no answer at all) is
        never run again: 503, and the connection is replaced.
        """
        import psycopg

        for retry in (not getattr(self._local, "depth", 0), False):
            conn = self.connection()
            try:
                return conn.watched(run, self.limit())
            except psycopg.OperationalError as error:
                self._lost(conn, error, retry)
        raise AssertionError("unreachable: the second try returns or raises")

    def _lost(self, conn, error, retry: bool) -> None:
        """After ``error`` on ``conn``: raise what the caller sees, or return when the
        connection was found broken and ``retry`` allows another try on a new one."""
        from shop.db import postgres

        problem = postgres.problem(conn, error, self.limit())
        if problem is None:
            raise error  # the server answered with an error: the connection is fine
        # Replaced: a new connection, once the database answers again, says so in the log.
        self._drop(conn)
        if not (retry and problem == postgres.LOST):
            raise Unavailable("database", problem) from error

    def _in_transaction(self, conn, sql: str) -> None:
        """A statement of an open transaction (COMMIT, savepoints): never run twice."""
        if self.engine == "sqlite":
            conn.execute(sql)
            return
        import psycopg

        if sql != "COMMIT":  # a savepoint's statement: what was sent must have succeeded
            self._end_pipeline()
        try:
            conn.watched(lambda c: c.execute(sql), self.limit())
        except psycopg.OperationalError as error:
            self._lost(conn, error, retry=False)
        if sql == "COMMIT":  # sent with the writes queued before it, if any
            self._end_pipeline()

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

    def analyze_grown(self, tables: tuple[str, ...]) -> None:
        """Between the transactions of a bulk write (PostgreSQL): ``ANALYZE`` each of
        ``tables`` whose rows written since its last ``ANALYZE`` outnumber the rows it had
        then, so at most once each time it doubles.

        The plans PostgreSQL keeps for a session (psycopg's prepared statements, the
        triggers' PL/pgSQL) may be generic ones, costed once on the statistics and size of
        the moment; on a table that has grown tenfold since, a sequential scan chosen for a
        few rows gets dearer with every row (docs/performance.md, "The PostgreSQL import").
        ``ANALYZE`` gives the planner the new size and drops those plans. SQLite plans each
        statement anyway.
        """
        if self.engine != "postgresql" or not tables:
            return
        marks, names = in_list("t", tables)
        grown = self.query(
            "SELECT s.relname FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid"
            f" WHERE s.schemaname = current_schema() AND s.relname IN {marks}"
            " AND s.n_mod_since_analyze > GREATEST(c.reltuples, 0)",
            names,
        )
        self._analyze_each([row["relname"] for row in grown])

    def analyze(self, full: bool = False, tables: tuple[str, ...] = ()) -> None:
        """Refresh the query planner's statistics: after an upgrade or a bulk write.

        SQLite never gathers them by itself, and without them it picks the wrong index for
        a filtered, sorted list (sorting the whole table). ``full`` runs ``ANALYZE``,
        otherwise ``PRAGMA optimize`` (only the tables this connection read whose statistics
        are stale or missing). PostgreSQL analyzes ``tables``, or every table of this schema
        (autovacuum also does, later), each within the thread's time limit.
        """
        conn = self.connection()
        if self.engine == "sqlite":
            # It writes sqlite_stat1: it queues for the writer lock as every write does (bare,
            # it met a checkout's transaction after a large import with "database is locked").
            with self.transaction():
                conn.execute("ANALYZE" if full else "PRAGMA optimize")
            return
        sql = "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
        marks, names = in_list("t", tables)
        if tables:
            sql += f" AND tablename IN {marks}"
        self._analyze_each([table["tablename"] for table in self.query(sql, names)])

    def _analyze_each(self, tables: list[str]) -> None:
        """``ANALYZE`` each table (PostgreSQL), each within the thread's time limit."""
        for table in tables:
            name = table.replace('"', '""')  # a name from the catalogue, quoted
            try:
                self.execute(f'ANALYZE "{name}"')
            except Unavailable as error:  # after a committed write: stale statistics, no error
                log.warning("ANALYZE %s: the database %s; left to autovacuum", name, error.problem)
                return

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
            self._end_pipeline()  # a statement whose answer is read: the ones sent go first
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
            from shop.db import postgres

            statement = translate(sql)
            self._end_pipeline()
            # In parts, each watched like one statement (postgres.MANY_ROWS).
            for start in range(0, len(rows), postgres.MANY_ROWS):
                part = rows[start : start + postgres.MANY_ROWS]

                def run(conn, part=part):
                    with conn.cursor() as cur:
                        cur.executemany(statement, part)

                self._pg(run)
        else:
            self.connection().executemany(for_sqlite(sql), rows)

    # -- writes sent without waiting (PostgreSQL's pipeline mode) -------------------------

    def send(self, sql: str, params=None) -> None:
        """Run a write whose answer nobody reads, inside a transaction whose failure it
        would be anyway: on PostgreSQL it is queued in the connection's pipeline and goes to
        the server with the next ``send``s and the COMMIT, in one round trip, instead of one
        round trip each. Its error, if any, is raised later in the transaction: by the
        next statement that is not sent (which sends the queue first), by a later ``send``
        that finds it already answered, or by the commit; the transaction then rolls back,
        as for any error.
        Anywhere else (SQLite, outside a transaction) it is ``execute``."""
        if not self._sending(sql, [params], many=False):
            self.execute(sql, params)

    def send_many(self, sql: str, rows) -> None:
        """``execute_many`` as ``send`` runs a statement: queued in the pipeline."""
        if not self._sending(sql, rows, many=True):
            self.execute_many(sql, rows)

    def _sending(self, sql: str, rows, many: bool) -> bool:
        """Queue ``sql`` for ``rows`` in the pipeline (``send``); False when it is to run
        at once instead (not PostgreSQL, or no transaction open)."""
        local = self._local
        if self.engine != "postgresql" or not getattr(local, "depth", 0):
            return False
        local.statements = getattr(local, "statements", 0) + 1
        local.writes = getattr(local, "writes", 0) + 1
        statement, rows = translate(sql), [adapt(r) for r in rows]
        if many:
            self._pg(lambda conn: self._pipeline(conn).cursor().executemany(statement, rows))
        else:
            self._pg(lambda conn: self._pipeline(conn).execute(statement, rows[0]))
        return True

    def _pipeline(self, conn):
        """``conn`` in pipeline mode until the next statement that is not sent, or the
        transaction's end (entered by the first ``send``)."""
        local = self._local
        if getattr(local, "pipeline", None) is None:
            local.pipeline = ExitStack()
            local.pipeline.enter_context(conn.pipeline())
        return conn

    def _end_pipeline(self, failed: BaseException | None = None) -> None:
        """Leave pipeline mode, if in it: send what is queued and wait for every answer,
        raising the first error (not when the transaction has ``failed`` already)."""
        pipeline = getattr(self._local, "pipeline", None)
        if pipeline is None:
            return
        self._local.pipeline = None
        conn = self._local.conn
        if failed is not None:
            with suppress(Exception):  # the transaction is rolled back (or its link is gone)
                pipeline.__exit__(type(failed), failed, failed.__traceback__)
            return
        import psycopg

        try:
            conn.watched(lambda _: pipeline.close(), self.limit())
        except psycopg.OperationalError as error:
            self._lost(conn, error, retry=False)

    @contextmanager
    def transaction(self):
        """All statements in the block commit together or not at all.

        SQLite takes the write lock up front (``BEGIN IMMEDIATE``), so a transaction that
        reads and then writes never fails half-way on "database is locked"; its writers
        queue for it first (``queued``).
        """
        conn = self.connection()
        if self.engine == "sqlite" and self._local.depth == 0:
            with queued(conn, self.limit()), self._transaction(conn):
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
            local.memos = {}
            local.after = []
        elif depth == 0:
            try:
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as error:  # another program held SQLite's lock
                if error.sqlite_errorcode & 0xFF != SQLITE_BUSY:  # and its extended codes
                    raise
                raise Unavailable("database", busy(self.limit())) from error
            local.marks = set()
            local.memos = {}
            local.after = []
        else:
            self._in_transaction(conn, f"SAVEPOINT sp{depth}")
        local.depth = depth + 1
        try:
            yield self
        except BaseException as error:
            local.depth = depth
            local.marks = set()  # what was marked may have been rolled back
            local.memos = {}
            if depth == 0:
                local.after = []
            if self.engine == "postgresql":
                self._end_pipeline(failed=error)
                if conn.closed:
                    raise
            undo = "ROLLBACK" if depth == 0 else f"ROLLBACK TO SAVEPOINT sp{depth}"
            self._in_transaction(conn, undo)
            raise
        else:
            local.depth = depth
            if depth == 0 and getattr(local, "pipeline", None) is not None:
                self._commit_pipelined(conn)
            else:
                end = "COMMIT" if depth == 0 else f"RELEASE SAVEPOINT sp{depth}"
                self._in_transaction(conn, end)
            if depth == 0:
                after, local.after = local.after, []
                for action in after:
                    action()

    def _commit_pipelined(self, conn) -> None:
        """COMMIT behind the writes still in the pipeline, one round trip for all; when one
        of them failed the server skipped the rest and the COMMIT: roll back, and raise."""
        from psycopg.pq import TransactionStatus

        try:
            self._in_transaction(conn, "COMMIT")
        except BaseException:
            self._local.pipeline = None  # ended by the failed sync
            if not conn.closed and conn.info.transaction_status != TransactionStatus.IDLE:
                self._in_transaction(conn, "ROLLBACK")
            raise

    def after_commit(self, action) -> None:
        """Run ``action()`` once the open transaction has committed (at once outside one);
        never after a rollback. It must not raise: the transaction is already committed."""
        if getattr(self._local, "depth", 0):
            self._local.after.append(action)
        else:
            action()

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

    def once_in_transaction(self, name: str, compute):
        """``compute()``'s answer, computed once per open transaction under ``name`` (again
        after any rollback); computed each time outside a transaction."""
        local = self._local
        if not getattr(local, "depth", 0):
            return compute()
        if name not in local.memos:
            local.memos[name] = compute()
        return local.memos[name]

    def forget_in_transaction(self, name: str) -> None:
        """Drop what ``once_in_transaction`` kept under ``name`` (its source was written)."""
        getattr(self._local, "memos", {}).pop(name, None)

    def lock(self, name: str) -> None:
        """Serialise transactions that take the same named lock, until the transaction ends.

        SQLite needs nothing: ``BEGIN IMMEDIATE`` already lets one writer in at a time.
        """
        if self.engine == "postgresql":
            key = int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big", signed=True)
            self.execute("SELECT pg_advisory_xact_lock(:key)", {"key": key})

    def limit(self) -> float | None:
        """Seconds a statement of this thread may take (None: no limit)."""
        return getattr(self._local, "limit", self.statement_timeout)

    @contextmanager
    def time_limit(self, seconds: float | None):
        """Let this thread's statements in the block each take ``seconds`` (None: as long
        as they take), for the few jobs that legitimately run long ones: migrations, an
        upgrade waiting for another. Entered outside a transaction."""
        local = self._local
        if getattr(local, "depth", 0):
            raise RuntimeError("time_limit is entered outside a transaction")
        before = self.limit()
        local.limit = seconds
        try:
            self._set_limit(seconds)
            yield
        finally:
            local.limit = before
            try:
                self._set_limit(before)
            except Exception:  # noqa: BLE001 - the connection is gone: its next one starts right
                conn = getattr(local, "conn", None)
                if conn is not None:
                    self._drop(conn)

    def _set_limit(self, seconds: float | None) -> None:
        """Give this thread's connection the limit ``seconds``, as its settings say it."""
        if self.engine == "postgresql":
            from shop.db import postgres

            ms = postgres.milliseconds(seconds)
            self.execute(f"SET statement_timeout = {ms}")  # an int: no parameter needed
        else:
            self.connection().execute(f"PRAGMA busy_timeout = {busy_timeout(seconds)}")

    def stats(self) -> dict:
        """Statements and writes run by this thread so far."""
        local = self._local
        return {
            "statements": getattr(local, "statements", 0),
            "writes": getattr(local, "writes", 0),
        }
