"""PostgreSQL schemas built from ``schema.sql`` ahead of the tests that take one.

Every PostgreSQL case gets a schema of its own, and building one from ``schema.sql`` is
~0.2 s of DDL, a quarter of what a short case costs. A thread of the test process keeps a
couple built while the cases run (the server does the work, on the other core), and a case's
empty schema is swapped for a built one when its app is made with ``prepare=True``: the
empty schema is dropped and the built one renamed to its name, in one transaction, so the
case's URL is unchanged. Only the DDL and the migration records are done ahead; the case's
own ``load_schema`` then does what follows every upgrade (roles, totals, search index) on
its own clock, as before. Finished cases' schemas are dropped by the same thread.

A case never waits for the thread: with no schema ready it builds its own, as it always did.
What a case sees is the same either way (``tests/ops/test_migrations.py`` proves ``schema.sql``
equal to the migrations; this only changes when it runs).
"""

import queue
import secrets
import sys
import threading
from datetime import UTC, datetime

import psycopg

from shop import clock
from shop.schema import migrate

READY = 2  # schemas kept built; one is enough while cases take longer than a build

# Module state, not conftest's: test modules import ``tests.conftest`` a second time.
EMPTY: dict[str, str] = {}  # a fresh PostgreSQL URL -> its empty schema, until prepared
_POOLS: dict[str, "SchemaPool"] = {}


def pool(url: str) -> "SchemaPool":
    """The one pool of the test process for the PostgreSQL at ``url``."""
    if url not in _POOLS:
        _POOLS[url] = SchemaPool(url)
    return _POOLS[url]


def close() -> None:
    for each in _POOLS.values():
        each.close()


class SchemaPool:
    def __init__(self, url: str):
        self.url = url
        self.ready: queue.Queue[str] = queue.Queue()
        self.dropping: queue.Queue[str] = queue.Queue()
        self.wake = threading.Event()
        self.stopping = False
        self.broken = False
        self.failures = 0
        self.thread = threading.Thread(target=self._run, name="schema pool", daemon=True)
        self.thread.start()

    def take(self, schema: str) -> bool:
        """Give the empty ``schema`` a built one's content; False (nothing changed) when none
        is ready or ``schema`` is not empty (``DROP SCHEMA`` without CASCADE refuses)."""
        try:
            built = self.ready.get_nowait()
        except queue.Empty:
            return False
        self.wake.set()
        try:
            with psycopg.connect(self.url) as conn:
                conn.execute(f"DROP SCHEMA {schema}")
                conn.execute(f"ALTER SCHEMA {built} RENAME TO {schema}")
        except psycopg.Error:
            self.ready.put(built)
            return False
        return True

    def drop_later(self, schema: str) -> None:
        self.dropping.put(schema)
        self.wake.set()

    def close(self, timeout: float = 300) -> None:
        """Drop what is queued and every unused built schema, then end the thread."""
        self.stopping = True
        self.wake.set()
        self.thread.join(timeout)
        if self.thread.is_alive():
            _say(f"schemas left after {timeout} s")

    def _run(self) -> None:
        conn = None
        try:
            while True:
                try:
                    if conn is None or conn.closed:
                        conn = self._connect()
                    self.wake.clear()
                    self._drop_queued(conn)
                    if self.stopping:
                        break
                    if self.ready.qsize() < READY and not self.broken:
                        self._build(conn)
                        continue
                    self.wake.wait()
                except psycopg.Error as error:
                    if conn is not None and not conn.broken:
                        raise
                    _say(f"reconnecting: {error}")  # a lost connection: a new one
                    self.failures += 1
                    self.broken = self.broken or self.failures > 3
                    if self.failures > 10:
                        return
                    conn = None
            while not self.ready.empty():
                self.dropping.put(self.ready.get_nowait())
            self._drop_queued(conn)
        finally:
            if conn is not None:
                conn.close()

    def _connect(self):
        conn = psycopg.connect(self.url, autocommit=True)
        conn.execute("SET lock_timeout = '30s'")  # a case that left a lock behind
        conn.execute("SET synchronous_commit = off")  # as the cases' own (conftest.schema_url)
        return conn

    def _drop_queued(self, conn) -> None:
        while not self.dropping.empty():
            schema = self.dropping.get_nowait()
            try:
                conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
            except psycopg.Error as error:
                if conn.broken:
                    self.dropping.put(schema)  # again, on a new connection
                    raise
                _say(f"{schema} left: {error}")  # e.g. locked by what a case left running

    def _build(self, conn) -> None:
        schema = f"p_{secrets.token_hex(6)}"
        try:
            with conn.transaction():
                conn.execute(f"CREATE SCHEMA {schema}")
                conn.execute(f"SET LOCAL search_path = {schema}")
                conn.execute(migrate.SCHEMA_PATH.read_text())
                conn.execute(migrate.SCHEMA_PATH.with_suffix(".postgresql.sql").read_text())
                conn.execute(migrate.RECORDS_DDL)
                applied = clock.iso(datetime.now(UTC))
                with conn.cursor() as cursor:
                    cursor.executemany(
                        f"INSERT INTO {migrate.RECORDS} (version, name, checksum, applied_at)"
                        " VALUES (%s, %s, %s, %s)",
                        [
                            (m.version, m.name, m.checksum, applied)
                            for m in migrate.available("postgresql")
                        ],
                    )
        except psycopg.Error as error:
            self.broken = True  # e.g. a schema.sql being edited: the cases build their own
            _say(f"no more built schemas: {error}")
            return
        self.ready.put(schema)


def _say(message: str) -> None:
    """To the terminal, not to the output pytest captures for the case running meanwhile."""
    print(f"\ntests/pg_schemas.py: {message}", file=sys.__stderr__)
