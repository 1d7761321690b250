"""The verdicts on each scenario and the one table the benchmark prints."""

import os
import platform

from bench.scenarios import Scenario
from bench.wrk import WRK_THREADS, Result, describe_split


def judge_statements(scenario: Scenario, result: Result, count: tuple) -> None:
    """Record a scenario's statement count, and its verdict when it has a limit."""
    statements, writes, status = count
    result.statements = f"{statements}/{writes}" + ("" if status < 400 else f" ({status})")
    if scenario.max_statements:
        limit = scenario.max_statements
        ok = statements <= limit[0] and writes <= limit[1] and status < 400
        result.checks.insert(0, (f"<={limit[0]} stmt, {limit[1]} writes", ok))


def judge(scenario: Scenario, result: Result, base: dict, engine: str = "sqlite") -> None:
    """Put the throughput and latency verdicts on a result (``engine``: "sqlite" or
    "postgresql", for the targets set on one engine only)."""
    if scenario.baseline and base.get(scenario.baseline):
        result.ratio = result.rps / base[scenario.baseline]
        if scenario.min_ratio and scenario.ratio_engine in (None, engine):
            ok = result.ratio >= scenario.min_ratio
            result.checks.append((f"ratio>={scenario.min_ratio}", ok))
    result.checks.append(("no 5xx", result.s5xx == 0 and result.half_5xx == 0))
    limit = scenario.p99_limit_ms
    p99 = result.half_p99_ms
    result.checks.append((f"p99@half<{limit:g}ms", p99 is not None and p99 < limit))


def print_table(args, size, rows, footer) -> None:
    """The table of ``rows`` ((name, Result) pairs), then the ``footer``'s (line, ok) lines."""
    engine = "PostgreSQL" if args.database_url else "SQLite"
    if args.redis_url:
        engine += " + Redis"
    print(
        f"shop benchmark: {engine}, gunicorn {args.workers} worker(s) x {args.threads} threads"
        f" (gthread), wrk {WRK_THREADS} thread x {args.connections} connections x {args.duration}s,"
        f" {os.cpu_count()} CPUs, Python {platform.python_version()}"
    )
    print(
        f"data: {size.products:,} products in {size.categories} categories,"
        f" {size.keys:,} API keys, {size.customers:,} customers, {size.orders:,} orders"
    )
    header = (
        "scenario",
        "req/s",
        "p50 ms",
        "p99 ms",
        "errors",
        "ratio",
        "CPU us/req",
        "conns",
        "p99@half ms",
        "SQL/writes",
        "targets",
    )
    table = []
    for name, r in rows:
        if r.skipped:
            table.append((name, "-", "-", "-", "-", "-", "-", "-", "-", "-", r.skipped))
            continue
        verdicts = ", ".join(f"{label} {'met' if ok else 'MISSED'}" for label, ok in r.checks)
        ratio = r.ratio
        table.append(
            (
                name,
                f"{r.rps:,.0f}",
                f"{r.p50_ms:.1f}" if r.p50_ms is not None else "-",
                f"{r.p99_ms:.1f}" if r.p99_ms is not None else "-",
                f"{r.errors}" + (f" ({r.s5xx} 5xx)" if r.s5xx else ""),
                f"{ratio:.2f}" if ratio is not None else "-",
                f"{r.cpu_us:,.0f}",
                describe_split(r),
                f"{r.half_p99_ms:.1f}" if r.half_p99_ms is not None else "-",
                r.statements,
                f"{r.note}: {verdicts}" if r.note else verdicts,
            )
        )
    widths = [max(len(str(row[i])) for row in [header, *table]) for i in range(len(header))]
    for row in [header, tuple("-" * w for w in widths), *table]:
        cells = [
            str(cell).ljust(width) if i in (0, 10) else str(cell).rjust(width)
            for i, (cell, width) in enumerate(zip(row, widths, strict=True))
        ]
        print("  ".join(cells).rstrip())
    print()
    for line, _ in footer:
        print(line)
