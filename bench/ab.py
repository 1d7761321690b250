"""Two revisions of the shop in one run, taking turns: is B as fast as A?

    python -m bench.ab REV_A REV_B [--rounds 5] [--duration 5] [--database-url postgresql://...]
                       [--workers 2 --redis-url redis://...] [--env-b SHOP_THREADS=2]
                       [--references] [--half] [--jobs] [--storefront [--quick]]
                       [--lists PATH [--only TEXT]]

Checks both revisions out into temporary git worktrees (``git worktree add --detach``, removed
at the end) and refuses when their ``schema.sql`` or ``migrations/`` differ: both serve ONE
data set, the quick one (``bench/seed.py``; ``--storefront``: below), seeded by this
checkout's code. One gunicorn per
revision serves it from its worktree with the benchmark's settings and limits off, both with
this checkout's ``.venv`` (the same libraries), on 127.0.0.1 (``--limits N``: limits on and
the key limited to N a minute). Each round runs wrk
(``bench/wrk.py``) on the keyed product read, the product list and checkout
(``bench/scenarios.py``), A then B on even rounds and B then A on odd ones.

``--storefront`` compares the storefront's rows instead (``bench/storefront.py``: home, category,
product and search pages, and their reference, the API's page of 20) on the storefront's data
set, the full one (10,000 products in 200 categories) unless ``--quick``; ``--half`` also runs
each at half of that run's peak rate and reports its p99 (the rows' latency target).

``--jobs`` runs each side's jobs worker (``flask jobs run``, from its checkout, with its
``--env-*``) through that side's turns, as ``bench.run`` runs the Procfile's worker beside the
server: started and settled before wrk, the mail its turn queued (one message a checkout)
drained after it, then stopped; each turn prints its half-rate p99, the mail still waiting
when the full-speed run ended, and the worker's CPU per message, and the table the medians.
Without it no worker runs, and checkout's rows leave out the worker's competition for the
cores (issue 42: checkout's p99 at half rate).

Taking turns in one run compares like with like: separate benchmark runs on this shared
two-core machine differ by more than the change being measured (``bench/webhook_cost.py``
does the same for one webhook). Prints each run, then per scenario the median rates of A and
B, their ratio B/A and the median CPU time per request; exits 0 (it judges nothing), or 2
when it refuses. ``--references`` also serves bare Flask (``bench/baseline.py``, this
checkout's) and runs, in the same turns, the bare reference of each scenario that has one
(``bench/references.py``), printing reference CPU / service CPU for A and for B: the issue
42 ratio before and after, from one run.
"""

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench import harness, lists, references, scenarios, seed, storefront, wrk

# The scenarios compared, by their name in bench/scenarios.py.
COMPARED = ("GET /products/{id} (key)", "GET /products (anonymous, 20)", "POST /payments/checkout")
SHARED = ("schema.sql", "migrations")  # what both revisions must have alike
GIT_TIMEOUT = 120


def main(argv=None) -> int:
    args = _parse(argv)
    wrk.ensure()
    commits = {"A": _commit(args.rev_a), "B": _commit(args.rev_b)}
    with harness.scratch(args.keep) as (work, databases, cleanups):
        trees = {label: _worktree(rev, work / label, cleanups) for label, rev in commits.items()}
        different = _differences(trees["A"], trees["B"])
        if different:
            print(
                f"refusing: {args.rev_a} and {args.rev_b} differ in {', '.join(different)};"
                " both revisions must serve the same data set",
                file=sys.stderr,
            )
            return 2
        if args.lists:
            url, chosen = _list_rows(args, work, databases)
        else:
            url = harness.new_database(args.database_url, work, "main", databases)
            size = seed.FULL if args.storefront and not args.quick else seed.QUICK
            seeded = harness.seed_database(url, size)
            if args.limits:
                harness.limit_key(url, seeded.order_key, args.limits)
            print(f"seeded {', '.join(f'{v:,} {k}' for k, v in seeded.counts.items())}", flush=True)
            chosen = _chosen(args, seeded, size)
        env = harness.server_env(args, url)
        servers = {}
        for label, tree in trees.items():
            settings = dict(args.env_a if label == "A" else args.env_b)
            limits = "1" if args.limits else "0"
            server = harness.start_server(
                args, env, work, root=tree, **{"SHOP_RATELIMIT_ENABLED": limits, **settings}
            )
            cleanups.append(lambda server=server: harness.stop_server(server))
            servers[label] = server
        bare = _references(chosen) if args.references else {}
        if bare:
            server = harness.start_server(args, env, work, app="bench.baseline:app", ready="/fixed")
            cleanups.append(lambda server=server: harness.stop_server(server))
            servers["R"] = server
        results = {(s.name, label): [] for s in chosen for label in ("A", "B", "R")}
        for number in range(args.rounds):
            for scenario in chosen:
                order = ("A", "B", "R") if scenario.name in bare else ("A", "B")
                for label in order if number % 2 == 0 else reversed(order):
                    run = bare[scenario.name] if label == "R" else scenario
                    jobs = _Jobs(args, url, env, work, label, trees.get(label))
                    # The scenario's own data (the carts' rows: bench/carts.py), made for
                    # each turn, as bench.run makes it for its run.
                    with harness.data_of(env, run), jobs:
                        result = wrk.measure(args, servers[label], run, work)
                        if args.half:
                            jobs.note_backlog()
                            half = wrk.measure(args, servers[label], run, work, rate=result.rps / 2)
                            result.half_rps, result.half_p99_ms = half.rps, half.p99_ms
                    result.jobs_cpu_us = jobs.cpu_per_message()
                    results[(scenario.name, label)].append(result)
                    wrk.progress(f"round {number + 1}, {label}, {run.name}", result)
                    if jobs.running:
                        print(f"  {jobs.describe(result)}", flush=True)
        print()
        print(_table(args, commits, chosen, results))
    return 0


