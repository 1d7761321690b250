"""The worker's webhook sender: deliveries to one origin never hold up another's.

A dispatcher thread claims due deliveries only as they can start: at most
``SHOP_WEBHOOKS_CONCURRENCY`` attempts at once (a thread each), at most
``SHOP_WEBHOOKS_PER_ORIGIN`` of them to one origin; a thread with more due deliveries to the
same URL goes on with them. A thread takes up to ``worker.RUN`` deliveries of one webhook at
once and records them in one transaction, and the dispatcher looks for due work at most every
``GATHER`` seconds, so a busy shop's deliveries go out in batches (a write transaction for
many, not two for each: on SQLite the worker queues for the writer lock with checkout). On
SIGTERM nothing more is claimed and running attempts are cut and released. The limits,
latency and at-least-once delivery: docs/webhooks.md, "Delivery, retries and ordering".
"""

import functools
import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlsplit

from shop import db
from shop.clock import iso, now
from shop.net import deadlines
from shop.outages import Unavailable, note_outage
from shop.webhooks import delivery, manual, worker

log = logging.getLogger("shop.webhooks")

# Seconds between two looks for due deliveries at least: what a busy shop's events wait at
# most, beyond the poll, to be sent in a batch.
GATHER = 0.25

_CANDIDATES = """
    SELECT d.id, d.webhook_id, d.next_attempt_at, w.url FROM webhook_deliveries d
    JOIN webhooks w ON w.id = d.webhook_id
    WHERE d.next_attempt_at <= :now AND w.enabled = 1{skip}
    ORDER BY d.next_attempt_at, d.id LIMIT :limit"""


@functools.lru_cache(maxsize=4096)
def origin_of(url: str) -> tuple:
    """The origin a URL's deliveries count against: scheme, host and port. Cached: the
    dispatcher asks for every due row of every pass (a backlog's hundred rows a pass)."""
    try:
        return delivery.origin(urlsplit(url))
    except ValueError:  # refused at creation; counted on its own all the same
        return ("invalid", url, 0)


