"""SQLite's side: a connection with its own handle on the writer lock file, the queue of
writers on that lock, and WAL mode."""

import fcntl
import os
import sqlite3
import time
from contextlib import contextmanager, suppress


class SQLiteConnection(sqlite3.Connection):
    """A SQLite connection with its own handle on the database's ``-writer`` lock file."""

    writer: int | None = None

    def close(self):
        # SQLite's docs: run PRAGMA optimize just before closing a connection, so that the
        # planner's statistics follow the data (cheap: it analyzes only what needs it).
        with suppress(sqlite3.Error):  # a broken connection closes anyway
            self.execute("PRAGMA optimize")
        if self.writer is not None:
            os.close(self.writer)
            self.writer = None
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