class _Jobs:
    """``--jobs``: the Procfile's jobs worker (``flask jobs run``) of one side, from its own
    checkout and with its ``--env-*``, through that side's turn: started (and its first pass
    of periodic jobs let settle) before wrk, the mail the turn queued drained after it, then
    stopped, so each side's worker sends exactly its own orders' mail and competes with its
    own server for the cores, as the Procfile's worker does in ``bench.run``. Answers its
    CPU time per message sent."""

    READY_WITHIN = 60  # seconds for the worker to start and finish its first pass
    DRAIN_WITHIN = 300  # seconds for it to send what the turn queued

    def __init__(self, args, url, env, work, label, tree):
        self.running = bool(args.jobs and tree is not None)
        self.url, self.label = url, label
        self.settings = dict(args.env_a if label == "A" else args.env_b)
        self.env, self.work, self.tree = env, work, tree
        self.cpu = self.sent = 0.0
        self.backlog = None
        self.drained_s = 0.0

    def __enter__(self):
        if not self.running:
            return self
        from bench import webhook

        self.worker = webhook.Worker(
            self.url, {**self.env, **self.settings}, self.work / f"jobs-{self.label}.log", self.tree
        )
        self._settle()
        self.sent = -_mail_count(self.url, "sent_at IS NOT NULL")
        self.cpu = -wrk.process_cpu_seconds(self.worker.process.pid)
        return self

    def _settle(self) -> None:
        """Until the worker has started and its first pass (every periodic job) is over:
        its CPU time stops climbing."""
        deadline = time.monotonic() + self.READY_WITHIN
        pid, last = self.worker.process.pid, -1.0
        while time.monotonic() < deadline:
            if self.worker.process.poll() is not None:
                raise RuntimeError(f"the jobs worker of {self.label} exited")
            used = wrk.process_cpu_seconds(pid)
            if used > 0.5 and used - last < 0.02:  # under 4 % of a core over 0.5 s
                return
            last = used
            time.sleep(0.5)
        raise RuntimeError(f"the jobs worker of {self.label} was still busy after start")

    def note_backlog(self) -> None:
        """The mail waiting when the full-speed run ends (the half-rate run starts on it)."""
        if self.running:
            self.backlog = _mail_count(self.url, "next_attempt_at IS NOT NULL")

    def __exit__(self, *exc):
        if not self.running:
            return
        try:
            if exc[0] is None:
                started = time.monotonic()
                while _mail_count(self.url, "next_attempt_at IS NOT NULL"):
                    if time.monotonic() - started > self.DRAIN_WITHIN:
                        raise RuntimeError(f"the jobs worker of {self.label} did not drain")
                    time.sleep(0.2)
                self.drained_s = time.monotonic() - started
                self.cpu += wrk.process_cpu_seconds(self.worker.process.pid)
                self.sent += _mail_count(self.url, "sent_at IS NOT NULL")
        finally:
            self.worker.stop()

    def cpu_per_message(self) -> float | None:
        return self.cpu / self.sent * 1e6 if self.running and self.sent > 0 else None

    def describe(self, result) -> str:
        half = "" if result.half_p99_ms is None else f"half rate: p99 {result.half_p99_ms:.1f} ms; "
        return (
            f"{half}jobs worker: {self.sent:,.0f} mails, {self.cpu_per_message() or 0:,.0f} us CPU"
            f" each; {self.backlog} waiting after the full-speed run, the rest drained"
            f" {self.drained_s:.1f} s after the half-rate run"
        )


