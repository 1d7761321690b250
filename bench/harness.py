"""What the benchmarks share: a scratch folder, fresh databases, the app on them, gunicorn
serving it on 127.0.0.1 as the Procfile does, and one scenario measured at peak and half rate.

Used by ``bench.run`` and the single-purpose benchmarks (``bench.search``, ``bench.lists``,
``bench.ab``, ``bench.webhook_cost``, ``bench.catalogue_import``).
"""

import argparse
import json
import os
import secrets
import shutil
import tempfile
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

from bench import report, seed, wrk
from bench.scenarios import Scenario
from bench.wrk import Result
from tests.live import LiveServer

ROOT = Path(__file__).resolve().parent.parent


def engine(args) -> str:
    """The engine a run measures: "postgresql" with ``--database-url``, else "sqlite"."""
    return "postgresql" if args.database_url else "sqlite"


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


def part_arguments(prog: str, doc: str, argv, full_seconds: int) -> argparse.Namespace:
    """The arguments of a part run alone (``python -m bench.search``, ``bench.storefront``):
    ``--quick``, the server's, ``--duration`` (3 s at ``--quick``, else ``full_seconds``) and
    ``--redis-url``."""
    parser = argparse.ArgumentParser(prog=prog, description=doc)
    parser.add_argument("--quick", action="store_true", help="a tenth of the data, 3 s runs")
    add_server_arguments(parser)
    parser.add_argument(
        "--duration", type=int, help=f"seconds per wrk run (default {full_seconds}, quick 3)"
    )
    parser.add_argument("--redis-url", help="REDIS_URL of the server (needed for --workers 2)")
    args = parser.parse_args(argv)
    args.duration = args.duration or (3 if args.quick else full_seconds)
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


def named_schema(pg_url: str, schema: str) -> str:
    """The URL of the PostgreSQL schema ``schema`` in ``pg_url``'s database (made if new,
    kept after the run)."""
    import psycopg

    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
    separator = "&" if "?" in pg_url else "?"
    return f"{pg_url}{separator}options={quote(f'-csearch_path={schema}')}"


def app_on(url: str):
    """The app on ``url``, its schema upgraded (as the Procfile's release step does)."""
    from shop import create_app
    from shop.schema import migrate

    app = create_app({"DATABASE_URL": url, "REDIS_URL": None, "RATELIMIT_ENABLED": False})
    with app.app_context():
        migrate.upgrade(app.extensions["shop.db"])
    return app


def seed_database(url: str, size: seed.Size) -> seed.Seeded:
    from shop.schema import migrate

    app = app_on(url)
    with app.app_context():
        result = seed.seed(size)
        migrate.finish(app.extensions["shop.db"])  # recount the list totals the seeding skipped
        app.extensions["shop.db"].analyze(full=True)  # as after any bulk write
    app.extensions["shop.db"].close_all()
    return result


def limit_key(url: str, secret: str, per_minute: int) -> None:
    """Give the API key ``secret`` its own limit of ``per_minute`` requests a minute."""
    from shop import db

    app = app_on(url)
    with app.app_context(), db.transaction():
        db.execute(
            "UPDATE api_keys SET rate_limit_per_minute = :n WHERE token_hash = :h",
            {"n": per_minute, "h": db.sha256(secret)},
        )
    app.extensions["shop.db"].close_all()


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


def run_scenario(args, server, scenario: Scenario, paths: set, base: dict, work) -> Result:
    """A scenario at its peak rate, then at half of it; or why it was skipped.

    With the Procfile's jobs worker running (``args.jobs_worker``), each run starts on an
    empty outbox: the mail and deliveries the run before queued are sent first (at most
    ``DRAIN_SECONDS``). A peak run queues faster than one worker sends on PostgreSQL, and a
    half-rate run that began on that backlog measured the burst's aftermath, not a shop at
    half its peak (its worker keeps up with its own orders meanwhile, as in any run)."""
    if (scenario.method, scenario.route) not in paths:
        result = Result(skipped="skipped: endpoint not on this branch yet")
        print(f"{scenario.name}: {result.skipped}", flush=True)
        return result
    drain_outbox(args, server)
    result = wrk.measure(args, server, scenario, work)
    drain_outbox(args, server)
    half = wrk.measure(
        args, server, scenario, work, rate=result.rps / 2, requests=scenario.half_requests
    )
    result.half_rps, result.half_p99_ms, result.half_5xx = half.rps, half.p99_ms, half.s5xx
    if not half.rps:  # paced so slowly that no request finished: no p99 to judge
        result.half_p99_ms = None
    report.judge(scenario, result, base, engine(args))
    wrk.progress(scenario.name, result)
    return result


DRAIN_SECONDS = 120  # for the jobs worker to send what one run queued


def drain_outbox(args, server) -> float:
    """With the jobs worker running (``args.jobs_worker``): wait until ``/readyz`` reports no
    mail and no delivery pending, at most ``DRAIN_SECONDS``; answer the seconds waited."""
    if not getattr(args, "jobs_worker", False):
        return 0.0
    started = time.monotonic()
    while time.monotonic() - started < DRAIN_SECONDS:
        with urllib.request.urlopen(server.url + "/readyz", timeout=10) as response:  # noqa: S310
            outbox = json.load(response)["outbox"]
        if not outbox["mail"]["pending"] and not outbox["webhooks"]["pending"]:
            break
        time.sleep(0.2)  # the worker's pace, not a test's: bounded by DRAIN_SECONDS
    return time.monotonic() - started


# -- scaling ------------------------------------------------------------------------------
