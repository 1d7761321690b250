"""CPU time per request in-process: the hot reads through Flask's test client, no gunicorn.

    python -m bench.inprocess [--quick] [--database-url ...] [--rounds 9] [--requests 200]
                              [--only TEXT] [--profile TEXT] [--keep-db PATH]

Seeds the benchmark's data set (``bench.seed``) into a fresh database (or reuses a SQLite file
kept by ``--keep-db``), then runs each read ``--rounds`` times ``--requests`` times and prints
the best round's process CPU time per request: what the worker pays for a request, without
the HTTP server, wrk or the database server's own CPU on PostgreSQL. ``--profile TEXT`` prints
cProfile's top functions for the reads whose name holds TEXT instead.
"""

import argparse
import cProfile
import pstats
import time
from pathlib import Path

from bench import references, run, scenarios, seed


def reads(seeded: seed.Seeded) -> list[tuple[str, str, dict, list[str]]]:
    """(name, app, headers, paths) of each read measured: the baseline's, the service's and,
    after each hot read, its bare reference (``bench/references.py``)."""
    service = scenarios.service(seeded)
    by_name = {s.name: s for s in service}
    chosen = [s for s in scenarios.baseline(seeded) if s.method == "GET"]
    for scenario in service:
        if scenario.method != "GET":
            continue
        chosen.append(scenario)
        chosen += [
            references.reference_of(pair, scenario)
            for pair in references.PAIRS
            if by_name.get(pair.service) is scenario
        ]
    return [
        (s.name, "baseline" if s.name.startswith(("baseline", "bare")) else "shop",
         {"User-Agent": seed.USER_AGENT, **s.headers},
         [path for _, path, _ in s.requests[:50]])
        for s in chosen
    ]  # fmt: skip


def measure(client, headers: dict, paths: list[str], rounds: int, count: int) -> float | None:
    """The best round's CPU µs per request (None when a request is not answered 200)."""
    for path in paths[:5]:  # warm: compiled statements, caches
        if client.get(path, headers=headers).status_code != 200:
            return None
    best = float("inf")
    for _ in range(rounds):
        started = time.process_time()
        for i in range(count):
            client.get(paths[i % len(paths)], headers=headers)
        best = min(best, (time.process_time() - started) / count * 1e6)
    return best


def main(argv=None) -> int:
    """Seed, measure, print."""
    parser = argparse.ArgumentParser(prog="python -m bench.inprocess")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--database-url")
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--only")
    parser.add_argument("--profile", metavar="TEXT")
    parser.add_argument("--keep-db", metavar="PATH", help="a SQLite file, seeded if missing")
    args = parser.parse_args(argv)
    with run.scratch(False) as (work, databases, _):
        if args.keep_db and Path(args.keep_db).exists():
            url = f"sqlite:///{Path(args.keep_db).resolve()}"
            seeded = _reseed_handles(url, args.quick)
        else:
            url = (
                f"sqlite:///{Path(args.keep_db).resolve()}"
                if args.keep_db
                else run.new_database(args.database_url, work, "main", databases)
            )
            seeded = run.seed_database(url, seed.QUICK if args.quick else seed.FULL)
            if args.keep_db:
                Path(args.keep_db + ".handles").write_text(repr(seeded.__dict__))
        _measure_all(args, url, seeded)
    return 0


def _reseed_handles(url: str, quick: bool) -> seed.Seeded:
    """The handles a previous run with ``--keep-db`` saved beside the file."""
    path = url.removeprefix("sqlite:///") + ".handles"
    return seed.Seeded(**eval(Path(path).read_text()))  # noqa: S307 - our own file


def _measure_all(args, url: str, seeded: seed.Seeded) -> None:
    import os

    os.environ["DATABASE_URL"] = url
    from bench import baseline  # reads DATABASE_URL at import
    from shop import create_app

    run.app_on(url).extensions["shop.db"].close_all()  # the schema, upgraded
    shop = create_app({"DATABASE_URL": url, "REDIS_URL": None, "RATELIMIT_ENABLED": True})
    apps = {"baseline": baseline.app, "shop": shop}
    for name, which, headers, paths in reads(seeded):
        if args.only and args.only not in name:
            continue
        app = apps[which]
        with app.app_context():
            client = app.test_client(use_cookies=False)  # else it drops the Cookie header
            if args.profile and args.profile in name:
                profile = cProfile.Profile()
                profile.enable()
                measure(client, headers, paths, 3, args.requests)
                profile.disable()
                print(f"--- {name}")
                pstats.Stats(profile).sort_stats("tottime").print_stats(30)
                pstats.Stats(profile).sort_stats("cumulative").print_stats(45)
                continue
            us = measure(client, headers, paths, args.rounds, args.requests)
            shown = "not 200, skipped" if us is None else f"{us:8,.0f} µs"
            print(f"{name:40} {shown}", flush=True)


if __name__ == "__main__":
    raise SystemExit(main())
