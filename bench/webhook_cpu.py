"""The worker's CPU per delivery and the outbox's cost per emitted event, in-process.

    python -m bench.webhook_cpu [--database-url postgresql://...] [--deliveries 1000]
                                [--rounds 3] [--profile]

Fills the outbox with ``--deliveries`` ``order.placed`` events for one webhook, runs the
worker's sender (``shop/webhooks/pool.py``: its dispatcher and threads, as ``jobs run``
does) until every delivery succeeded at a receiver in another process (so its CPU is not
counted), and prints this process's CPU per delivery. Then times ``emit`` of the same
event inside a request and a transaction (as checkout calls it), with the webhook enabled
and disabled, interleaved. No network wait is measured, only CPU; on PostgreSQL the
server's own CPU is not in the figure.
"""

import argparse
import cProfile
import json
import pstats
import subprocess
import sys
import threading
import time

from bench import seed, webhook
from bench.harness import new_database, scratch, seed_database

TINY = seed.Size(products=50, categories=2, keys=10, customers=50, orders=50)
# The benchmark's receiver, in a process of its own so that its CPU is not counted.
RECEIVER = (
    "import sys; from bench.webhook import Receiver; r = Receiver(); print(r.url, flush=True);"
    " sys.stdin.read(); r.stop()"
)


def _payload(app) -> dict:
    """An order as ``order.placed`` carries it: one seeded order, as the API shows it."""
    from shop import db
    from shop.orders import lifecycle as orders

    order_id = db.value("SELECT id FROM orders ORDER BY id LIMIT 1")
    return orders.load(order_id)


def fill(app, hook_id: str, count: int) -> None:
    """``count`` due deliveries of ``order.placed`` to the webhook."""
    from shop import db
    from shop.clock import iso, now
    from shop.webhooks import outbox

    data = _payload(app)
    with db.transaction():
        for _ in range(count):
            outbox.store("order.placed", data["id"], data, [hook_id], iso(now()))


def pending() -> int:
    from shop import db

    return db.value(
        "SELECT COUNT(*) FROM webhook_deliveries WHERE status = 'pending'"
        " AND next_attempt_at IS NOT NULL"
    )


def deliver_all(app, count: int, profile: bool) -> float:
    """Run the sender until the outbox is empty; answer this process's CPU µs a delivery."""
    from shop.webhooks import pool

    stop = threading.Event()
    sender = pool.Sender(app, stop)
    profilers = _profile_threads(sender) if profile else None
    started, wall = time.process_time(), time.perf_counter()
    thread = threading.Thread(target=sender.run)
    thread.start()
    with app.app_context():
        while pending():
            time.sleep(0.2)
    stop.set()
    sender.wake.set()
    thread.join()
    spent = time.process_time() - started
    print(f"  {count / (time.perf_counter() - wall):,.0f} deliveries a second")
    if profilers:
        stats = pstats.Stats(profilers[0])
        for more in profilers[1:]:
            stats.add(more)
        stats.sort_stats("tottime").print_stats(40)
    return spent / count * 1e6


def _profile_threads(sender) -> list:
    """A profiler per thread around the dispatcher's passes and each attempt."""
    local, profilers = threading.local(), []

    def wrap(function):
        def profiled(*args, **kwargs):
            if not hasattr(local, "profiler"):
                local.profiler = cProfile.Profile()
                profilers.append(local.profiler)
            local.profiler.enable()
            try:
                return function(*args, **kwargs)
            finally:
                local.profiler.disable()

        return profiled

    sender.dispatch = wrap(sender.dispatch)
    sender._send = wrap(sender._send)
    return profilers


def _count_statements(app) -> dict:
    """Count the statements run from now on, by their first words (``--statements``)."""
    engine = app.extensions["shop.db"]
    counted, lock, run = {}, threading.Lock(), engine._run

    def counting(sql, params):
        key = " ".join(sql.split())[:70]
        with lock:
            counted[key] = counted.get(key, 0) + 1
        return run(sql, params)

    engine._run = counting
    return counted


def emit_cost(app, enabled: bool, count: int) -> float:
    """CPU µs of ``emit("order.placed")`` in its own request and transaction."""
    from shop import db, webhooks
    from shop.webhooks import outbox

    with app.app_context():
        db.execute("UPDATE webhooks SET enabled = :on", {"on": 1 if enabled else 0})
        outbox.changed()  # the kept webhooks
        data = _payload(app)
    started = time.process_time()
    for _ in range(count):
        with app.test_request_context("/"), db.transaction():
            webhooks.emit("order.placed", data["id"], lambda _: data)
    return (time.process_time() - started) / count * 1e6


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.webhook_cpu")
    parser.add_argument("--database-url")
    parser.add_argument("--deliveries", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--emits", type=int, default=500)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--statements", action="store_true", help="count them by their start")
    args = parser.parse_args(argv)
    receiver = subprocess.Popen(
        [sys.executable, "-c", RECEIVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        url = receiver.stdout.readline().strip()
        with scratch(False) as (work, databases, _cleanups):
            database_url = new_database(args.database_url, work, "cpu", databases)
            seed_database(database_url, TINY)
            from bench.harness import app_on

            app = app_on(database_url)
            app.config.update(WEBHOOKS_ALLOW_PRIVATE=True, WEBHOOKS_ALLOW_HTTP=True)
            webhook.subscribe(lambda _url: app, database_url, url)
            with app.app_context():
                from shop import db

                hook_id = db.value("SELECT id FROM webhooks")
            for _ in range(args.rounds):
                with app.app_context():
                    fill(app, hook_id, args.deliveries)
                counted = _count_statements(app) if args.statements else None
                per = deliver_all(app, args.deliveries, args.profile)
                print(f"worker: {per:,.0f} us CPU per delivery ({args.deliveries} deliveries)")
                for sql, n in sorted((counted or {}).items(), key=lambda item: -item[1]):
                    print(f"  {n / args.deliveries:5.2f} a delivery: {sql}")
            for _ in range(args.rounds):
                on = emit_cost(app, True, args.emits)
                off = emit_cost(app, False, args.emits)
                print(f"emit order.placed: {on:,.0f} us subscribed, {off:,.0f} us not")
            app.extensions["shop.db"].close_all()
    finally:
        receiver.stdin.close()
        receiver.wait(10)
    print(json.dumps({"loadavg": open("/proc/loadavg").read().split()[:3]}))  # noqa: SIM115
    return 0


if __name__ == "__main__":
    sys.exit(main())
