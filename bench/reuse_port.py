"""gunicorn's ``reuse_port`` behind deploy/nginx.conf: off against on, taking turns.

    python -m bench.reuse_port --redis-url redis://... [--database-url postgresql://...]
                               [--rounds 3] [--duration 5] [--workers 2]

Seeds the quick data set and starts two gunicorns of this checkout (``--workers`` workers,
limits off, ``SHOP_TRUSTED_PROXIES=1``), one with ``SHOP_REUSE_PORT=0`` and one with ``1``,
each behind its own nginx running deploy/nginx.conf as shipped but for the two addresses,
with Debian's ``worker_processes auto``. Each round runs wrk through nginx on the keyed
product read and checkout, off then on on even rounds and on then off on odd ones. Nothing
rebalances wrk's connections here: the spread is whatever nginx's upstream connections and
the kernel make of it. Prints per run the rate, p99, the workers' CPU per request, each
worker's share of that CPU (its share of the work) and nginx's connections per worker
half-way, then the medians per scenario and side. Then, per round and side, one worker is
stopped gracefully during a keyed-read run, and the requests that failed (5xx, socket errors,
timeouts) are counted: with ``reuse_port`` the connections queued on that worker's own socket
have no other worker to take them. Exits 0; it judges nothing.
"""

import argparse
import json
import os
import signal
import statistics
import subprocess
import time
import urllib.request

from bench import harness, scenarios, seed, wrk
from tests.edge.test_proxy import Nginx

COMPARED = ("GET /products/{id} (key)", "POST /payments/checkout")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.reuse_port", description=__doc__)
    harness.add_server_arguments(parser)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--duration", type=int, default=5)
    parser.add_argument("--redis-url", default=os.environ.get("BENCH_REDIS_URL"), required=False)
    parser.set_defaults(workers=2)
    args = parser.parse_args(argv)
    if args.workers > 1 and not args.redis_url:
        parser.error("--workers > 1 needs --redis-url")
    wrk.ensure()
    with harness.scratch(args.keep) as (work, databases, cleanups):
        url = harness.new_database(args.database_url, work, "main", databases)
        seeded = harness.seed_database(url, seed.QUICK)
        env = harness.server_env(args, url)
        env["SHOP_TRUSTED_PROXIES"] = "1"
        sides = {}
        for label, extra in (("off", {"SHOP_REUSE_PORT": "0"}), ("on", {"SHOP_REUSE_PORT": "1"})):
            server = harness.start_server(args, env, work, SHOP_RATELIMIT_ENABLED="0", **extra)
            cleanups.append(lambda server=server: harness.stop_server(server))
            proxy = Nginx(server.port, worker_processes=os.cpu_count() or 1)
            cleanups.append(proxy.stop)
            sides[label] = (server, proxy)
        chosen = {s.name: s for s in scenarios.service(seeded)}
        results = {}
        for number in range(args.rounds):
            order = ("off", "on") if number % 2 == 0 else ("on", "off")
            for name in COMPARED:
                for label in order:
                    server, proxy = sides[label]
                    result = _measure(args, server, proxy, chosen[name], work)
                    results.setdefault((name, label), []).append(result)
                    print(f"round {number + 1}, reuse_port {label}, {name}: {_line(result)}")
        stops = {"off": [], "on": []}
        for number in range(args.rounds):
            for label in ("off", "on") if number % 2 == 0 else ("on", "off"):
                server, proxy = sides[label]
                _wait_for_workers(args, server, proxy)
                result = _measure(args, server, proxy, chosen[COMPARED[0]], work, stop=True)
                stops[label].append(result["failed"])
                print(f"round {number + 1}, reuse_port {label}, a worker stopped: {_line(result)}")
        print()
        for label, failed in stops.items():
            print(f"reuse_port {label}: requests failed when one worker stopped: {failed}")
        print("| scenario | reuse_port | req/s | p99 ms | CPU µs/req | busiest worker's share |")
        print("|---|---|---|---|---|---|")
        for name in COMPARED:
            for label in ("off", "on"):
                runs = results[(name, label)]
                print(
                    f"| {name} | {label} | {_median(runs, 'rps'):,.0f} |"
                    f" {_median(runs, 'p99_ms'):.1f} | {_median(runs, 'cpu_us'):,.0f} |"
                    f" {100 * _median(runs, 'busiest'):.0f} % |"
                )
    return 0


