"""The catalogue import's budget (issue 25; issue 35, finding 8): 10,000 rows in one request
within 30 s, and a checkout kept under 3 s while any import runs.

    python -m bench.catalogue_import [--rows 10000] [--database-url postgresql://...]
        [--root OTHER_CHECKOUT]

Makes a fresh database (SQLite in a temporary folder, or a throw-away schema in PostgreSQL),
an owner, and a CSV of ``--rows`` rows: products of 10 variants each (option Size with 10
values), names and descriptions with quotes, commas, line breaks and non-Latin text. Then,
against gunicorn with the Procfile's settings, times one ``POST /products/import`` of the
whole file four times: a dry run into the empty shop, then for real (every row created),
the same file again (every row unchanged) and the file with every price changed (every row
updated). During each a customer checks out one unit every quarter second (``CheckoutProbe``)
and the row shows the slowest checkout. Exits 1 when an import takes longer than its budget
(``BUDGET_SECONDS`` per 10,000 rows) or a checkout longer than ``CHECKOUT_BUDGET``.
``python -m bench.run`` prints the same as rows of its table (at ``--quick`` the first
import only). ``--root`` serves another checkout of the shop (the numbers before a change).
"""

import argparse
import csv
import io
import json
import secrets
import sys
import threading
import time
import urllib.error
import urllib.request
from http.cookiejar import CookieJar
from pathlib import Path

from bench import wrk
from bench.harness import (
    ROOT,
    add_server_arguments,
    app_on,
    new_database,
    scratch,
    server_env,
    start_server,
    stop_server,
)
from bench.wrk import Result

BUDGET_SECONDS = 30.0  # per 10,000 rows
CHECKOUT_BUDGET = 3.0  # the slowest checkout while an import runs (issue 35)
VARIANTS = 10
ROWS = 10_000
NAME = "POST /products/import (10,000 rows)"
ADDRESS = {"name": "Probe", "line1": "1 High St", "city": "Bath", "postal_code": "BA1 1AA"}


class CheckoutProbe:
    """A customer checking out one unit of its own product every ``every`` seconds while
    the block runs (one at a time, each bounded by ``timeout``): ``latencies`` and
    ``statuses`` of each. Made through the API of the server at ``base``, with ``owner`` an
    opener signed in as the owner."""

    def __init__(self, base: str, owner, every: float = 0.25, timeout: float = 120.0):
        self.base, self.every, self.timeout = base, every, timeout
        self.latencies, self.statuses = [], []
        body = {"name": "Probe", "price_cents": 100, "stock": 100_000, "sku": "PROBE-1"}
        self.product = call(owner, base + "/products", body)["id"]
        self.customer = opener()
        email = f"probe-{secrets.token_hex(4)}@example.com"
        account = {"email": email, "password": secrets.token_urlsafe(16), "name": "Probe"}
        call(self.customer, base + "/auth/register", account)
        self.body = {
            "items": [{"product_id": self.product, "quantity": 1}],
            "shipping_address": {**ADDRESS, "country": "GB"},
            "payment_method": "manual",
        }
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="checkout-probe", daemon=True)

    def __enter__(self):
        self._stop.clear()
        self.latencies, self.statuses = [], []
        self._thread = threading.Thread(target=self._run, name="checkout-probe", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *_exc):
        self._stop.set()
        self._thread.join(self.timeout + 5)

    def _run(self) -> None:
        while not self._stop.is_set():
            started = time.monotonic()
            try:
                call(self.customer, self.base + "/payments/checkout", self.body, self.timeout)
                status = 201
            except urllib.error.HTTPError as error:
                status = error.code
            except OSError:  # a timeout or a reset: the checkout did not answer
                status = 0
            self.latencies.append(time.monotonic() - started)
            self.statuses.append(status)
            self._stop.wait(self.every)

    @property
    def worst(self) -> float:
        return max(self.latencies, default=0.0)


