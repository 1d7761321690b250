"""Dependencies that cannot be reached (the database, Redis): the exception that says so and
this process's memory of which ones it has seen down, so each outage is logged once.

Below the data module and the error handler: both use it, neither is imported here.
"""

import logging
import threading

log = logging.getLogger("shop")

RETRY_AFTER_UNAVAILABLE = 5  # seconds: a restarted PostgreSQL is back within a few


class Unavailable(RuntimeError):
    """A dependency (the database, Redis) cannot be reached, or did not answer in time: the
    request answers 503 with ``Retry-After``.

    ``dependency`` names it for the client and the log, ``problem`` says what is wrong with
    it (``"did not answer within 5 s"``); the cause is chained.
    """

    def __init__(self, dependency: str, problem: str = "cannot be reached"):
        super().__init__(f"the {dependency} {problem}")
        self.dependency = dependency
        self.problem = problem


_outages: set[str] = set()  # dependencies this process has seen down and not yet back
_outages_lock = threading.Lock()


def note_outage(dependency: str, error: BaseException, meanwhile: str = "answering 503") -> None:
    """Log a warning the first time a dependency is found down (not once per request);
    ``meanwhile`` says what the process does until it is back."""
    with _outages_lock:
        if dependency in _outages:
            return
        _outages.add(dependency)
    cause = error.__cause__ or error
    detail = str(cause).strip().splitlines()[0] if str(cause).strip() else ""
    problem = getattr(error, "problem", "cannot be reached")
    log.warning(
        "the %s %s (%s: %s): %s until it is back",
        dependency,
        problem,
        type(cause).__name__,
        detail,
        meanwhile,
    )


def recovered(dependency: str) -> None:
    """Log once that a dependency seen down answers again (called on a new connection)."""
    with _outages_lock:
        if dependency not in _outages:
            return
        _outages.discard(dependency)
    log.warning("the %s answers again: serving", dependency)
