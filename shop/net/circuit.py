"""A bulkhead and a circuit breaker for the calls one process makes to a remote service.

At most ``slots`` calls run at once; one more is refused at once (``NotCalled``), never
queued, so a service that hangs holds at most ``slots`` of the web threads and the others
keep answering. After ``failures`` transport failures in a row (refused, reset, timed out)
the circuit opens: every call is refused at once for ``cooldown`` seconds, then one trial
call goes through, and its outcome closes the circuit or opens it for another cool-down.
Any answer from the service, an error status included, counts as reaching it.

Knows nothing of Flask or of the service: ``shop/payments/stripe/gateway.py`` builds one per
app (so per gunicorn worker) from its settings.
"""

import logging
import math
import threading
import time
from collections.abc import Callable
from contextlib import contextmanager

log = logging.getLogger("shop")


class NotCalled(Exception):
    """The call was not made: every slot is taken (``busy``) or the circuit is ``open``."""

    def __init__(self, reason: str, retry_after: int):
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after


class Circuit:
    """Slots and a breaker for one service (``name`` is for the log)."""

    def __init__(
        self,
        name: str,
        slots: int,
        failures: int,
        cooldown: float,
        busy_retry_after: int = 5,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.name = name
        self._slots = threading.BoundedSemaphore(slots)
        self._lock = threading.Lock()
        self._threshold, self._cooldown, self._clock = failures, cooldown, clock
        self._busy_retry_after = busy_retry_after
        self._failures = 0  # transport failures in a row
        self._open_until: float | None = None
        self._trial = False  # the one call let through after a cool-down is running

    @property
    def state(self) -> str:
        """``closed``, ``open`` (cooling down) or ``half-open`` (a trial is due or running)."""
        with self._lock:
            if self._open_until is None:
                return "closed"
            return "open" if self._clock() < self._open_until else "half-open"

    @contextmanager
    def call(self, transport_errors: tuple[type[BaseException], ...]):
        """Run the body as one call to the service, or raise ``NotCalled`` at once.

        An exception of ``transport_errors`` leaving the body counts as a failure to reach
        the service; anything else (an answer, an error answer) as reaching it.
        """
        trial = self._admit()
        if not self._slots.acquire(blocking=False):
            if trial:
                with self._lock:
                    self._trial = False
            raise NotCalled("busy", self._busy_retry_after)
        failed = False
        try:
            yield
        except transport_errors:
            failed = True
            raise
        finally:
            self._slots.release()
            self._record(trial, failed)

    def _admit(self) -> bool:
        """Whether this call is the trial; raise ``NotCalled`` while the circuit is open."""
        with self._lock:
            if self._open_until is None:
                return False
            moment = self._clock()
            if moment < self._open_until:
                # A clock set back never keeps it open longer than one cool-down.
                left = min(self._open_until - moment, self._cooldown)
                raise NotCalled("open", max(1, math.ceil(left)))
            if self._trial:
                raise NotCalled("open", max(1, math.ceil(self._cooldown)))
            self._trial = True
            return True

    def _record(self, trial: bool, failed: bool) -> None:
        with self._lock:
            if trial:
                self._trial = False
            was_open = self._open_until is not None
            opened = False
            if not failed:
                self._failures = 0
                self._open_until = None
            else:
                self._failures += 1
                # A call that started before the circuit opened does not extend the cool-down.
                opened = trial or (not was_open and self._failures >= self._threshold)
                if opened:
                    self._open_until = self._clock() + self._cooldown
            failures = self._failures
        if opened:
            log.warning(
                "%s: %d calls in a row could not reach it; calls fail fast for %gs, then one"
                " is tried",
                self.name,
                failures,
                self._cooldown,
            )
        elif was_open and not failed:
            log.warning("%s answers again: calls go through", self.name)
