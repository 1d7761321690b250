"""SQLite's side: a connection with its own handle on the writer lock file, the queue of
writers on that lock, WAL mode, and the WAL's checkpoints."""

import fcntl
import os
import sqlite3
import threading
import time
from contextlib import contextmanager, suppress
from pathlib import Path

# Our connections leave the WAL's checkpoints to ``Checkpointer``; SQLite's own, run by the
# commit that crosses this many pages (40 MB), stays only as a backstop.
AUTOCHECKPOINT_PAGES = 10_000


class Connection(sqlite3.Connection):
    """A SQLite connection with its own handle on the database's ``-writer`` lock file."""

    writer: int | None = None

    def close(self):
        if self.writer is not None:
            os.close(self.writer)
            self.writer = None
        super().close()


class SQLiteConnection(Connection):
    """The service's connection: its handle on the writer lock, and statistics kept."""

    def close(self):
        # SQLite's docs: run PRAGMA optimize just before closing a connection, so that the
        # planner's statistics follow the data (cheap: it analyzes only what needs it).
        with suppress(sqlite3.Error):  # a broken connection closes anyway
            self.execute("PRAGMA optimize")
        super().close()


@contextmanager
def queued(conn):
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


def use_wal(conn, seconds: float = 2.0) -> None:
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


class Checkpointer:
    """Copies the WAL back into the database file mostly outside the writer lock, from a
    thread of its own, every ``every`` committed write transactions of this process.

    SQLite's automatic checkpoint runs inside the commit that fills the WAL past 1,000
    pages: a checkout writes about 36, so one commit in 28 wrote 4 MB into the database file
    and synced it twice while it still held the writer lock (``queued``), and every writer
    queued behind it. Here a passive checkpoint (which never blocks writers) copies the bulk
    while they go on; then, queued like a writer, a second one copies the few pages they wrote
    meanwhile, so that the WAL is all copied and the next writer starts it over (a WAL never
    wholly copied is never reset: it grew to the 40 MB backstop). A commit only counts.
    """

    def __init__(self, path: str, every: int = 32):
        self.path = path
        self.uri = Path(path).resolve().as_uri() + "?mode=rw"  # never creates a missing file
        self.every = every
        self.thread = None  # the last checkpoint's thread (a test joins it)
        self._commits = 0
        self._running = threading.Lock()  # one checkpoint at a time, on one connection
        self._conn = None  # opened by the first checkpoint, kept: a connection costs a lot

    def committed(self) -> None:
        """Count a committed write transaction; every ``every``-th starts a checkpoint
        unless one is still running."""
        self._commits += 1  # threads may race on the count: a checkpoint a commit late
        if self._commits % self.every == 0 and self._running.acquire(blocking=False):
            self.thread = threading.Thread(target=self._run, name="sqlite-checkpoint", daemon=True)
            self.thread.start()

    def _run(self) -> None:
        try:
            # The file may be gone (a test's database removed): nothing to copy back.
            with suppress(OSError, sqlite3.Error):
                conn = self._conn = self._conn or self._connect()
                conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
                with queued(conn):
                    conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
        finally:
            self._running.release()

    def _connect(self) -> SQLiteConnection:
        # Used by one checkpoint's thread at a time, each a new thread.
        conn = sqlite3.connect(self.uri, uri=True, check_same_thread=False, factory=Connection)
        conn.writer = os.open(self.path + "-writer", os.O_RDWR | os.O_CREAT, 0o600)
        return conn

    def close(self) -> None:
        """Close the checkpoints' connection (waiting for a checkpoint that is running)."""
        with self._running:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
