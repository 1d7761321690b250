"""The list rows (issue 29): every documented filter and sort of ``GET /products`` and
``GET /orders``, and ``GET /products/facets`` (issue 42), at 100,000 products / 200,000
orders, and a deep page against page 1.

    python -m bench.lists [--quick] [--only TEXT] [--database-url postgresql://...]
                          [--workers 2 --redis-url redis://...] [--data PATH]

``--data PATH`` seeds the shop once and reuses it in later runs (seeding 100,000 products and
200,000 orders takes minutes): a SQLite file ``PATH.db``, or with ``--database-url`` a schema
named after PATH's last part; the seeded handles (a key, the filter values) are kept in
``PATH.json`` (``PATH.pg.json`` on PostgreSQL). The next run upgrades it as a release does.

Also run by ``python -m bench.run`` after its other scenarios. Seeds a shop of its own
(``bench/seed.py``: ``PRODUCTS`` products, ``ORDERS`` orders, a tenth at ``--quick``, plus one
collection holding every 50th product), serves it as ``bench.run`` serves the shop (limits
off) and asks each list URL of ``urls`` from **one** wrk connection in a loop for a few
seconds: nothing queues, so the p99 is what one request of that filter costs (its query and
its total), and the targets are p99 < ``P99_LIMIT_MS`` and the worker's CPU under
``CPU_LIMIT_US`` a request (issue 42). A filter that sorts the whole table
shows here at once; capacity under load is the main table's business.

The depth rows compare page ``DEPTH_PAGE`` (or the last but one page, on a smaller shop) with
page 1, one connection each, the better of two runs each, target at most ``DEPTH_LIMIT``x the
time of page 1. They follow ``next_cursor`` (the cursor pagination of issue 29): from the
answer to the page before (``?page=N-1``) when it carries one, otherwise by walking from
page 1 (at most ``WALK_SECONDS``); a list that answers no ``next_cursor`` is reported as
"skipped: no cursor". Beside them, the same page by ``?page=N`` (OFFSET), without a target:
what the cursor saves.
"""

import argparse
import json
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import quote, urlencode

from bench import harness, report, seed, wrk
from bench.scenarios import Scenario
from bench.wrk import Result

PRODUCTS = 100_000
ORDERS = 200_000
P99_LIMIT_MS = 25
CPU_LIMIT_US = 3_000
DEPTH_PAGE = 5_000
DEPTH_LIMIT = 1.2
WALK_SECONDS = 90
PAGE_SIZE = 20


def size(quick: bool) -> seed.Size:
    """The shop the list rows run on."""
    tenth = 10 if quick else 1
    return seed.Size(
        products=PRODUCTS // tenth,
        categories=200 // tenth,
        keys=10,
        customers=2_000 // tenth,
        orders=ORDERS // tenth,
    )