def catalogue_csv(rows: int, cents_offset: int = 0, variants: int = VARIANTS) -> bytes:
    """``rows`` rows, ``variants`` per product; ``cents_offset`` shifts every price."""
    from shop.catalogue.files.export import HEADER

    sizes = [f"S{i}" for i in range(variants)]
    out = io.StringIO()
    writer = csv.DictWriter(out, HEADER, lineterminator="\r\n")
    writer.writeheader()
    for number in range(rows):
        product, variant = divmod(number, variants)
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
    """The import rows: a dry run of ``ROWS`` rows and the same into an empty shop, and (but
    at ``--quick``) the same file again and the file with every price changed, each with a
    customer checking out meanwhile; append them to ``rows``."""
    count = getattr(args, "rows", ROWS)
    url = new_database(args.database_url, work, "import", databases)
    app = app_on(url)
    email, password = "owner@example.com", secrets.token_urlsafe(16)
    with app.app_context():
        from shop.auth.users import create_user

        create_user(email, "Owner", password, "owner", [])
    app.extensions["shop.db"].close_all()
    root = getattr(args, "root", None) or ROOT
    env = {**server_env(args, url), "SHOP_RATELIMIT_ENABLED": "0"}
    env["SHOP_IMPORT_MAX_ROWS"] = str(max(count, 50_000))  # past the cap: to show the scaling
    server = start_server(args, env, work, root=root)
    try:
        owner = opener()
        call(owner, server.url + "/auth/login", {"email": email, "password": password})
        probe = CheckoutProbe(server.url, owner)
        each = getattr(args, "variants", VARIANTS)
        first = catalogue_csv(count, variants=each)
        runs = [("created", first, True), ("created", first, False)]
        runs += [("unchanged", first, False), ("updated", catalogue_csv(count, 1, each), False)]
        for expected, body, dry_run in runs[:2] if args.quick else runs:
            name = NAME.replace("10,000", f"{count:,}") + (", dry run" if dry_run else "")
            name += f", {expected}"
            cpu = wrk.cpu_seconds(server.process.pid)
            started = time.monotonic()
            with probe:
                answer = send_import(owner, server.url, body, dry_run)
            seconds = time.monotonic() - started
            cpu = wrk.cpu_seconds(server.process.pid) - cpu
            result = Result(rps=count / seconds, p50_ms=None, p99_ms=None, half_p99_ms=None)
            result.cpu_us = cpu / count * 1e6
            result.errors = len(answer["errors"])
            budget = BUDGET_SECONDS * max(1, count / ROWS)
            result.note = (
                f"{seconds:.1f} s, {len(body) / 1e6:.1f} MB CSV, slowest of"
                f" {len(probe.latencies)} checkouts {probe.worst:.2f} s (req/s: rows/s, CPU"
                " per row)"
            )
            result.checks.append((f"all {expected}", answer[expected] == count))
            result.checks.append((f"<={budget:.0f}s", seconds <= budget))
            result.checks.append(
                (f"checkout<={CHECKOUT_BUDGET:.0f}s", probe.worst <= CHECKOUT_BUDGET)
            )
            rows.append((name, result))
            print(f"{name}: {seconds:.1f} s ({count / seconds:,.0f} rows/s), {answer['created']}"
                  f" created, {answer['updated']} updated, {answer['unchanged']} unchanged,"
                  f" {len(answer['errors'])} errors; checkouts: {len(probe.latencies)},"
                  f" slowest {probe.worst:.2f} s, statuses {sorted(set(probe.statuses))}",
                  flush=True)  # fmt: skip
    finally:
        stop_server(server)


def main(argv=None) -> int:
    args = _parse(argv)
    rows = []
    with scratch(args.keep) as (work, databases, _cleanups):
        measure(args, work, databases, rows)
    return 1 if any(not ok for _, result in rows for _, ok in result.checks) else 0


def opener():
    """An HTTP client keeping its cookies (a signed-in session)."""
    return urllib.request.build_opener(urllib.request.HTTPCookieProcessor(CookieJar()))


def call(client, url: str, body: dict, timeout: float = 30) -> dict:
    """POST ``body`` as JSON; answer the JSON answer (HTTPError on 4xx/5xx)."""
    request = urllib.request.Request(  # noqa: S310 - http://127.0.0.1 of start_server
        url, json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    with client.open(request, timeout=timeout) as response:  # noqa: S310 - our own server
        return json.loads(response.read())


def send_import(client, base: str, body: bytes, dry_run: bool = False) -> dict:
    """``POST /products/import`` of a CSV file; its answer."""
    request = urllib.request.Request(  # noqa: S310 - http://127.0.0.1 of start_server
        f"{base}/products/import?dry_run={str(dry_run).lower()}",
        body,
        {"Content-Type": "text/csv"},
        method="POST",
    )
    with client.open(request, timeout=900) as response:  # noqa: S310 - our own http server
        return json.loads(response.read())


def _parse(argv):
    parser = argparse.ArgumentParser(
        prog="python -m bench.catalogue_import", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--rows", type=int, default=ROWS, help="rows in the file (10000)")
    parser.add_argument("--variants", type=int, default=VARIANTS, help="per product (10)")
    parser.add_argument("--root", type=Path, help="serve this checkout of the shop instead")
    add_server_arguments(parser)
    args = parser.parse_args(argv)
    args.redis_url, args.quick = None, False
    return args


if __name__ == "__main__":
    sys.exit(main())
