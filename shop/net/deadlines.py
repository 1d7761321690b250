"""Overall deadlines for network exchanges whose library bounds only each read (http.client,
smtplib): a receiver or relay that drips a byte at a time never times out by itself.

One thread per process (``WATCHDOG``) cuts the exchanges still running at their deadline:
it shuts the socket down, so the blocked read fails at once. Arming and disarming only take
a lock; the thread wakes at the earliest deadline it knows of (a Timer thread per attempt
cost more CPU than the attempt itself). An exchange armed before its socket exists (an SMTP
client still connecting) is cut as soon as the socket appears.
"""

import contextlib
import socket
import threading
import time

RECHECK = 0.05  # seconds: how soon a past-deadline exchange without a socket is looked at again


class Watchdog:
    """Cuts ``conn.sock`` of each armed exchange at its deadline (``time.monotonic()``)."""

    def __init__(self):
        self._cond = threading.Condition()
        self._armed: dict[int, tuple[float, object]] = {}
        self._wakes_at = None  # None: the thread waits for an exchange
        self._thread = None
        self._count = 0

    def arm(self, conn, deadline: float) -> int:
        """Watch ``conn`` (anything with a ``sock``) until ``disarm``; answer the token."""
        with self._cond:
            if self._thread is None or not self._thread.is_alive():  # none yet, or forked
                self._thread = threading.Thread(target=self._run, name="deadline-watchdog")
                self._thread.daemon = True
                self._thread.start()
            self._count += 1
            self._armed[self._count] = (deadline, conn)
            if self._wakes_at is None or deadline < self._wakes_at:
                self._cond.notify()
            return self._count

    def disarm(self, token: int) -> None:
        with self._cond:
            self._armed.pop(token, None)

    def cut_all(self) -> None:
        """Cut every exchange still running (the worker is stopping)."""
        with self._cond:
            for _, conn in self._armed.values():
                _cut(conn)

    def _run(self) -> None:
        with self._cond:
            while True:
                moment = time.monotonic()
                for token, (deadline, conn) in list(self._armed.items()):
                    if deadline <= moment:
                        if _cut(conn):
                            del self._armed[token]
                        else:  # no socket yet: look again shortly
                            self._armed[token] = (moment + RECHECK, conn)
                deadlines = [deadline for deadline, _ in self._armed.values()]
                self._wakes_at = min(deadlines, default=None)
                self._cond.wait(None if self._wakes_at is None else self._wakes_at - moment)


def _cut(conn) -> bool:
    """Shut ``conn``'s socket down; answer whether it had one."""
    sock = getattr(conn, "sock", None)
    if sock is None:
        return False
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    return True


WATCHDOG = Watchdog()


def cut_all() -> None:
    """End every exchange of this process still running: each fails at once (SIGTERM)."""
    WATCHDOG.cut_all()
