"""PostgreSQL's side: how a connection is opened so that it cannot hang (connect timeout,
statement timeout, TCP keepalives), and the watch that cuts one whose server stops answering
in the middle of a statement.

The server ends a statement that runs past ``statement_timeout`` itself. A server that
answers nothing at all (frozen by SIGSTOP, a VM paused, a host gone) cannot: its kernel, or
nobody, acknowledges what we send, so neither the statement timeout nor TCP keepalives end
the wait, and a request on an open connection waited as long as the server was frozen
(issue 35: 30 s). So every statement is also watched from this side: ``WATCH``'s thread
shuts the socket of a connection down once its statement has run ``GRACE`` seconds past its
limit, and the blocked call fails at once (``Connection.cut`` says it was us). Keepalives
find an idle connection whose peer has gone before a request uses it.
"""

import contextlib
import os
import socket
import threading
import time
import weakref

import psycopg
from psycopg.conninfo import conninfo_to_dict

# Seconds past its statement's limit before a connection whose server answers nothing is cut:
# long enough for the server's own cancel to arrive first whenever the server is alive.
GRACE = 1.0
TICK = 0.25  # seconds between the watch's looks: a cut comes at most this late
# Rows per executemany call: each call is watched as one statement, so a bulk write is sent
# in parts that each fit a statement's limit.
MANY_ROWS = 100

# libpq's keepalives: an idle connection whose peer is gone is found within about 25 s
# (10 s idle, then 3 probes 5 s apart), and data left unacknowledged for 20 s ends it.
KEEPALIVES = {
    "keepalives": "1",
    "keepalives_idle": "10",
    "keepalives_interval": "5",
    "keepalives_count": "3",
    "tcp_user_timeout": "20000",
}


def connect_params(url: str, connect_timeout: int, statement_timeout: float | None) -> dict:
    """libpq's parameters for ``url``: its timeouts and keepalives ours unless the URL sets
    them; the statement timeout always ours.

    The statement timeout goes into the connection's startup ``options`` (no round trip),
    after any the URL carries: ``SHOP_DB_STATEMENT_TIMEOUT`` is the one limit, which the
    watch also enforces, whatever the URL, the role or the database say.
    """
    params = conninfo_to_dict(url)
    params.setdefault("connect_timeout", str(connect_timeout))
    for name, value in KEEPALIVES.items():
        params.setdefault(name, value)
    ours = f"-c statement_timeout={milliseconds(statement_timeout)}"
    params["options"] = f"{params['options']} {ours}" if params.get("options") else ours
    return params


LOST = "cannot be reached"  # the problem of a connection found broken


def problem(conn, error: psycopg.OperationalError, limit: float | None) -> str | None:
    """What ``error`` on ``conn`` says of the database, as ``outages.Unavailable`` words it:
    ``LOST`` for a broken connection, a time limit's words for a statement it ended; None
    when the server answered with an error of its own and the connection is fine."""
    if conn.cut or isinstance(error, psycopg.errors.QueryCanceled):
        if conn.cut or "statement timeout" in str(error):
            return f"did not answer within {limit:g} s"
        return "cancelled the statement"
    return LOST if conn.closed else None


def milliseconds(seconds: float | None) -> int:
    """A limit as PostgreSQL's ``statement_timeout`` takes it: 0 is none."""
    return 0 if seconds is None else max(1, round(seconds * 1000))


class Connection(psycopg.Connection):
    """A psycopg connection whose statements ``WATCH`` cuts at their deadline (``watched``)."""

    @classmethod
    def open(cls, params: dict, **options) -> "Connection":
        """Connect with ``params`` (``connect_params``), watched from the start."""
        conn = cls.connect(**params, **options)
        WATCH.keep(conn)
        return conn

    deadline: float | None = None  # time.monotonic() past which the statement is cut
    cut = False  # whether the watch cut it: the server did not answer in time

    def watched(self, run, limit: float | None):
        """``run(self)``, cut when it takes ``limit`` + ``GRACE`` seconds (None: no limit)."""
        if limit is None:
            return run(self)
        self.deadline = time.monotonic() + limit + GRACE
        try:
            return run(self)
        finally:
            self.deadline = None

    def shut(self) -> None:
        """Shut the socket down under the call waiting on it (from the watch's thread)."""
        try:
            fd = self.pgconn.socket
        except psycopg.Error:  # closed meanwhile: nothing to cut
            return
        self.cut = True
        # A second descriptor of the same socket: shutting it down ends libpq's too, and
        # closing it leaves libpq's own descriptor for libpq to close.
        with socket.socket(fileno=os.dup(fd)) as sock, contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)  # OSError: already gone


class Watch:
    """One thread per process that cuts the connections whose statement is past its deadline."""

    def __init__(self):
        self._lock = threading.Lock()
        self._conns = weakref.WeakSet()
        self._thread = None

    def keep(self, conn: Connection) -> None:
        """Watch ``conn`` from now on (called once, as it is opened) until it is collected."""
        with self._lock:
            self._conns.add(conn)
            if self._thread is None or not self._thread.is_alive():  # none yet, or forked
                self._thread = threading.Thread(target=self._run, name="db-watch", daemon=True)
                self._thread.start()

    def _run(self) -> None:
        while True:
            time.sleep(TICK)  # the watch's rhythm, not a wait for a condition
            moment = time.monotonic()
            with self._lock:
                conns = list(self._conns)
            for conn in conns:
                deadline = conn.deadline
                # Read twice: a statement that ended meanwhile is not the one to cut.
                late = deadline is not None and deadline <= moment and not conn.closed
                if late and conn.deadline == deadline:
                    conn.shut()


WATCH = Watch()