class Sender:
    """The dispatcher and its threads, for one worker process (``run`` until ``stop``)."""

    def __init__(self, app, stop: threading.Event):
        config = app.config
        self.app, self.stop = app, stop
        self.size = config["WEBHOOKS_CONCURRENCY"]
        self.per_origin = config["WEBHOOKS_PER_ORIGIN"]
        self.interval = config["WEBHOOKS_POLL_INTERVAL"]
        self.lock = threading.Lock()
        self.busy: dict[tuple, int] = {}  # origin -> attempts running
        self.running = 0
        self.wake = threading.Event()
        self.origins: dict[str, tuple] = {}  # webhook id -> its origin, as last seen
        self.connections = delivery.Connections(per_origin=self.per_origin)
        self.threads = ThreadPoolExecutor(self.size, thread_name_prefix="webhook-send")
        self.owners: dict = {}  # webhook id -> its owner and rights (``worker._owner``)
        self.owners_read = None  # when ``owners`` was started

    def run(self) -> None:
        """Claim and start deliveries until stopped; then cut the attempts still running,
        wait for their threads (each releases its delivery) and close the connections."""
        with self.app.app_context():
            while not self.stop.is_set():
                self.wake.clear()
                looked = time.monotonic()
                try:
                    self.dispatch()
                except Unavailable as error:  # one line per outage; the next pass heals it
                    note_outage(error.dependency, error, meanwhile="the worker waits")
                    db.get_db().close()
                except Exception:  # noqa: BLE001 - the worker outlives any one failure
                    log.exception("webhook dispatch failed; retrying")
                    db.get_db().close()
                self.wake.wait(self.interval)
                # A thread's end wakes the dispatcher; what came meanwhile waits for a batch.
                self.stop.wait(GATHER - (time.monotonic() - looked))
            deadlines.cut_all()
            self.threads.shutdown(wait=True)
            self.connections.close()

    def dispatch(self) -> int:
        """Claim what may start now and start it, asked-for attempts (pings, replays) first;
        answer how many were started."""
        started, moment = 0, now()
        if self.owners_read is None or (moment - self.owners_read).total_seconds() >= self.interval:
            self.owners, self.owners_read = {}, moment  # threads keep the dict they were given
        for rows, claim, send, run in (
            (lambda _full: manual.due(worker.BATCH), manual.claim_seen, self._send_asked, 1),
            (self._due_deliveries, worker.claim_seen, self._send_run, worker.RUN),
        ):
            with self.lock:
                free = self.size - self.running
                full = {origin for origin, n in self.busy.items() if n >= self.per_origin}
            if free <= 0:
                break
            runs = self._choose(rows(full), free, run)
            leases = claim([row for chosen, _ in runs for row in chosen])
            for chosen, origin in runs:
                items = [(row["id"], leases[row["id"]]) for row in chosen if row["id"] in leases]
                if items:
                    self._start(send, items, origin)
                    started += len(items)
        return started

    def _due_deliveries(self, full: set) -> list[dict]:
        """Due deliveries, oldest first, past the webhooks of origins already at their limit
        (so a hung origin's backlog never hides the others')."""
        skip = sorted(hook for hook, origin in self.origins.items() if origin in full)
        params = {"now": iso(now()), "limit": worker.BATCH}
        clause = ""
        if skip:
            marks, more = db.in_list("w", skip)
            clause, params = f" AND d.webhook_id NOT IN {marks}", {**params, **more}
        return db.query(_CANDIDATES.format(skip=clause), params)

    def _choose(self, rows: list[dict], free: int, run: int) -> list[tuple]:
        """Runs of ``rows`` to start, ``(rows, origin)``, at most ``free``: each holds up to
        ``run`` rows of one webhook to one URL, and an origin gets as many runs as it has
        free slots (its rows dealt out among them in turn, so its attempts still go out two
        at a time); rows beyond wait for a later look."""
        by_target: dict[tuple, list[dict]] = {}
        for row in rows:
            self.origins[row["webhook_id"]] = origin_of(row["url"])
            by_target.setdefault((row["webhook_id"], row["url"]), []).append(row)
        runs, planned = [], {}
        for (webhook_id, _url), waiting in by_target.items():
            origin = self.origins[webhook_id]
            with self.lock:
                running = self.busy.get(origin, 0)
            slots = min(self.per_origin - running - planned.get(origin, 0), free - len(runs))
            count = min(slots, len(waiting))
            if count <= 0:
                continue
            planned[origin] = planned.get(origin, 0) + count
            runs += [(waiting[n : count * run : count], origin) for n in range(count)]
        return runs

    def _send_asked(self, items: list[tuple], stop, connections) -> None:
        """Asked-for attempts (pings, replays), one run of one each."""
        for request_id, lease in items:
            manual.send(request_id, lease, stop, connections)

    def _send_run(self, items: list[tuple], stop, connections) -> None:
        """Send a run of claimed deliveries of one webhook (``worker.send_batch``), then its
        next due ones while a full run waits, each run claimed in the transaction recording
        the one before, while another thread stays free for the other origins; the origin's
        slot is this thread's meanwhile, so its limit holds."""
        health, claimed = {}, [(delivery_id, lease, None) for delivery_id, lease in items]
        while claimed:
            claimed = worker.send_batch(
                claimed, stop, connections, self.owners, health,
                follow=worker.RUN if self._may_follow() else 0,
            )  # fmt: skip

    def _may_follow(self) -> bool:
        """Whether a sending thread may go on with its webhook's backlog: not stopping, and
        a thread left for the dispatcher to start other origins' deliveries on."""
        with self.lock:
            return not self.stop.is_set() and self.running < self.size

    def _start(self, send, items: list[tuple], origin: tuple) -> None:
        with self.lock:
            self.running += 1
            self.busy[origin] = self.busy.get(origin, 0) + 1
        self.threads.submit(self._send, send, items, origin)

    def _send(self, send, items: list[tuple], origin: tuple) -> None:
        """A run of attempts on a sending thread: recorded, or released on stop."""
        try:
            with self.app.app_context():
                try:
                    send(items, self.stop, self.connections)
                except Unavailable as error:  # its lease ends; the delivery is due again
                    note_outage(error.dependency, error, meanwhile="the worker waits")
                    db.get_db().close()
                except Exception:  # noqa: BLE001 - one delivery never stops the others
                    log.exception("webhook attempts %s: not recorded", [i for i, _ in items])
                    db.get_db().close()
        finally:
            with self.lock:
                self.running -= 1
                self.busy[origin] -= 1
                if not self.busy[origin]:
                    del self.busy[origin]
            self.wake.set()
