"""What one subscribed webhook costs checkout: the same server, with and without it, in turns.

    python -m bench.webhook_cost [--rounds 5] [--duration 6] [--database-url postgresql://...]

Seeds the quick data set, starts gunicorn (limits off, as the benchmark's checkout runs), the
Procfile's worker and a receiver (``bench/webhook.py``), and subscribes one webhook to every
event. Each round measures ``POST /payments/checkout`` with wrk twice: with the webhook
disabled (no webhook receives anything: the shop's cost without one) and enabled (every order
is queued for it and the worker delivers it meanwhile). Which goes first alternates from round
to round. Between runs the outbox is let drain, so one run's deliveries do not load the next.

Taking turns on one server and one database compares like with like: separate benchmark runs
on this shared two-core machine differ by more than the 10 % being measured. Prints each
run, the medians and their ratio (``python -m bench.run`` prints the same line under its
table, from ``compare``); exits 1 when the median rate with the webhook is more
than 10 % below the one without.
"""

import argparse
import json
import statistics
import sys
import time
import urllib.request
from dataclasses import dataclass

from bench import scenarios, seed, webhook, wrk
from bench.harness import (
    add_server_arguments,
    app_on,
    new_database,
    scratch,
    seed_database,
    server_env,
    start_server,
    stop_server,
)

TARGET = 0.90  # the rate with a webhook, at least this share of the rate without
DRAIN_SECONDS = 60


@dataclass
class Cost:
    """The medians of the runs without and with the webhook."""

    off: float
    on: float
    cpu_off: float
    cpu_on: float
    received: int

    @property
    def ratio(self) -> float:
        return self.on / max(self.off, 1e-9)

    @property
    def met(self) -> bool:
        return self.ratio >= TARGET

    def line(self) -> str:
        """One line for a table's foot: with / without, and the verdict."""
        return (
            f"one webhook: checkout with / without {self.ratio:.1%} ({self.on:,.0f} /"
            f" {self.off:,.0f} req/s, web {self.cpu_on:,.0f} / {self.cpu_off:,.0f} us CPU/req;"
            f" target >= {TARGET:.0%}: {'met' if self.met else 'MISSED'})"
        )


def main(argv=None) -> int:
    args = _parse(argv)
    wrk.ensure()
    with scratch(args.keep) as (work, databases, cleanups):
        url = new_database(args.database_url, work, "main", databases)
        seeded = seed_database(url, seed.QUICK)
        worker = webhook.Worker(url, server_env(args, url), work / "worker.log")
        cleanups.append(worker.stop)
        cost = compare(args, work, url, seeded, worker, args.rounds)
        print()
        print(f"{cost.line()}; the receiver got {cost.received:,} deliveries")
        return 0 if cost.met else 1


def compare(args, work, url: str, seeded: seed.Seeded, worker, rounds: int) -> Cost:
    """Checkout without and with one webhook, in turns, on a server of its own (limits off)
    and ``worker`` (the Procfile's, running on ``url``); the webhook is left disabled."""
    receiver = webhook.Receiver()
    webhook.subscribe(app_on, url, receiver.url)
    server = start_server(args, server_env(args, url), work, SHOP_RATELIMIT_ENABLED="0")
    app = app_on(url)
    checkout = next(s for s in scenarios.service(seeded) if s.name.startswith("POST /pay"))
    results = {False: [], True: []}
    try:
        for number in range(rounds):
            for enabled in (False, True) if number % 2 == 0 else (True, False):
                _enable(app, server, seeded, enabled)
                started = wrk.process_cpu_seconds(worker.process.pid)
                result = wrk.measure(args, server, checkout, work)
                backlog = _drain(app)
                orders = max(1, result.rps * args.duration)
                used = wrk.process_cpu_seconds(worker.process.pid) - started
                worker_us = used / orders * 1e6
                results[enabled].append(result)
                print(
                    f"webhook cost, round {number + 1}, webhook {'on ' if enabled else 'off'}:"
                    f" {result.rps:,.0f} req/s, p50 {result.p50_ms:.1f} ms,"
                    f" p99 {result.p99_ms:.1f} ms, {result.errors} errors,"
                    f" web {result.cpu_us:,.0f} us CPU/req,"
                    f" worker {worker_us:,.0f} us CPU/req,"
                    f" {backlog} deliveries left when the run ended",
                    flush=True,
                )
        _enable(app, server, seeded, False)
        _print_failures(app)
    finally:
        app.extensions["shop.db"].close_all()
        stop_server(server)
        receiver.stop()
    return Cost(
        off=statistics.median(r.rps for r in results[False]),
        on=statistics.median(r.rps for r in results[True]),
        cpu_off=statistics.median(r.cpu_us for r in results[False]),
        cpu_on=statistics.median(r.cpu_us for r in results[True]),
        received=receiver.received,
    )


def _parse(argv):
    parser = argparse.ArgumentParser(
        prog="python -m bench.webhook_cost", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--rounds", type=int, default=5, help="runs with and without (5)")
    parser.add_argument("--duration", type=int, default=6, help="seconds per wrk run (6)")
    add_server_arguments(parser)
    args = parser.parse_args(argv)
    args.redis_url = None  # limits are off: nothing to count
    return args


def _enable(app, server, seeded: seed.Seeded, enabled: bool) -> None:
    """Enable or disable the webhooks through the server's API, as an owner does: the
    server's workers forget the enabled webhooks they keep (``shop.webhooks.outbox``)."""
    from shop import db

    with app.app_context():
        ids = [row["id"] for row in db.query("SELECT id FROM webhooks")]
    for webhook_id in ids:
        request = urllib.request.Request(  # noqa: S310 - the bench server, 127.0.0.1
            f"{server.url}/webhooks/{webhook_id}",
            data=json.dumps({"enabled": enabled}).encode(),
            method="PATCH",
            headers={
                "Content-Type": "application/json",
                "Cookie": f"shop_admin_session={seeded.admin_cookie}",
                "User-Agent": seed.USER_AGENT,  # the browser its session was made in
            },
        )
        with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310
            assert response.status == 200, response.status


def _drain(app) -> int:
    """The deliveries pending when called; then wait (bounded) until the worker sent them."""
    from shop import db

    with app.app_context():
        sql = "SELECT COUNT(*) FROM webhook_deliveries WHERE status = 'pending'"
        left = db.value(sql)
        deadline = time.monotonic() + DRAIN_SECONDS
        while db.value(sql) and time.monotonic() < deadline:
            time.sleep(0.2)  # the worker's pace, not a test's: bounded by DRAIN_SECONDS
    return left


def _print_failures(app) -> None:
    """Attempts that did not get a 2xx, by error (there should be none)."""
    from shop import db

    with app.app_context():
        rows = db.query(
            "SELECT COALESCE(error, CAST(status_code AS TEXT)) AS error, COUNT(*) AS n"
            " FROM webhook_attempts WHERE status_code IS NULL OR status_code >= 300"
            " GROUP BY 1 ORDER BY 2 DESC"
        )
    for row in rows:
        print(f"failed attempts: {row['n']:,} x {row['error']}")


if __name__ == "__main__":
    sys.exit(main())
