"""Every list's filters and sorts on a big shop, and a deep page by ``page`` and by ``cursor``.

In-process (Flask's test client, no HTTP server): each URL is read ``--runs`` times after a
warm-up and its p50/p99 printed in ms with the CPU µs a request; ``--over`` marks those above
the issue's 25 ms. The shop is seeded once (100,000 products, 200,000 orders) into a SQLite
file or a PostgreSQL schema that ``--keep`` leaves for the next run:

    python -m bench.list_queries --sqlite /tmp/big.db
    python -m bench.list_queries --database-url postgresql://... --schema listbench
"""

import argparse
import secrets
import statistics
import time
from urllib.parse import quote

from bench import seed
from bench.harness import app_on, seed_database
from bench.lists import vacuum

SIZE = seed.Size(products=100_000, categories=200, keys=100, customers=10_000, orders=200_000)
SLOW_MS = 25


def _url(args) -> str:
    if args.sqlite:
        return f"sqlite:///{args.sqlite}"
    import psycopg

    with psycopg.connect(args.database_url, autocommit=True) as conn:
        made = conn.execute(
            "SELECT 1 FROM information_schema.schemata WHERE schema_name = %s", [args.schema]
        ).fetchone()
        if not made:
            conn.execute(f"CREATE SCHEMA {args.schema}")
    return f"{args.database_url}?options={quote(f'-csearch_path={args.schema}')}"


def _seeded(app) -> bool:
    from shop import db

    with app.app_context():
        return (db.value("SELECT COUNT(*) FROM orders") or 0) >= SIZE.orders


def _admin_cookie(app) -> str:
    """A session of the owner, made here (the seed's cookies are not kept)."""
    from shop import db
    from shop.clock import iso, now

    token = secrets.token_urlsafe(32)
    with app.app_context():
        owner = db.value("SELECT id FROM users ORDER BY created_at LIMIT 1")
        stamp = now()
        db.execute(
            "INSERT INTO user_session (id, token_hash, user_id, created_at, last_seen_at,"
            " expires_at, user_agent, ip) VALUES (:id, :hash, :owner, :now, :now, :end, :ua,"
            " '127.0.0.1')",
            {"id": db.new_id(), "hash": db.sha256(token), "owner": owner, "now": iso(stamp),
             "end": iso(stamp.replace(year=stamp.year + 1)), "ua": seed.USER_AGENT},
        )  # fmt: skip
    return token


def _paths(app) -> list[tuple[str, str]]:
    """(who, path): the product list's filters by every sort, the orders list's filters, a
    deep page of each by ``page`` and by ``cursor``."""
    from shop import db

    with app.app_context():
        category = db.one("SELECT id, slug FROM categories WHERE parent_id IS NULL LIMIT 1")
        leaf = db.value("SELECT id FROM categories WHERE parent_id IS NOT NULL LIMIT 1")
        customer = db.value("SELECT customer_id FROM orders LIMIT 1")
        stamp = db.value("SELECT MAX(created_at) FROM orders")
    filters = [
        "",
        "min_price=1000",
        "max_price=1000",
        "min_price=1000&max_price=1200",
        "in_stock=true",
        "in_stock=false",
        f"category={category['slug']}",
        f"category_id={leaf}",
        "option.Size=M",
        "created_after=2020-01-01",
        "updated_after=2020-01-01",
        "q=walnut",
    ]
    sorts = ["", "name", "-name", "price", "-price", "created_at", "updated_at", "-updated_at"]
    paths = [("public", "/products?" + "&".join(x for x in (f, s and f"sort={s}") if x))
             for f in filters for s in sorts if s or f]  # fmt: skip
    paths += [("public", "/products"), ("admin", "/products?active=false&sort=price")]
    for f in ["", "status=pending", "status=cancelled", f"customer_id={customer}",
              f"created_before={stamp[:10]}", "status=paid&created_after=2020-01-01",
              "updated_after=2020-01-01", "created_after=2020-01-01"]:  # fmt: skip
        paths.append(("admin", f"/orders?{f}"))
    paths += [("admin", "/customers"), ("admin", "/customers?q=customer0001"),
              ("admin", "/api-keys"), ("admin", "/audit-log")]  # fmt: skip
    return paths