def _measure(args, server, proxy, scenario, work, stop=False) -> dict:
    """One wrk run through ``proxy``: its figures and how the work fell on each worker.
    ``stop``: a run twice as long, a quarter of the way into which the busiest worker is
    stopped gracefully (SIGTERM, as a reload or a scale-down does; the master starts another)
    and the failed requests are counted."""
    path = work / "requests.tsv"
    with open(path, "w") as out:
        for name, value in {"User-Agent": seed.USER_AGENT, **scenario.headers}.items():
            out.write(f"H\t{name}\t{value}\n")
        for method, target, body in scenario.requests:
            out.write(f"R\t{method}\t{target}\t{body}\n")
    duration = 2 * args.duration if stop else args.duration
    command = [
        "wrk", f"-t{wrk.WRK_THREADS}", f"-c{args.connections}", f"-d{duration}s",
        "--timeout", "5s", "-s", str(wrk.LUA), f"http://127.0.0.1:{proxy.port}",
        "--", str(path), "0", str(wrk.WRK_THREADS), "0", "0",
    ]  # fmt: skip
    before = _worker_cpu(server.process.pid)
    run = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    split = []
    try:
        run.wait(timeout=duration / (4 if stop else 2))
    except subprocess.TimeoutExpired:
        if stop:
            now = _worker_cpu(server.process.pid)
            busiest = max(now, key=lambda pid: now[pid] - before.get(pid, 0.0))
            os.kill(busiest, signal.SIGTERM)  # a worker of the server this run started
        else:
            split = wrk.connections_per_worker(server.process.pid, server.port)
    output, _ = run.communicate(timeout=duration + 30)
    after = _worker_cpu(server.process.pid)
    used = [after[pid] - before.get(pid, 0.0) for pid in after]
    line = next(x for x in output.splitlines() if x.startswith("BENCH_JSON "))
    data = json.loads(line.removeprefix("BENCH_JSON "))
    requests = max(1, data["requests"])
    total = sum(used) or 1e-9
    return {
        "rps": data["requests"] / (data["duration_us"] / 1e6),
        "p99_ms": data["p99_us"] / 1000,
        "cpu_us": total / requests * 1e6,
        "busiest": max(used) / total,
        "shares": sorted((round(100 * u / total) for u in used), reverse=True),
        "split": split,
        "errors": data["s4xx"] + data["s5xx"] + data["socket_errors"] + data["timeouts"],
        "failed": data["s5xx"] + data["socket_errors"] + data["timeouts"],
    }


def _wait_for_workers(args, server, proxy, seconds: float = 120.0) -> None:
    """Poll until the server has all its workers again and answers through ``proxy``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if len(wrk.worker_processes(server.process.pid)) == args.workers:
            try:
                url = f"http://127.0.0.1:{proxy.port}/healthz"
                with urllib.request.urlopen(url, timeout=2):  # noqa: S310 - 127.0.0.1
                    return
            except OSError:
                pass
        time.sleep(0.2)  # polling for the replacement worker, bounded by the deadline
    raise RuntimeError(f"the server did not get its {args.workers} workers back in {seconds}s")


def _worker_cpu(master_pid: int) -> dict:
    """Each worker's CPU seconds so far, by pid."""
    return {
        int(folder.name): wrk.process_cpu_seconds(int(folder.name))
        for folder, _ in wrk.worker_processes(master_pid)
    }


def _line(r: dict) -> str:
    return (
        f"{r['rps']:,.0f} req/s, p99 {r['p99_ms']:.1f} ms, {r['cpu_us']:,.0f} us CPU/req,"
        f" CPU shares {'/'.join(map(str, r['shares']))} %, upstream connections per worker"
        f" {'/'.join(map(str, r['split'])) or '-'}, {r['errors']} errors"
        f" (load {os.getloadavg()[0]:.1f} at {time.strftime('%H:%M:%S')})"
    )


def _median(runs: list, key: str) -> float:
    return statistics.median(r[key] for r in runs)


if __name__ == "__main__":
    raise SystemExit(main())
