"""The benchmark: seed a realistic shop, load it with wrk, print one table.

    python -m bench.run [--quick] [--database-url postgresql://...] [--redis-url redis://...]

Seeds the data set through the data module, measures the bare baseline (``bench/baseline.py``)
and then the service under gunicorn with the Procfile's settings on 127.0.0.1 (its worker
process beside it, ``bench/webhook.py``), each scenario
at its peak rate and again at half of it, counts the SQL statements of each scenario's request
(``SHOP_DEBUG_SQL_COUNT=1``), reads the workers' peak RSS and checks how reads scale with the
catalogue and the key table. Everything runs on 127.0.0.1 and is removed at the end.
"""

import argparse
import os
import random
import secrets
import shutil
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

from bench import report, scenarios, search, seed, statements, webhook, wrk
from bench.scenarios import RSS_LIMIT_MB, SCALING_LIMIT, Scenario
from bench.wrk import Result
from tests.live import LiveServer

ROOT = Path(__file__).resolve().parent.parent


def main(argv=None) -> int:
    """Run the whole benchmark; answer the exit status (1 when a target is missed)."""
    args = _parse(argv)
    wrk.ensure()
    with scratch(args.keep) as (work, databases, cleanups):
        size = seed.QUICK if args.quick else seed.FULL
        main_url = new_database(args.database_url, work, "main", databases)
        started = time.monotonic()
        seeded = seed_database(main_url, size)
        print(
            f"seeded {_describe_counts(seeded.counts)} in {time.monotonic() - started:.1f}s",
            flush=True,
        )
        env = server_env(args, main_url)
        if args.webhook:
            receiver = webhook.Receiver()
            cleanups.append(receiver.stop)
            webhook.subscribe(app_on, main_url, receiver.url)
        if args.webhook != "outbox":
            cleanups.append(webhook.Worker(main_url, env, work / "worker.log").stop)
        rows = []
        base = _run_baseline(args, env, seeded, work, rows)
        chosen = [s for s in scenarios.service(seeded) if not args.only or args.only in s.name]
        counts = _count_statements(args, env, chosen, work)
        rss = _run_service(args, env, chosen, base, counts, work, rows)
        if not args.only or args.only in search.NAME:
            search.measure(args, work, databases, rows)
        scaling = [] if args.only else _scaling(args, work, databases, main_url, size, seeded)
        print()
        report.print_table(args, size, rows, rss, scaling)
        missed = [name for name, result in rows if any(not ok for _, ok in result.checks)]
        missed += ["worker RSS"] if rss and rss > RSS_LIMIT_MB else []
        missed += [line for line, ok in scaling if ok is False]
        if args.webhook:
            print(f"webhook receiver got {receiver.received:,} deliveries", flush=True)
        return 1 if missed else 0


@contextmanager
def scratch(keep: bool):
    """A temporary folder, and lists of the databases and processes made for the run: all
    removed at the end (the processes last started first), the folder unless ``keep``."""
    work = Path(tempfile.mkdtemp(prefix="shop-bench-"))
    databases, cleanups = [], []
    try:
        yield work, databases, cleanups
    finally:
        for stop in reversed(cleanups):  # a worker before its receiver
            stop()
        for drop in databases:
            drop()
        if keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


def add_server_arguments(parser: argparse.ArgumentParser) -> None:
    """The database, gunicorn, wrk and clean-up options both benchmarks take."""
    parser.add_argument(
        "--database-url",
        default=os.environ.get("BENCH_DATABASE_URL"),
        help="postgresql://... to run on PostgreSQL (a throw-away schema is made in it);"
        " SQLite in a temporary folder by default",
    )
    parser.add_argument("--workers", type=int, default=int(os.environ.get("WEB_CONCURRENCY", 1)))
    parser.add_argument("--threads", type=int, default=int(os.environ.get("SHOP_THREADS", 8)))
    parser.add_argument("--connections", type=int, default=16, help="wrk connections")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")


def _parse(argv):
    parser = argparse.ArgumentParser(prog="python -m bench.run", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="a tenth of the data, 3 s runs")
    add_server_arguments(parser)
    parser.add_argument(
        "--redis-url",
        default=os.environ.get("BENCH_REDIS_URL"),
        help="redis://... for the rate-limit storage (needed for --workers > 1)",
    )
    parser.add_argument("--duration", type=int, help="seconds per wrk run (default 6, quick 3)")
    parser.add_argument(
        "--only", metavar="TEXT", help="only the scenarios whose name holds TEXT (no scaling)"
    )
    parser.add_argument(
        "--webhook",
        nargs="?",
        const="deliver",
        choices=["deliver", "outbox"],
        help="one webhook subscribed to every event, delivered by the worker meanwhile"
        " (deliver, the default) or only queued, with no worker running (outbox);"
        " see bench/webhook.py",
    )
    args = parser.parse_args(argv)
    args.duration = args.duration or (3 if args.quick else 6)
    if args.workers > 1 and not args.redis_url:
        parser.error("--workers > 1 needs --redis-url (rate limits are counted in Redis)")
    return args


