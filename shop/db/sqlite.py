"""SQLite's side: a connection with its own handle on the writer lock file, the queue of
writers on that lock, WAL mode, and the WAL's checkpoints."""

import fcntl
import os
import queue
import sqlite3
import threading
import time
from contextlib import contextmanager, suppress
from pathlib import Path

from shop.outages import Unavailable

# Our connections leave the WAL's checkpoints to ``Checkpointer``; SQLite's own, run by the
# commit that crosses this many pages (40 MB), stays only as a backstop.
AUTOCHECKPOINT_PAGES = 10_000


class Connection(sqlite3.Connection):
    """A SQLite connection with its own handle on the database's ``-writer`` lock file."""

    writer: int | None = None
    writer_path: str | None = None  # the database's path, to open another handle

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
def queued(conn, timeout: float | None = None):
    """Hold the SQLite database's writer lock for the block (``take_writer``); raise
    ``Unavailable`` (503) when it was not free within ``timeout`` seconds."""
    if not take_writer(conn, timeout):
        raise Unavailable("database", busy(timeout))
    try:
        yield
    finally:
        if conn.writer is not None:
            fcntl.flock(conn.writer, fcntl.LOCK_UN)
            _in_process(conn.writer_path).release()


def take_writer(conn, timeout: float | None) -> bool:
    """Take the SQLite database's writer lock: its writers queue here. False when it was
    not free within ``timeout`` seconds (None: wait as long as it takes).

    A process lock first, then ``flock`` on ``<database>-writer`` (waited for on a
    ``_Waiter`` thread, as ``flock`` cannot time out). An in-memory database needs no queue.
    Why not SQLite's own wait: docs/performance.md, "The SQLite writer lock".
    """
    if conn.writer is None:
        return True
    deadline = None if timeout is None else time.monotonic() + timeout
    process = _in_process(conn.writer_path)
    if not process.acquire(timeout=-1 if timeout is None else timeout):
        return False
    try:
        if timeout is None:
            fcntl.flock(conn.writer, fcntl.LOCK_EX)
            return True
        try:
            fcntl.flock(conn.writer, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            pass
        # Under the process's lock: one writer of the process at a time gets here.
        waiter = _PARKED.pop(conn.writer_path, None)
        if waiter is not None and waiter.adopt():  # still queued since the last one gave up
            os.close(conn.writer)
            conn.writer = waiter.handle
        else:
            waiter = _Waiter(conn.writer, conn.writer_path)
        if waiter.wait(max(0.0, deadline - time.monotonic())):
            return True
    except BaseException:
        process.release()
        raise
    # The waiter stays queued with the old handle, for the next writer to take over (one
    # waiting thread per database however long the lock is held), or it gives the lock back
    # at once when it gets it; this connection queues on a new handle from now on.
    _PARKED[conn.writer_path] = waiter
    conn.writer = open_writer(conn.writer_path)
    process.release()
    return False


_PROCESS_LOCKS: dict[str, threading.Lock] = {}
_PARKED: dict[str, "_Waiter"] = {}  # path -> a wait given up, still queued at the file


def _in_process(path: str) -> threading.Lock:
    """This process's lock before the writer lock of the database at ``path``."""
    lock = _PROCESS_LOCKS.get(path)
    if lock is None:
        lock = _PROCESS_LOCKS.setdefault(path, threading.Lock())  # one wins, under the GIL
    return lock


def busy(limit: float | None) -> str:
    """What a write that could not have the lock within ``limit`` seconds is told."""
    return f"is busy: another write held it for over {limit:g} s"


def busy_timeout(limit: float | None) -> int:
    """SQLite's busy timeout in milliseconds for a limit in seconds (None: for ever)."""
    return 2**31 - 1 if limit is None else round(limit * 1000)


def open_writer(path: str) -> int:
    """A new handle on the writer lock file of the database at ``path``."""
    return os.open(path + "-writer", os.O_RDWR | os.O_CREAT, 0o600)


class _WaitLine:
    """The one thread of a process that waits at a database's writer lock file for its
    waiters, one after the other (at most one waits at a time: the process lock is held
    meanwhile, or the wait is parked). It is started by the first wait and ends after a
    minute without one, so a busy writer lock costs no thread start per wait."""

    IDLE_SECONDS = 60.0

    def __init__(self):
        self.waiters = queue.SimpleQueue()
        self.lock = threading.Lock()
        self.running = False

    def enter(self, waiter: "_Waiter") -> None:
        """Queue ``waiter``: the line's thread calls its ``take``."""
        with self.lock:
            self.waiters.put(waiter)
            if not self.running:
                self.running = True
                threading.Thread(target=self._run, name="sqlite-writer-wait", daemon=True).start()

    def _run(self) -> None:
        while True:
            try:
                waiter = self.waiters.get(timeout=self.IDLE_SECONDS)
            except queue.Empty:
                with self.lock:  # nobody can queue between this look and the end
                    if self.waiters.empty():
                        self.running = False
                        return
                continue
            waiter.take()


_LINES: dict[str, _WaitLine] = {}


def _line(path: str) -> _WaitLine:
    """The wait line of the database at ``path`` in this process."""
    line = _LINES.get(path)
    if line is None:
        line = _LINES.setdefault(path, _WaitLine())  # one wins, under the GIL
    return line


class _Waiter:
    """Waits for the writer lock on its database's ``_WaitLine`` thread, so that its caller
    may give up (and a later one take the wait over: ``adopt``)."""

    def __init__(self, handle: int, handle_path: str):
        self.handle = handle
        self.taken = threading.Event()
        self.abandoned = False
        self.finished = False  # it got the lock after all gave up, and gave it back
        self.lock = threading.Lock()
        _line(handle_path).enter(self)

    def take(self) -> None:
        fcntl.flock(self.handle, fcntl.LOCK_EX)
        with self.lock:
            if not self.abandoned:
                self.taken.set()
                return
            self.finished = True
        # Its caller gave up: hand the lock on and let the handle go.
        fcntl.flock(self.handle, fcntl.LOCK_UN)
        os.close(self.handle)

    def adopt(self) -> bool:
        """Wait on for a new caller, unless it is no longer waiting."""
        with self.lock:
            if not self.abandoned or self.finished:
                return False
            self.abandoned = False
            return True

    def wait(self, timeout: float) -> bool:
        """Whether the lock was taken within ``timeout`` seconds (then it is the caller's)."""
        if self.taken.wait(timeout):
            return True
        with self.lock:
            if self.taken.is_set():
                return True
            self.abandoned = True
        return False


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

    A passive checkpoint (which never blocks writers) copies the bulk while they go on;
    then, queued like a writer, a second one copies the few pages they wrote meanwhile, so
    the WAL is all copied and the next writer starts it over. A commit only counts. Why not
    SQLite's automatic checkpoint: docs/performance.md, "Checkout: the writer lock and the
    code's row".
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
        conn.writer, conn.writer_path = open_writer(self.path), self.path
        return conn

    def close(self) -> None:
        """Close the checkpoints' connection (waiting for a checkpoint that is running)."""
        with self._running:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