def _time(client, path: str, runs: int) -> tuple[float, float, float, dict]:
    """p50 and p99 (ms), CPU µs a request, and the last body."""
    client.get(path)
    wall = []
    cpu = time.process_time()
    for _ in range(runs):
        start = time.perf_counter()
        response = client.get(path)
        wall.append((time.perf_counter() - start) * 1000)
        assert response.status_code == 200, (path, response.status_code, response.json)
    cpu = (time.process_time() - cpu) / runs * 1e6
    wall.sort()
    p99 = wall[min(len(wall) - 1, int(len(wall) * 0.99))]
    return statistics.median(wall), p99, cpu, response.json


def _deep(client, path: str, depth: int) -> str:
    """The cursor of page ``depth`` of ``path`` (pages of 100 walked, then the size asked)."""
    cursor, read = None, 0
    while read < (depth - 1) * 20:
        step = min(100, (depth - 1) * 20 - read)
        sep = "&" if "?" in path else "?"
        query = f"page_size={step}" + (f"&cursor={cursor}" if cursor else "")
        body = client.get(f"{path}{sep}{query}").json
        cursor, read = body["next_cursor"], read + step
    return cursor


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sqlite", help="a SQLite file (made and seeded if new)")
    parser.add_argument("--database-url", help="postgresql://...")
    parser.add_argument("--schema", default="listbench", help="the PostgreSQL schema")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--only", default="", help="only paths holding this text")
    parser.add_argument("--depth", type=int, default=5000, help="the deep page")
    args = parser.parse_args(argv)
    if not (args.sqlite or args.database_url):
        parser.error("give --sqlite FILE or --database-url URL")
    url = _url(args)
    app = app_on(url)  # upgraded: the newest indexes
    if not _seeded(app):
        seed_database(url, SIZE)
    with app.app_context():
        app.extensions["shop.db"].analyze(full=True)
        vacuum(app.extensions["shop.db"])
    app.config["RATELIMIT_ENABLED"] = False
    public, admin = app.test_client(), app.test_client()
    admin.environ_base["HTTP_USER_AGENT"] = seed.USER_AGENT
    admin.set_cookie("shop_admin_session", _admin_cookie(app))
    who = {"public": public, "admin": admin}
    print(f"{'p50 ms':>8} {'p99 ms':>8} {'CPU µs':>8}  path")
    for kind, path in _paths(app):
        if args.only not in path:
            continue
        p50, p99, cpu, body = _time(who[kind], path, args.runs)
        mark = "  OVER" if p99 > SLOW_MS else ""
        exact = "" if body.get("total_is_exact", True) else f" (total {body['total']}+)"
        print(f"{p50:8.2f} {p99:8.2f} {cpu:8.0f}  {path}{exact}{mark}", flush=True)
    for kind, path in (("admin", "/orders"), ("public", "/products?sort=price")):
        sep = "&" if "?" in path else "?"
        rows = [("page 1", f"{path}"), (f"page={args.depth}", f"{path}{sep}page={args.depth}")]
        cursor = _deep(who[kind], path, args.depth)
        rows.append((f"cursor at page {args.depth}", f"{path}{sep}cursor={cursor}"))
        for _round in range(2):  # interleaved: A, B, C, A, B, C
            for label, deep in rows:
                p50, p99, cpu, _ = _time(who[kind], deep, args.runs)
                print(f"{p50:8.2f} {p99:8.2f} {cpu:8.0f}  {path} {label}", flush=True)
    app.extensions["shop.db"].close_all()


if __name__ == "__main__":
    main()