def new_database(pg_url, work: Path, name: str, databases: list) -> str:
    """A fresh, empty database: a SQLite file, or a schema of its own in PostgreSQL."""
    if not pg_url:
        return f"sqlite:///{work / (name + '.db')}"
    import psycopg

    schema = f"bench_{name}_{secrets.token_hex(4)}"
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")

    def drop():
        with psycopg.connect(pg_url, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")

    databases.append(drop)
    separator = "&" if "?" in pg_url else "?"
    return f"{pg_url}{separator}options={quote(f'-csearch_path={schema}')}"


def app_on(url: str):
    """The app on ``url``, its schema upgraded (as the Procfile's release step does)."""
    from shop import create_app, migrate

    app = create_app({"DATABASE_URL": url, "REDIS_URL": None, "RATELIMIT_ENABLED": False})
    with app.app_context():
        migrate.upgrade(app.extensions["shop.db"])
    return app


def seed_database(url: str, size: seed.Size) -> seed.Seeded:
    from shop import migrate

    app = app_on(url)
    with app.app_context():
        result = seed.seed(size)
        migrate.finish(app.extensions["shop.db"])  # recount the list totals the seeding skipped
        app.extensions["shop.db"].analyze(full=True)  # as after any bulk write
    app.extensions["shop.db"].close_all()
    return result


@contextmanager
def data_of(env: dict, scenario: Scenario):
    """The scenario's own data (``Scenario.data``), present while the block runs."""
    if scenario.data is None:
        yield
        return
    app = app_on(env["DATABASE_URL"])
    try:
        with app.app_context(), scenario.data():
            yield
    finally:
        app.extensions["shop.db"].close_all()


def _describe_counts(counts: dict) -> str:
    return ", ".join(f"{value:,} {name.replace('_', ' ')}" for name, value in counts.items())


def server_env(args, url: str) -> dict:
    env = {"DATABASE_URL": url, "SHOP_COOKIE_SECURE": "0"}
    env["SHOP_ACCESS_LOG"] = os.environ.get("SHOP_ACCESS_LOG", "0")  # an A/B of its cost
    if args.redis_url:
        env["REDIS_URL"] = args.redis_url
        env["SHOP_RATELIMIT_KEY_PREFIX"] = f"bench-{secrets.token_hex(4)}"
    return env


def start_server(
    args, env: dict, work: Path, app="app:app", ready="/openapi.json", root=ROOT, **extra
):
    """gunicorn serving ``app`` from the checkout at ``root``; ``extra`` adds to ``env``."""
    log = open(work / "gunicorn.log", "ab")  # noqa: SIM115 - closed with the server
    server = LiveServer(
        {**env, **extra},
        workers=args.workers,
        threads=args.threads,
        app=app,
        log=log,
        ready_path=ready,
        root=root,
    )
    server.log = log
    return server


def stop_server(server: LiveServer) -> None:
    server.stop()
    server.log.close()


def _run_baseline(args, env, seeded: seed.Seeded, work: Path, rows: list) -> dict:
    """Measure the bare baseline; answer its requests/s by name."""
    base = scenarios.baseline(seeded)
    server = start_server(args, env, work, app="bench.baseline:app", ready="/products?page=1")
    rates = {}
    try:
        for scenario in base:
            result = wrk.measure(args, server, scenario, work)
            rates[scenario.name] = result.rps
            if result.s5xx:
                result.checks.append(("no 5xx", False))
            rows.append((scenario.name, result))
            wrk.progress(scenario.name, result)
    finally:
        stop_server(server)
    return rates


def _run_service(args, env, chosen, base, counts, work: Path, rows: list) -> float | None:
    """Measure every scenario on the service; answer the workers' peak RSS in MB.

    Rate limits stay on, as in production, but for the scenarios that would trip them
    (checkout), which run on a second server with limits off.
    """
    results, peaks = {}, []
    for limits in (True, False):
        group = [s for s in chosen if s.limits == limits]
        if not group:
            continue
        server = start_server(args, env, work, SHOP_RATELIMIT_ENABLED="1" if limits else "0")
        try:
            paths = statements.routes(server.url)
            for scenario in group:
                with data_of(env, scenario):
                    results[scenario.name] = run_scenario(args, server, scenario, paths, base, work)
                # A later scenario of the same run may take its ratio against this one.
                if results[scenario.name].rps:
                    base[scenario.name] = results[scenario.name].rps
                if counts.get(scenario.name):
                    report.judge_statements(scenario, results[scenario.name], counts[scenario.name])
            peaks.append(wrk.peak_rss_mb(server.process.pid))
        finally:
            stop_server(server)
    rows.extend((scenario.name, results[scenario.name]) for scenario in chosen)
    peaks = [p for p in peaks if p is not None]
    return max(peaks) if peaks else None


def run_scenario(args, server, scenario: Scenario, paths: set, base: dict, work) -> Result:
    """A scenario at its peak rate, then at half of it; or why it was skipped."""
    if (scenario.method, scenario.route) not in paths:
        result = Result(skipped="skipped: endpoint not on this branch yet")
        print(f"{scenario.name}: {result.skipped}", flush=True)
        return result
    result = wrk.measure(args, server, scenario, work)
    half = wrk.measure(
        args, server, scenario, work, rate=result.rps / 2, requests=scenario.half_requests
    )
    result.half_rps, result.half_p99_ms, result.half_5xx = half.rps, half.p99_ms, half.s5xx
    report.judge(scenario, result, base)
    wrk.progress(scenario.name, result)
    return result


# -- scaling ------------------------------------------------------------------------------


def _scaling(args, work, databases, main_url, size, seeded) -> list:
    """Reads on a small shop against a large one; answer (line, ok or None) pairs."""
    small_size = seed.Size(products=1_000, categories=20, keys=10, customers=10, orders=0)
    large_products = 100_000 if size is seed.FULL else 10_000
    small_url = new_database(args.database_url, work, "small", databases)
    small = seed_database(small_url, small_size)
    app = app_on(main_url)
    with app.app_context():
        from shop import db, migrate

        category_ids = [r["id"] for r in db.query("SELECT id FROM categories")]
        have = db.value("SELECT COUNT(*) FROM products")
        seed.add_products(large_products - have, category_ids, random.Random(7), seeded)
        migrate.finish(app.extensions["shop.db"])  # recount the list totals
        if app.extensions["shop.db"].engine == "postgresql":
            db.execute("ANALYZE")
    app.extensions["shop.db"].close_all()
    lines = []
    results = {}
    for label, url, data in (("small", small_url, small), ("large", main_url, seeded)):
        server = start_server(args, server_env(args, url), work)
        try:
            paths = statements.routes(server.url)
            for scenario in scenarios.service(data)[:2]:
                if (scenario.method, scenario.route) not in paths:
                    results[(label, scenario.name)] = None
                    continue
                # The better of two runs: a neighbour's burst should not decide the verdict.
                results[(label, scenario.name)] = max(
                    wrk.measure(args, server, scenario, work).rps for _ in range(2)
                )
        finally:
            stop_server(server)
    keys = size.keys
    for scenario in scenarios.service(seeded)[:2]:
        small_rps = results.get(("small", scenario.name))
        large_rps = results.get(("large", scenario.name))
        head = (
            f"{scenario.name}: 1,000 products / 10 keys -> {large_products:,} products /"
            f" {keys:,} keys"
        )
        if small_rps is None or large_rps is None:
            lines.append((f"{head}: skipped, endpoint not on this branch yet", None))
            continue
        slowdown = 1 - large_rps / small_rps
        line = f"{head}: {small_rps:,.0f} -> {large_rps:,.0f} req/s, {slowdown:+.0%} slower"
        if "{id}" in scenario.name:  # the target is on single-record reads
            ok = slowdown < SCALING_LIMIT
            line += f" (target < {SCALING_LIMIT:.0%}: {'met' if ok else 'MISSED'})"
        else:
            ok = None
            line += " (no target; the unfiltered total is a kept counter, a filtered one a COUNT)"
        lines.append((line, ok))
    return lines


def _count_statements(args, env, chosen, work: Path) -> dict:
    """Statements and writes of each scenario's request, the second time it is made."""
    server = start_server(args, env, work, SHOP_DEBUG_SQL_COUNT="1")
    try:
        return statements.count(server, chosen, lambda scenario: data_of(env, scenario))
    finally:
        stop_server(server)


if __name__ == "__main__":
    sys.exit(main())
