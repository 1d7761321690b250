"""The catalogue import's budget (issue 25): 10,000 rows in one request within 30 s.

    python -m bench.catalogue_import [--rows 10000] [--database-url postgresql://...]

Makes a fresh database (SQLite in a temporary folder, or a throw-away schema in PostgreSQL),
an owner, and a CSV of ``--rows`` rows: products of 10 variants each (option Size with 10
values), names and descriptions with quotes, commas, line breaks and non-Latin text. Then,
against gunicorn with the Procfile's settings, times one ``POST /products/import`` of the
whole file three times: into the empty shop (every row created), the same file again (every
row unchanged) and the file with every price changed (every row updated). Exits 1 when any
takes longer than the budget. ``python -m bench.run`` prints the same as rows of its table
(at ``--quick`` the first import only).
"""

import argparse
import csv
import io
import json
import secrets
import sys
import time
import urllib.request
from http.cookiejar import CookieJar

from bench import wrk
from bench.harness import (
    add_server_arguments,
    app_on,
    new_database,
    scratch,
    server_env,
    start_server,
    stop_server,
)
from bench.wrk import Result

BUDGET_SECONDS = 30.0
VARIANTS = 10
ROWS = 10_000
NAME = "POST /products/import (10,000 rows)"


def catalogue_csv(rows: int, cents_offset: int = 0) -> bytes:
    """``rows`` rows, ``VARIANTS`` per product; ``cents_offset`` shifts every price."""
    from shop.catalogue.files.export import HEADER

    sizes = [f"S{i}" for i in range(VARIANTS)]
    out = io.StringIO()
    writer = csv.DictWriter(out, HEADER, lineterminator="\r\n")
    writer.writeheader()
    for number in range(rows):
        product, variant = divmod(number, VARIANTS)
        cents = 1000 + (number * 37) % 9000 + cents_offset
        writer.writerow(
            {
                "product_slug": f"product-{product}",
                "product_name": f'Tea "No. {product}", green',
                "product_description": f"Line one, with a comma\nline two — 煎茶 {product}",
                "product_active": "true",
                "product_category": "",
                "product_low_stock_threshold": "",
                "product_options": json.dumps([{"name": "Size", "values": sizes}]),
                "variant_sku": f"SKU-{product}-{variant}",
                "variant_options": json.dumps({"Size": sizes[variant]}),
                "variant_price": f"{cents // 100}.{cents % 100:02d}",
                "variant_compare_at_price": "",
                "variant_stock": str(number % 50),
                "variant_weight_grams": "250",
                "variant_active": "true",
                "variant_position": str(variant + 1),
                "currency": "EUR",
            }
        )
    return out.getvalue().encode()


def measure(args, work, databases: list, rows: list) -> None:
    """The import rows: ``ROWS`` rows into an empty shop, and (but at ``--quick``) the same
    file again and the file with every price changed; append them to ``rows``."""
    count = getattr(args, "rows", ROWS)
    url = new_database(args.database_url, work, "import", databases)
    app = app_on(url)
    email, password = "owner@example.com", secrets.token_urlsafe(16)
    with app.app_context():
        from shop.auth.users import create_user

        create_user(email, "Owner", password, "owner", [])
    app.extensions["shop.db"].close_all()
    server = start_server(args, server_env(args, url), work, SHOP_RATELIMIT_ENABLED="0")
    try:
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(CookieJar()))
        _call(opener, server.url + "/auth/login", {"email": email, "password": password})
        first = catalogue_csv(count)
        runs = [("created", first), ("unchanged", first)]
        runs += [("updated", catalogue_csv(count, cents_offset=1))]
        for expected, body in runs[:1] if args.quick else runs:
            name = f"{NAME}, {expected}"
            cpu = wrk.cpu_seconds(server.process.pid)
            started = time.monotonic()
            answer = _import(opener, server.url, body)
            seconds = time.monotonic() - started
            cpu = wrk.cpu_seconds(server.process.pid) - cpu
            result = Result(rps=count / seconds, p50_ms=None, p99_ms=None, half_p99_ms=None)
            result.cpu_us = cpu / count * 1e6
            result.errors = len(answer["errors"])
            result.note = (
                f"{seconds:.1f} s, {len(body) / 1e6:.1f} MB CSV (req/s: rows/s, CPU per row)"
            )
            result.checks.append((f"all {expected}", answer[expected] == count))
            result.checks.append((f"<={BUDGET_SECONDS:.0f}s", seconds <= BUDGET_SECONDS))
            rows.append((name, result))
            print(f"{name}: {seconds:.1f} s ({count / seconds:,.0f} rows/s), {answer['created']}"
                  f" created, {answer['updated']} updated, {answer['unchanged']} unchanged,"
                  f" {len(answer['errors'])} errors", flush=True)  # fmt: skip
    finally:
        stop_server(server)


def main(argv=None) -> int:
    args = _parse(argv)
    rows = []
    with scratch(args.keep) as (work, databases, _cleanups):
        measure(args, work, databases, rows)
    return 1 if any(not ok for _, result in rows for _, ok in result.checks) else 0


def _call(opener, url: str, body: dict) -> dict:
    request = urllib.request.Request(  # noqa: S310 - http://127.0.0.1 of start_server
        url, json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    with opener.open(request, timeout=30) as response:  # noqa: S310 - our own http server
        return json.loads(response.read())


def _import(opener, base: str, body: bytes) -> dict:
    request = urllib.request.Request(  # noqa: S310 - http://127.0.0.1 of start_server
        base + "/products/import", body, {"Content-Type": "text/csv"}, method="POST"
    )
    with opener.open(request, timeout=600) as response:  # noqa: S310 - our own http server
        return json.loads(response.read())


def _parse(argv):
    parser = argparse.ArgumentParser(
        prog="python -m bench.catalogue_import", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--rows", type=int, default=ROWS, help="rows in the file (10000)")
    add_server_arguments(parser)
    args = parser.parse_args(argv)
    args.redis_url, args.quick = None, False
    return args


if __name__ == "__main__":
    sys.exit(main())
