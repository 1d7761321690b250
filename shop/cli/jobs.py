"""Every periodic job of the service, and the one loop that runs them: the Procfile's worker.

``flask jobs run`` runs ``work`` until SIGTERM or Ctrl-C; ``flask jobs run --once`` runs
``run_once`` (every job once, then the queues until nothing is due) for cron and tests.
``flask webhooks work`` and ``flask mail work`` are older names of the same worker.

The queues run on threads of their own (``work``): webhook deliveries on a small pool with
a per-origin limit (``shop/webhooks/pool.py``), mail on one thread, the PDFs of issued
invoices and credit notes (``shop/invoices/kept.py``) on another; the periodic jobs below
run on the main thread, checked every ``SHOP_WEBHOOKS_POLL_INTERVAL`` seconds (1 by
default). ``--once`` runs them one after another.

=============================  ===========  ===============================================
Job                            Interval     What a missed run costs
=============================  ===========  ===============================================
webhooks.pool.Sender           continuous   webhook events wait (retried later: at least
                                            once, nothing lost); pings and replays not
                                            taken within 60 s are logged as not sent
mail.deliver_due               continuous   queued mail waits; nothing lost
invoices.kept.keep_due         continuous   an issued document's PDF is drawn by its first
                                            download (or e-mail) instead, and kept then
worker.disable_without_rights  60 s         a webhook whose owner lost a right stays
                                            enabled, but every delivery is still checked
                                            and skipped, so nothing leaks
key_sweep.notify_expiring      60 s         ``api_key.expiring`` (audit and webhook) comes
                                            later, still once; a key expiring sooner than
                                            the outage may never be warned about
key_sweep.expire_idle          60 s         ``api_key.expired_unused`` is audited later;
                                            the key is refused on time anyway (its status
                                            is derived on every request)
totals.fold_orders             60 s         the orders list counts more recent orders
                                            for its unfiltered total (still exact)
unpaid_card_orders             60 s         unpaid card orders keep their stock and
                                            discount code use past SHOP_UNPAID_ORDER_TTL;
                                            a cancelled order's PaymentIntent whose cancel
                                            failed stays payable at Stripe longer (money
                                            that still comes goes to review)
carts.remind_due               60 s         a cart left behind is reminded later (still
                                            once, and only with the shop's and the
                                            visitor's consent)
carts.expire                   1 h          carts past SHOP_CART_TTL_DAYS stay longer
worker.prune                   1 h          finished deliveries and events stay longer
mail.prune                     1 h          sent and abandoned mail stays longer
key_usage.prune                1 h          usage days beyond the 30 shown stay longer
image_files.prune              1 h          with SHOP_IMAGE_DIR: files of deleted images
                                            take disk space longer
optimize                       1 h          SQLite's planner statistics go staler (each
                                            connection also runs it when it closes)
prices.prune                   1 h          price history beyond what prior prices need
                                            (61 days) stays longer
search.index_missing           5 min        products created by a node of the previous
                                            release (rolling upgrade) are found by search
                                            later
=============================  ===========  ===============================================

Not a job: the API-key usage counts (requests per day, last use, new addresses). They are
each request's own writes, counted in the memory of the web process that served it, which
no other process can read; so that process writes its own batch, at most once an interval,
in the teardown of a request after the answer is made (``shop/auth/keys/usage.py``), and once
more when it exits normally. Everything that looks at all keys (the sweeps above) or forgets
old rows runs here, in the worker, never in a request's path.
"""

import logging
import threading

from flask import current_app

from shop import db, mail
from shop.actor import system
from shop.auth.keys import sweep as key_sweep
from shop.auth.keys import usage as key_usage
from shop.carts import reminders as carts
from shop.catalogue import image_files, prices, search
from shop.clock import now
from shop.db import totals
from shop.invoices import kept
from shop.outages import Unavailable, note_outage
from shop.payments import providers
from shop.webhooks import manual, pool, worker

log = logging.getLogger("shop.cli.jobs")


def optimize() -> None:
    """``PRAGMA optimize`` on SQLite, as its docs advise for long-lived connections."""
    if db.get_db().engine == "sqlite":
        db.get_db().analyze()


