"""The service beside bare Flask doing the same work, taking turns (issue 42).

Each pair is a service scenario and its reference in ``bench/baseline.py``: the keyed product
read against the key's and the product's two reads, the product list against a bare page of
20, ``/auth/me`` against the session and its user, checkout against a bare write of the same
shape (the stock of two lines, the order, its lines, a payment, one transaction). Both servers
run at once; each round measures one side then the other (the order flips every round), and
the verdict is the ratio of the medians of **worker CPU per request**, reference over service
(1.0: the service costs what bare Flask costs), never one run's requests per second, which
this shared machine moves by more than the difference measured.
"""

import statistics
from dataclasses import dataclass

from bench import wrk
from bench.harness import start_server, stop_server
from bench.scenarios import Scenario
from bench.wrk import Result

KEYED_READ_RATIO = 0.8
LIST_RATIO = 0.8
AUTH_READ_RATIO = 0.8
CHECKOUT_RATIO = 0.5


@dataclass
class Pair:
    service: str  # the scenario's name in bench/scenarios.py
    reference: str  # what the reference does, as the table names it
    target: float
    path: callable  # the service path -> the reference's path


PAIRS = (
    Pair(
        "GET /products/{id} (key)",
        "bare: key + product + prices",
        KEYED_READ_RATIO,
        lambda path: "/keyed" + path,
    ),
    Pair(
        "GET /products (anonymous, 20)",
        "bare: page of 20 + total + prices",
        LIST_RATIO,
        lambda path: "/listed" + path,
    ),
    Pair("GET /auth/me (session)", "bare: session + user", AUTH_READ_RATIO, lambda path: path),
    Pair(
        "POST /payments/checkout",
        "bare: write of checkout's shape",
        CHECKOUT_RATIO,
        lambda path: "/checkout",
    ),
)


def reference_of(pair: Pair, scenario: Scenario) -> Scenario:
    """The reference's scenario: the same requests, headers and bodies, on its path."""
    return Scenario(
        pair.reference,
        scenario.method,
        "",
        [(method, pair.path(path), body) for method, path, body in scenario.requests],
        scenario.headers,
    )


def measure(args, env, service_scenarios, work, rows, rounds: int) -> None:
    """Run every pair interleaved; add one row per pair (the service's medians, the CPU
    ratio against its reference and the verdict)."""
    by_name = {s.name: s for s in service_scenarios}
    pairs = [p for p in PAIRS if p.service in by_name]
    if not pairs:
        return
    bare = start_server(args, env, work, app="bench.baseline:app", ready="/products?page=1")
    try:
        for limits in (True, False):  # as deployed: checkout runs with limits off
            group = [p for p in pairs if by_name[p.service].limits == limits]
            if not group:
                continue
            shop = start_server(args, env, work, SHOP_RATELIMIT_ENABLED="1" if limits else "0")
            try:
                for pair in group:
                    scenario = by_name[pair.service]
                    rows.append(_compare(args, work, pair, scenario, shop, bare, rounds))
            finally:
                stop_server(shop)
    finally:
        stop_server(bare)


def _compare(args, work, pair, scenario, shop, bare, rounds):
    reference = reference_of(pair, scenario)
    sides = {"service": (shop, scenario, []), "reference": (bare, reference, [])}
    for number in range(rounds):
        order = ("reference", "service") if number % 2 == 0 else ("service", "reference")
        for side in order:
            server, chosen, results = sides[side]
            result = wrk.measure(args, server, chosen, work)
            results.append(result)
            wrk.progress(f"round {number + 1}, {chosen.name}", result)
    mine, theirs = sides["service"][2], sides["reference"][2]
    cpu = statistics.median(r.cpu_us for r in mine)
    reference_cpu = statistics.median(r.cpu_us for r in theirs)
    result = Result(
        rps=statistics.median(r.rps for r in mine),
        p50_ms=statistics.median(r.p50_ms or 0 for r in mine),
        p99_ms=statistics.median(r.p99_ms or 0 for r in mine),
        errors=sum(r.errors for r in mine + theirs),
        s5xx=sum(r.s5xx for r in mine + theirs),
        cpu_us=cpu,
        ratio=reference_cpu / max(cpu, 1e-9),
        half_p99_ms=None,
        note=f"{pair.reference} {reference_cpu:,.0f} us CPU/req,"
        f" {statistics.median(r.rps for r in theirs):,.0f} req/s",
    )
    result.checks.append((f"CPU ratio>={pair.target}", result.ratio >= pair.target))
    result.checks.append(("no 5xx", result.s5xx == 0))
    return (f"{pair.service} vs bare", result)
