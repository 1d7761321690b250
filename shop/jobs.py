"""Every periodic job of the service, and the one loop that runs them: the Procfile's worker.

``flask jobs run`` runs ``work`` until SIGTERM or Ctrl-C; ``flask jobs run --once`` runs
``run_once`` (every job once, then the queues until nothing is due) for cron and tests.
``flask webhooks work`` and ``flask mail work`` are older names of the same worker.

Queues run on every pass; a pass that finds one full comes back at once, otherwise the loop
rests ``SHOP_WEBHOOKS_POLL_INTERVAL`` seconds (5 by default).

=============================  ===========  ===============================================
Job                            Interval     What a missed run costs
=============================  ===========  ===============================================
webhooks.worker.deliver_due    every pass   webhook events wait (retried later: at least
                                            once, nothing lost)
mail.deliver_due               every pass   queued mail waits; nothing lost
worker.disable_without_rights  60 s         a webhook whose owner lost a right stays
                                            enabled, but every delivery is still checked
                                            and skipped, so nothing leaks
key_sweep.notify_expiring      60 s         ``api_key.expiring`` (audit and webhook) comes
                                            later, still once; a key expiring sooner than
                                            the outage may never be warned about
key_sweep.expire_idle          60 s         ``api_key.expired_unused`` is audited later;
                                            the key is refused on time anyway (its status
                                            is derived on every request)
worker.prune                   1 h          finished deliveries and events stay longer
mail.prune                     1 h          sent and abandoned mail stays longer
key_usage.prune                1 h          usage days beyond the 30 shown stay longer
image_files.prune              1 h          with SHOP_IMAGE_DIR: files of deleted images
                                            take disk space longer
optimize                       1 h          SQLite's planner statistics go staler (each
                                            connection also runs it when it closes)
search.index_missing           5 min        products created by a node of the previous
                                            release (rolling upgrade) are found by search
                                            later
=============================  ===========  ===============================================

Not a job: the API-key usage counts (requests per day, last use, new addresses). They are
each request's own writes, counted in the memory of the web process that served it, which
no other process can read; so that process writes its own batch, at most once an interval,
in the teardown of a request after the answer is made (``shop/auth/key_usage.py``), and once
more when it exits normally. Everything that looks at all keys (the sweeps above) or forgets
old rows runs here, in the worker, never in a request's path.
"""

import logging
import threading

from flask import current_app

from shop import db, mail
from shop.auth import key_sweep, key_usage
from shop.clock import now
from shop.outages import Unavailable, note_outage
from shop.services import image_files, search
from shop.webhooks import worker

log = logging.getLogger("shop.jobs")


def optimize() -> None:
    """``PRAGMA optimize`` on SQLite, as its docs advise for long-lived connections."""
    if db.get_db().engine == "sqlite":
        db.get_db().analyze()


# The queues a pass works through, in order, each with the most it takes in one pass; each
# answers how much it took.
QUEUES = ((worker.deliver_due, worker.BATCH), (mail.deliver_due, mail.BATCH))
# Jobs run every so many seconds rather than on every pass.
PERIODIC = (
    (worker.disable_without_rights, 60),
    (key_sweep.notify_expiring, 60),
    (key_sweep.expire_idle, 60),
    (worker.prune, 3600),
    (mail.prune, 3600),
    (key_usage.prune, 3600),
    (image_files.prune, 3600),
    (optimize, 3600),
    (search.index_missing, 300),
)
MAX_ONCE_PASSES = 1000


def run_once() -> int:
    """Run every periodic job, then the queues until a pass finds nothing due (``--once``);
    answer the queued items done."""
    for job, _ in PERIODIC:
        job()
    total = 0
    for _ in range(MAX_ONCE_PASSES):
        done = sum(job() for job, _ in QUEUES)
        total += done
        if not done:
            break
    return total


def wait_for_schema(stop: threading.Event, ready) -> bool:
    """Wait until the database answers (one warning while it does not), then answer
    ``ready()``: whether its schema is this release's; False at once when stopped."""
    while not stop.is_set():
        try:
            return ready()
        except Unavailable as error:
            note_outage(error.dependency, error, meanwhile="the worker waits")
            db.get_db().close()
        stop.wait(current_app.config["WEBHOOKS_POLL_INTERVAL"])
    return False


def work(stop: threading.Event) -> None:
    """Run passes until ``stop`` is set, resting ``SHOP_WEBHOOKS_POLL_INTERVAL`` after each
    pass that found no queue full.

    Only a full batch means more is waiting, so a busy shop's events go out in batches
    (each pass's transactions shared by up to ``BATCH`` items) rather than one pass per
    order; an event waits at most about one interval either way. An error (the database
    away, say) is logged and the loop carries on after a rest: a database that cannot be
    reached is one warning per outage (and one line when it answers again), not a traceback
    per pass.
    """
    interval = current_app.config["WEBHOOKS_POLL_INTERVAL"]
    last_run = {job: None for job, _ in PERIODIC}
    while not stop.is_set():
        full = False
        try:
            for job, every in PERIODIC:
                moment = now()
                if last_run[job] is None or (moment - last_run[job]).total_seconds() >= every:
                    job()
                    last_run[job] = moment
            # Webhooks first, told of a stop so their untried deliveries go back at once.
            done = [worker.deliver_due(stop=stop) >= worker.BATCH]
            done += [job() >= batch for job, batch in QUEUES[1:]]
            full = any(done)
        except Unavailable as error:  # one line per outage; the next connection heals it
            note_outage(error.dependency, error, meanwhile="the worker waits")
            db.get_db().close()
        except Exception:  # noqa: BLE001 - the worker outlives any one failure
            log.exception("worker pass failed; retrying")
            db.get_db().close()
        if not full:
            stop.wait(interval)
