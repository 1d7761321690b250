"""The benchmark: seed a realistic shop, load it with wrk, print one table.

    python -m bench.run [--quick] [--database-url postgresql://...] [--redis-url redis://...]

Seeds the data set through the data module, measures the bare baseline (``bench/baseline.py``)
and then the service under gunicorn with the Procfile's settings on 127.0.0.1 (its worker
process beside it, ``bench/webhook.py``), each scenario
at its peak rate and again at half of it, counts the SQL statements of each scenario's request
(``SHOP_DEBUG_SQL_COUNT=1``), runs the hot routes beside bare Flask doing the same work,
taking turns (``bench/references.py``: the ratio of worker CPU per request), reads the
workers' peak RSS, measures what one webhook costs
checkout (``bench/webhook_cost.py``), the search row (``bench/search.py``), the storefront's
pages and their weight (``bench/storefront.py``), every list filter
and sort and a deep page (``bench/lists.py``), the catalogue import
(``bench/catalogue_import.py``) and checks how reads scale with the catalogue and the key
table. Everything runs on 127.0.0.1 and is removed at the end.
"""

import argparse
import os
import random
import sys
import time
from pathlib import Path

from bench import (
    catalogue_import,
    lists,
    references,
    report,
    scenarios,
    search,
    seed,
    statements,
    storefront,
    webhook,
    webhook_cost,
    wrk,
)
from bench.harness import (
    add_server_arguments,
    app_on,
    data_of,
    new_database,
    run_scenario,
    scratch,
    seed_database,
    server_env,
    start_server,
    stop_server,
)
from bench.scenarios import RSS_LIMIT_MB, SCALING_LIMIT


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
        worker = None
        if args.webhook != "outbox":
            worker = webhook.Worker(main_url, env, work / "worker.log")
            cleanups.append(worker.stop)
        args.jobs_worker = worker is not None  # each row's runs start on an empty outbox
        rows, footer = [], []
        base = _run_baseline(args, env, seeded, work, rows)
        chosen = [s for s in scenarios.service(seeded) if not args.only or args.only in s.name]
        counts = _count_statements(args, env, chosen, work)
        rss = _run_service(args, env, chosen, base, counts, work, rows)
        references.measure(args, env, chosen, work, rows, 2 if args.quick else 3)
        if rss is not None:
            verdict = "met" if rss < RSS_LIMIT_MB else "MISSED"
            footer.append((f"worker peak RSS: {rss:.0f} MB (target < {RSS_LIMIT_MB} MB: {verdict})",
                           rss < RSS_LIMIT_MB))  # fmt: skip
        if worker and not args.webhook and _chosen(args, "one webhook"):
            cost = webhook_cost.compare(
                args, work, main_url, seeded, worker, 2 if args.quick else 4
            )
            footer.append((cost.line(), cost.met))
        if _chosen(args, search.NAME):
            search.measure(args, work, databases, rows)
        if _chosen(args, storefront.PREFIX):
            footer += storefront.measure(args, work, databases, rows)
        lists.measure(args, work, databases, rows)
        if _chosen(args, catalogue_import.NAME):
            catalogue_import.measure(args, work, databases, rows)
        if not args.only:
            footer += _scaling(args, work, databases, main_url, size, seeded)
        print()
        report.print_table(args, size, rows, footer)
        missed = [name for name, result in rows if any(not ok for _, ok in result.checks)]
        missed += [line for line, ok in footer if ok is False]
        if args.webhook:
            print(f"webhook receiver got {receiver.received:,} deliveries", flush=True)
        return 1 if missed else 0


def _chosen(args, name: str) -> bool:
    """Whether ``--only`` lets the part called ``name`` run."""
    return not args.only or args.only in name


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


def _describe_counts(counts: dict) -> str:
    return ", ".join(f"{value:,} {name.replace('_', ' ')}" for name, value in counts.items())


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


def _scaling(args, work, databases, main_url, size, seeded) -> list:
    """Reads on a small shop against a large one; answer (line, ok or None) pairs."""
    small_size = seed.Size(products=1_000, categories=20, keys=10, customers=10, orders=0)
    large_products = 100_000 if size is seed.FULL else 10_000
    small_url = new_database(args.database_url, work, "small", databases)
    small = seed_database(small_url, small_size)
    app = app_on(main_url)
    with app.app_context():
        from shop import db
        from shop.schema import migrate

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
            f"scaling, {scenario.name}: 1,000 products / 10 keys -> {large_products:,} products /"
            f" {keys:,} keys"
        )
        if small_rps is None or large_rps is None:
            lines.append((f"{head}: skipped, endpoint not on this branch yet", None))
            continue
        slowdown = 1 - large_rps / small_rps
        line = f"{head}: {small_rps:,.0f} -> {large_rps:,.0f} req/s, {slowdown:+.0%} slower"
        if scenario.route == "/products/{}":  # the target is on single-record reads
            ok = slowdown < SCALING_LIMIT
            line += f" (target < {SCALING_LIMIT:.0%}: {'met' if ok else 'MISSED'})"
        else:
            ok = None
            line += " (no target; the unfiltered total is a kept counter, a filtered one a COUNT)"
        lines.append((line, ok))
    return lines


def _count_statements(args, env, chosen, work: Path) -> dict:
    """Statements and writes of each scenario's request, the second time it is made, on
    one worker (with two, the second request may land on the worker that has not kept the
    key yet, and the count would say how the requests were spread). With Redis, counted once
    the worker's listener is subscribed (a node keeps no key before it hears revocations):
    the steady state, not the first second after the worker started."""
    one = argparse.Namespace(**{**vars(args), "workers": 1})
    server = start_server(one, env, work, SHOP_DEBUG_SQL_COUNT="1")
    try:
        keyed = [s for s in chosen if s.method == "GET" and s.headers][:1]
        statements.count(server, keyed, lambda scenario: data_of(env, scenario))
        statements.await_listener(env)
        return statements.count(server, chosen, lambda scenario: data_of(env, scenario))
    finally:
        stop_server(server)


if __name__ == "__main__":
    sys.exit(main())