def seed_shop(url: str, quick: bool) -> tuple[seed.Seeded, dict]:
    """The list rows' shop on ``url``; answer the seeded handles and the filter values."""
    from shop import db
    from shop.schema import migrate

    app = harness.app_on(url)
    database = app.extensions["shop.db"]
    with app.app_context():
        seeded = seed.seed(size(quick))
        values = _collection(seeded.product_ids[::50])
        migrate.finish(database)  # recount the list totals the seeding skipped
        database.analyze(full=True)  # as after any bulk write
        vacuum(database)
        top = db.one("SELECT id, slug FROM categories WHERE parent_id IS NULL ORDER BY slug")
        leaf = db.one("SELECT id FROM categories WHERE parent_id IS NOT NULL ORDER BY slug")
        product = db.one("SELECT slug, sku FROM products WHERE sku IS NOT NULL ORDER BY slug")
        customer = db.value("SELECT customer_id FROM orders ORDER BY id LIMIT 1")
        count = db.value("SELECT COUNT(*) FROM orders")
        middle = db.value(
            "SELECT created_at FROM orders ORDER BY created_at LIMIT 1 OFFSET :n", {"n": count // 2}
        )
        stamp = db.value("SELECT MIN(created_at) FROM products")
        values.update(
            category=top["slug"], category_id=leaf["id"], slug=product["slug"],
            sku=product["sku"], customer_id=customer, middle=middle, stamp=stamp,
        )  # fmt: skip
    database.close_all()
    return seeded, values


def vacuum(database) -> None:
    """PostgreSQL: what autovacuum does soon after a bulk load, done now (the development
    VM's server runs with autovacuum off). Until a table is vacuumed its visibility map is
    empty and every index-only scan also reads each row's heap page: a filtered count of
    1,001 orders took 124 ms instead of 0.35 ms, a cost a live shop does not pay."""
    from shop import db

    if database.engine != "postgresql":
        return
    tables = db.query("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")
    for table in tables:
        name = table["tablename"].replace('"', '""')  # a name from the catalogue, quoted
        db.execute(f'VACUUM "{name}"')


def _collection(product_ids: list) -> dict:
    """One collection holding ``product_ids``; answer its id and slug."""
    from shop import db
    from shop.clock import now_iso

    cid, moment = db.new_id(), now_iso()
    with db.transaction():
        db.execute(
            "INSERT INTO collections (id, title, slug, created_at, updated_at)"
            " VALUES (:id, 'Bench picks', 'bench-picks', :now, :now)",
            {"id": cid, "now": moment},
        )
        db.execute_many(
            "INSERT INTO collection_products (collection_id, product_id, position)"
            " VALUES (:cid, :pid, :position)",
            [{"cid": cid, "pid": pid, "position": n} for n, pid in enumerate(product_ids)],
        )
    return {"collection": "bench-picks", "collection_id": cid}


def urls(v: dict) -> list[tuple[str, str, bool]]:
    """(route, query string, needs the key) of page 1 of every documented filter and sort:
    ``ProductQuerySchema`` (shop/api/products.py; ``q`` is the search row's) and
    ``OrderQuerySchema`` (shop/api/orders.py), each filter with the default sort, each sort
    unfiltered, and filters with a sort of their own."""
    products = [
        {},
        *({"sort": sort} for sort in (
            "name", "-name", "price", "-price", "created_at", "updated_at", "-updated_at")),
        {"category": v["category"]},
        {"category_id": v["category_id"]},
        {"category": v["category"], "sort": "name"},
        {"collection": v["collection"]},
        {"collection_id": v["collection_id"], "sort": "price"},
        {"price_min": 1000},
        {"price_max": 5000},
        {"min_price": 1000, "max_price": 1500},
        {"price_min": 1000, "price_max": 1500, "sort": "-price"},
        {"in_stock": "true"},
        {"in_stock": "false"},
        {"slug": v["slug"]},
        {"sku": v["sku"]},
        {"created_after": v["stamp"]},
        {"updated_after": v["stamp"], "sort": "updated_at"},
        {"option.Size": "M"},
        {"option.Size": "M", "option.Colour": "Red", "sort": "price"},
    ]  # fmt: skip
    facets = [
        {},
        {"category": v["category"]},
        {"category_id": v["category_id"]},
        {"category": v["category"], "price_min": 1000, "price_max": 2499},
        {"option.Size": "M"},
        {"collection": v["collection"]},
        {"q": "walnut"},
    ]  # fmt: skip
    keyed = [{"active": "false"}, {"active": "true", "sort": "name"}]
    orders = [
        {},
        {"status": "pending"},
        {"status": "cancelled"},
        {"customer_id": v["customer_id"]},
        {"status": "pending", "customer_id": v["customer_id"]},
        {"created_before": v["middle"]},
        {"created_after": v["middle"]},
        {"updated_after": v["middle"]},
    ]
    return (
        [("/products", urlencode(q), False) for q in products]
        + [("/products/facets", urlencode(q), False) for q in facets]
        + [("/products", urlencode(q), True) for q in keyed]
        + [("/orders", urlencode(q), True) for q in orders]
    )


def _label(route: str, query: str, total: int) -> str:
    return f"GET {route}{'?' + query if query else ''} ({total // 1000}k)"


def measure(args, work, databases: list, rows: list) -> None:
    """Seed, serve and measure the list rows that ``--only`` lets run; append them to
    ``rows``."""
    shop_size = size(args.quick)
    chosen = chosen_rows(args.only, shop_size)
    depth = not args.only or args.only in "page depth (cursor)"
    if not chosen and not depth:
        return
    started = time.monotonic()
    order_key, values, url = data(args, work, databases)
    print(
        f"lists: {shop_size.products:,} products, {shop_size.orders:,} orders ready in"
        f" {time.monotonic() - started:.1f}s",
        flush=True,
    )
    # One connection, short runs: nothing queues, and 40 rows stay within a few minutes.
    one = argparse.Namespace(**{**vars(args), "connections": 1, "duration": 2 if args.quick else 3})
    server = harness.start_server(args, harness.server_env(args, url), work,
                                  SHOP_RATELIMIT_ENABLED="0")  # fmt: skip
    try:
        for scenario in scenarios(values, order_key, shop_size, chosen):
            result = wrk.measure(one, server, scenario, work)
            _judge_filter(result)
            wrk.progress(scenario.name, result)
            rows.append((scenario.name, result))
        if depth:
            for route, total in (("/products", shop_size.products), ("/orders", shop_size.orders)):
                rows += _depth(one, server, work, route, _key(order_key), total)
    finally:
        harness.stop_server(server)


def chosen_rows(only: str | None, shop_size: seed.Size) -> set[int]:
    """The numbers (in ``urls``) of the list rows whose name holds ``only`` (all without)."""
    return {
        number
        for number, (route, query, _) in enumerate(urls(_PLACEHOLDERS))
        if not only or only in _label(route, _mask(query), _total(shop_size, route))
    }


def scenarios(values: dict, order_key: str, shop_size: seed.Size, chosen: set[int]) -> list:
    """The chosen list rows (``chosen_rows``) as wrk scenarios, named as the table names them."""
    found = []
    for number, (route, query, keyed) in enumerate(urls(values)):
        if number in chosen:
            name = _label(route, _mask(query), _total(shop_size, route))
            target = f"{route}?{query}" if query else route
            headers = _key(order_key) if keyed else {}
            found.append(Scenario(name, "GET", route, [("GET", target, "")], headers))
    return found


def _key(order_key: str) -> dict:
    return {"Authorization": f"Bearer {order_key}"}


def data(args, work, databases: list) -> tuple[str, dict, str]:
    """The shop to measure: (the order key, the filter values, its URL); seeded now, or
    the one ``--data`` kept (see the module's docstring)."""
    if not getattr(args, "data", None):  # bench.run has no --data
        url = harness.new_database(args.database_url, work, "lists", databases)
        seeded, values = seed_shop(url, args.quick)
        return seeded.order_key, values, url
    path = Path(args.data)
    if args.database_url:
        schema = "".join(c for c in path.name.lower() if c.isalnum() or c == "_")
        url = harness.named_schema(args.database_url, schema)
        handles = path.with_name(path.name + ".pg.json")
    else:
        url = f"sqlite:///{path.with_name(path.name + '.db')}"
        handles = path.with_name(path.name + ".json")
    if handles.exists():
        kept = json.loads(handles.read_text())
        harness.app_on(url).extensions["shop.db"].close_all()  # upgraded, as a release does
        return kept["order_key"], kept["values"], url
    seeded, values = seed_shop(url, args.quick)
    handles.write_text(json.dumps({"order_key": seeded.order_key, "values": values}))
    return seeded.order_key, values, url


# The filter values are known once the shop is seeded; ``--only`` is matched before, on the
# names made with these stand-ins.
_PLACEHOLDERS = {
    k: k.upper()
    for k in ("category", "category_id", "collection", "collection_id", "slug", "sku",
              "customer_id", "middle", "stamp")
}  # fmt: skip
_VALUE_KEYS = ("category_id", "collection_id", "customer_id", "updated_after", "created_after",
               "created_before")  # fmt: skip


def _mask(query: str) -> str:
    """A query string with its run-specific values (ids, dates) as stand-ins, for a row's
    name."""
    parts = []
    for part in query.split("&") if query else []:
        name, _, value = part.partition("=")
        parts.append(f"{name}={name.upper()}" if name in _VALUE_KEYS else f"{name}={value}")
    return "&".join(parts)


def _total(shop_size: seed.Size, route: str) -> int:
    return shop_size.orders if route == "/orders" else shop_size.products


def _judge_filter(result: Result) -> None:
    result.half_p99_ms = None
    result.checks.append(("200 OK", result.errors == 0))
    result.checks.append((f"p99<{P99_LIMIT_MS}ms", result.p99_ms < P99_LIMIT_MS))
    result.checks.append((f"CPU<{CPU_LIMIT_US}us", result.cpu_us < CPU_LIMIT_US))


def _get(server, path: str, headers: dict) -> dict:
    """The JSON answer to ``GET path``; ``{}`` for an error status."""
    request = urllib.request.Request(  # noqa: S310 - our own http://127.0.0.1 server
        server.url + path, headers={"User-Agent": seed.USER_AGENT, **headers}
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310
            return json.load(response)
    except urllib.error.HTTPError:
        return {}


def _cursor_to(server, route: str, headers: dict, page: int) -> tuple[str | None, str]:
    """The cursor of page ``page``: from ``?page=page-1``'s ``next_cursor``, else by walking
    from page 1 (bounded); or None and why not."""
    first = _get(server, f"{route}?page_size={PAGE_SIZE}", headers)
    if not first.get("next_cursor"):
        return None, "skipped: no cursor"
    before = _get(server, f"{route}?page={page - 1}&page_size={PAGE_SIZE}", headers)
    if before.get("next_cursor"):
        return before["next_cursor"], ""
    cursor, deadline = first["next_cursor"], time.monotonic() + WALK_SECONDS
    for number in range(2, page):
        if time.monotonic() > deadline:
            return None, f"skipped: walking to page {page:,} took over {WALK_SECONDS} s"
        cursor = _get(server, f"{route}?cursor={quote(cursor)}&page_size={PAGE_SIZE}", headers)
        cursor = cursor.get("next_cursor")
        if not cursor:
            return None, f"skipped: no next_cursor on page {number:,}"
    return cursor, ""


def _depth(one, server, work, route: str, headers: dict, total: int) -> list:
    """Page N by cursor and by OFFSET against page 1 of ``route`` (default sort, no filter).
    N is the last but one page of what the list shows (the public's product list hides the
    inactive products: fewer pages than seeded), ``total`` when it tells no total."""
    headers = {} if route == "/products" else headers
    total = _get(server, f"{route}?page_size={PAGE_SIZE}", headers).get("total", total)
    page = min(DEPTH_PAGE, total // PAGE_SIZE - 1)
    cursor_name = f"GET {route} page {page:,} (cursor)"
    offset_name = f"GET {route}?page={page:,} (offset)"

    def best(target: str, name: str) -> Result:
        scenario = Scenario(name, "GET", route, [("GET", target, "")], headers)
        runs = [wrk.measure(one, server, scenario, work) for _ in range(2)]
        return max(runs, key=lambda r: r.rps)

    first = best(f"{route}?page_size={PAGE_SIZE}", f"GET {route} page 1")
    found = []
    cursor, why = _cursor_to(server, route, headers, page)
    if cursor is None:
        found.append((cursor_name, Result(skipped=why)))
    else:
        deep = best(f"{route}?cursor={quote(cursor)}&page_size={PAGE_SIZE}", cursor_name)
        found.append((cursor_name, deep))
    offset = best(f"{route}?page={page}&page_size={PAGE_SIZE}", offset_name)
    found.append((offset_name, offset))
    for name, result in found:
        if result.skipped:
            print(f"{name}: {result.skipped}", flush=True)
            continue
        result.half_p99_ms = None
        result.ratio = result.rps / first.rps  # against page 1, the same run
        result.note = f"page 1 {1000 / first.rps:.1f} ms, this page {1000 / result.rps:.1f} ms"
        result.checks.append(("200 OK", result.errors == 0))
        if name == cursor_name:
            ok = first.rps / result.rps <= DEPTH_LIMIT
            result.checks.append((f"time<={DEPTH_LIMIT}x page 1", ok))
        wrk.progress(name, result)
    return found


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.lists", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a tenth of the data, 2 s runs")
    parser.add_argument("--only", metavar="TEXT", help="only the rows whose name holds TEXT")
    harness.add_server_arguments(parser)
    parser.add_argument("--redis-url", help="redis://... (needed for --workers > 1)")
    parser.add_argument("--data", metavar="PATH", help="seed once into PATH, reuse after")
    args = parser.parse_args(argv)
    args.duration = 2 if args.quick else 3
    wrk.ensure()
    rows = []
    with harness.scratch(args.keep) as (work, databases, _cleanups):
        measure(args, work, databases, rows)
    print()
    report.print_table(args, size(args.quick), rows, [])
    return 1 if any(not ok for _, result in rows for _, ok in result.checks) else 0


if __name__ == "__main__":
    sys.exit(main())