def unpaid_card_orders() -> None:
    """Each enabled payment provider's follow-up as the system: for cards, intents of
    cancelled orders still to cancel, and unpaid orders to expire (``Provider.follow_up``)."""
    providers.follow_up(system("unpaid order expiry"))


# The queues a pass works through, in order, each with the most it takes in one pass; each
# answers how much it took.
QUEUES = (
    (manual.deliver_due, worker.BATCH),
    (worker.deliver_due, worker.BATCH),
    (mail.deliver_due, mail.BATCH),
    (kept.keep_due, kept.BATCH),
)
# Jobs run every so many seconds rather than on every pass.
PERIODIC = (
    (worker.disable_without_rights, 60),
    (key_sweep.notify_expiring, 60),
    (key_sweep.expire_idle, 60),
    (totals.fold_orders, 60),
    (unpaid_card_orders, 60),
    (carts.remind_due, 60),
    (worker.prune, 3600),
    (mail.prune, 3600),
    (key_usage.prune, 3600),
    (image_files.prune, 3600),
    (prices.prune, 3600),
    (carts.expire, 3600),
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


def _guarded(what: str, job, *args, **kwargs):
    """Run one job, surviving anything (None then): a database that cannot be reached is
    one warning per outage (and one line when it answers again), not a traceback per pass."""
    try:
        return job(*args, **kwargs)
    except Unavailable as error:  # one line per outage; the next connection heals it
        note_outage(error.dependency, error, meanwhile="the worker waits")
        db.get_db().close()
    except Exception:  # noqa: BLE001 - the worker outlives any one failure
        log.exception("%s failed; retrying", what)
        db.get_db().close()
    return None


def _mail_loop(app, stop: threading.Event) -> None:
    """Mail on its own thread: a slow mail server never delays a webhook, nor the reverse.
    A full batch comes back at once, otherwise it rests an interval."""
    interval = app.config["WEBHOOKS_POLL_INTERVAL"]
    with app.app_context():
        while not stop.is_set():
            taken = _guarded("mail pass", mail.deliver_due, stop=stop)
            if not taken or taken < mail.BATCH:
                stop.wait(interval)


def _pdf_loop(app, stop: threading.Event) -> None:
    """The PDFs of issued documents on their own thread, a batch (``kept.BATCH``) an
    interval: a backlog (documents of an earlier release) is worked off at a bounded pace,
    a few percent of a core, never all at once."""
    interval = app.config["WEBHOOKS_POLL_INTERVAL"]
    with app.app_context():
        while not stop.is_set():
            _guarded("PDF pass", kept.keep_due, stop=stop)
            stop.wait(interval)


def work(stop: threading.Event) -> None:
    """Run the worker until ``stop`` is set: webhooks (``shop/webhooks/pool.py``: bounded
    threads, a per-origin limit), mail and the documents' PDFs each on their own thread,
    the periodic jobs on this one, each checked every ``SHOP_WEBHOOKS_POLL_INTERVAL``. On
    stop, the webhook attempts still running are cut and released, and mail stops after its
    current message (the messages it claimed and did not try are released); the CLI's stop
    timeout (``SHOP_WORKER_STOP_TIMEOUT``) bounds the whole.
    """
    app = current_app._get_current_object()
    interval = app.config["WEBHOOKS_POLL_INTERVAL"]
    threads = [
        threading.Thread(target=pool.Sender(app, stop).run, name="webhooks", daemon=True),
        threading.Thread(target=_mail_loop, args=(app, stop), name="mail", daemon=True),
        threading.Thread(target=_pdf_loop, args=(app, stop), name="pdfs", daemon=True),
    ]
    for thread in threads:
        thread.start()
    last_run = {job: None for job, _ in PERIODIC}
    while not stop.is_set():
        for job, every in PERIODIC:
            moment = now()
            if last_run[job] is None or (moment - last_run[job]).total_seconds() >= every:
                _guarded(job.__qualname__, job)
                last_run[job] = moment
        stop.wait(interval)
    for thread in threads:
        thread.join()