def _mail_count(url: str, where: str) -> int:
    """Messages of the outbox matching ``where`` (a fixed condition of this module)."""
    if url.startswith("postgresql"):
        import psycopg

        with psycopg.connect(url, autocommit=True) as conn:
            return conn.execute(f"SELECT count(*) FROM mail_outbox WHERE {where}").fetchone()[0]
    import sqlite3

    conn = sqlite3.connect(_sqlite_path(url), timeout=30)
    try:
        return conn.execute(f"SELECT count(*) FROM mail_outbox WHERE {where}").fetchone()[0]
    finally:
        conn.close()


def _sqlite_path(url: str) -> str:
    return url.removeprefix("sqlite:///") if url.startswith("sqlite:///") else url


def _list_rows(args, work, databases: list) -> tuple[str, list]:
    """``--lists``: the kept shop's URL and the list rows ``--only`` chooses; wrk from one
    connection, as ``bench.lists`` runs them."""
    data = argparse.Namespace(data=args.lists, database_url=args.database_url, quick=False)
    order_key, values, url = lists.data(data, work, databases)
    args.connections = 1
    shop_size = lists.size(quick=False)
    chosen = set().union(*(lists.chosen_rows(only, shop_size) for only in args.only or [None]))
    return url, lists.scenarios(values, order_key, shop_size, chosen)


def _chosen(args, seeded: seed.Seeded, size: seed.Size) -> list:
    """The scenarios compared: ``--scenario``'s, the storefront's rows, or ``COMPARED``."""
    if args.storefront:
        pages = [("GET", f"/products?page={n}", "") for n in range(1, 11)]
        found = [scenarios.Scenario(storefront.REFERENCE, "GET", "/products", pages)]
        found += storefront.scenarios(size.products, size.categories)
    else:
        found = scenarios.service(seeded)
    named = {s.name: s for s in found}
    if args.scenario:
        return [named[name] for name in args.scenario]
    return found if args.storefront else [named[name] for name in COMPARED]


def _parse(argv):
    parser = argparse.ArgumentParser(prog="python -m bench.ab", description=__doc__.split("\n")[0])
    parser.add_argument("rev_a", metavar="REV_A", help="the revision compared against (before)")
    parser.add_argument("rev_b", metavar="REV_B", help="the revision measured (after)")
    parser.add_argument("--rounds", type=int, default=5, help="runs of each scenario per side (5)")
    parser.add_argument("--duration", type=int, default=5, help="seconds per wrk run (5)")
    parser.add_argument(
        "--scenario",
        action="append",
        metavar="NAME",
        help="a scenario of bench/scenarios.py by its full name, instead of the three above"
        " (repeatable)",
    )
    parser.add_argument(
        "--storefront",
        action="store_true",
        help="the storefront's rows and their reference, on the full data set (10,000"
        " products) unless --quick",
    )
    parser.add_argument("--quick", action="store_true", help="with --storefront: 1,000 products")
    parser.add_argument(
        "--half", action="store_true", help="also run each at half its peak rate: its p99"
    )
    parser.add_argument(
        "--lists",
        metavar="PATH",
        help="the list rows of bench.lists on the shop `python -m bench.lists --data PATH` kept",
    )
    parser.add_argument(
        "--only",
        action="append",
        metavar="TEXT",
        help="with --lists: the rows whose name holds TEXT (repeatable)",
    )
    harness.add_server_arguments(parser)
    parser.add_argument(
        "--limits",
        type=int,
        default=0,
        metavar="N",
        help="rate limits on (off by default), the scenarios' API key limited to N requests a"
        " minute: what limits and their RateLimit fields cost (checkout is then mostly 429s)",
    )
    parser.add_argument(
        "--redis-url",
        default=os.environ.get("BENCH_REDIS_URL"),
        help="redis://... the servers need for --workers > 1 (gunicorn.conf.py refuses"
        " several workers without it; the key cache announces changes over it)",
    )
    for side in ("a", "b"):
        parser.add_argument(
            f"--env-{side}",
            action="append",
            default=[],
            type=_setting,
            metavar="NAME=VALUE",
            help=f"an environment variable for {side.upper()}'s server only (repeatable): one"
            " revision twice with a setting changed, e.g. --env-b SHOP_THREADS=2",
        )
    parser.add_argument(
        "--jobs",
        action="store_true",
        help="run each side's jobs worker (flask jobs run, from its checkout, with its"
        " --env-*) through its turns, as the Procfile runs it beside the server, and report"
        " its CPU per message sent (each checkout queues one)",
    )
    parser.add_argument(
        "--references",
        action="store_true",
        help="also run each scenario's bare reference (bench/references.py) in the same turns",
    )
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.duration < 1:
        parser.error("--rounds and --duration must be at least 1")
    if args.workers > 1 and not args.redis_url:
        parser.error("--workers > 1 needs --redis-url (or BENCH_REDIS_URL)")
    return args


def _setting(text: str) -> tuple[str, str]:
    name, equals, value = text.partition("=")
    if not equals or not name:
        raise argparse.ArgumentTypeError(f"not NAME=VALUE: {text!r}")
    return name, value


def _git(*arguments: str) -> str:
    return subprocess.run(
        ["git", *arguments],
        cwd=harness.ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=GIT_TIMEOUT,
    ).stdout.strip()


def _commit(revision: str) -> str:
    """The commit a revision names, or exit with git's message."""
    try:
        return _git("rev-parse", "--verify", "--end-of-options", f"{revision}^{{commit}}")
    except subprocess.CalledProcessError as error:
        sys.exit(f"not a revision: {revision} ({error.stderr.strip()})")


def _worktree(commit: str, path: Path, cleanups: list) -> Path:
    """A detached worktree of ``commit`` at ``path``, removed with the run's other leftovers."""
    _git("worktree", "add", "--detach", str(path), commit)
    cleanups.append(lambda: _git("worktree", "remove", "--force", str(path)))
    return path


def _differences(a: Path, b: Path) -> list[str]:
    """Which of SHARED differ between the two checkouts."""

    def content(path: Path) -> dict:
        files = sorted(path.rglob("*")) if path.is_dir() else [path]
        return {f.relative_to(path.parent): f.read_bytes() for f in files if f.is_file()}

    return [name for name in SHARED if content(a / name) != content(b / name)]


def _references(chosen) -> dict:
    """The bare reference of each chosen scenario that has one, by the scenario's name."""
    pairs = {pair.service: pair for pair in references.PAIRS}
    return {s.name: references.reference_of(pairs[s.name], s) for s in chosen if s.name in pairs}


def _named(settings) -> str:
    return "".join(f" {name}={value}" for name, value in settings)


def _table(args, commits: dict, chosen, results: dict) -> str:
    engine = "PostgreSQL" if args.database_url else "SQLite"
    lines = [
        f"A = {commits['A'][:10]} ({args.rev_a}{_named(args.env_a)}),"
        f" B = {commits['B'][:10]} ({args.rev_b}{_named(args.env_b)});"
        f" {engine}, gunicorn {args.workers} worker(s) x {args.threads} threads, wrk"
        f" {args.connections} connections x {args.duration}s, {args.rounds} rounds, medians",
        f"{'scenario':<30}  {'A req/s':>7}  {'B req/s':>7}  {'B/A':>5}"
        f"  {'A CPU us/req':>12}  {'B CPU us/req':>12}  {'B/A CPU':>7}"
        + (f"  {'bare CPU':>8}  {'bare/A':>6}  {'bare/B':>6}" if args.references else ""),
    ]
    for scenario in chosen:
        a, b = results[(scenario.name, "A")], results[(scenario.name, "B")]
        bare = results[(scenario.name, "R")]
        rate_a = max(statistics.median(r.rps for r in a), 1e-9)
        rate_b = statistics.median(r.rps for r in b)
        cpu_a = max(statistics.median(r.cpu_us for r in a), 1e-9)
        cpu_b = max(statistics.median(r.cpu_us for r in b), 1e-9)
        errors = sum(r.errors for r in a + b + bare)
        line = (
            f"{scenario.name:<30}  {rate_a:>7,.0f}  {rate_b:>7,.0f}  {rate_b / rate_a:>5.2f}"
            f"  {cpu_a:>12,.0f}  {cpu_b:>12,.0f}  {cpu_b / cpu_a:>7.2f}"
        )
        if args.half:
            p99 = [statistics.median(r.half_p99_ms or 0 for r in side) for side in (a, b)]
            line += f"  p99@half ms A {p99[0]:.1f}, B {p99[1]:.1f}"
        if args.jobs:
            jobs = [statistics.median(r.jobs_cpu_us or 0 for r in side) for side in (a, b)]
            line += f"  jobs CPU us/mail A {jobs[0]:,.0f}, B {jobs[1]:,.0f}"
        if bare:  # the issue 42 ratio: reference CPU / service CPU, before and after
            cpu_r = statistics.median(r.cpu_us for r in bare)
            line += f"  {cpu_r:>8,.0f}  {cpu_r / cpu_a:>6.2f}  {cpu_r / cpu_b:>6.2f}"
        lines.append(line + (f"  ({errors} errors)" if errors else ""))
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
