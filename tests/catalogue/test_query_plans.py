"""The planner's side of the lists: statistics gathered where the docs say, and pages read in
the sort's index order (no sort of the whole table). Not timed: the benchmark measures."""

import pytest

from shop import db
from shop.api.products import _SORTS
from shop.catalogue.present import SELECT

PRODUCTS = 400


def _add_products(count: int) -> None:
    """Rows by bulk SQL, as an import or the benchmark's seeding writes them."""
    db.execute_many(
        "INSERT INTO products (id, name, slug, sku, price_cents, stock, active, created_at,"
        " updated_at) VALUES (:id, :name, :slug, :sku, :price, :stock, :active, :at, :at)",
        [
            {
                "id": f"p{n:05d}",
                "name": f"Product {n % 97}",
                "slug": f"product-{n}",
                "sku": f"SKU-{n}",
                "price": (n * 37) % 5000,
                "stock": n % 7,
                "active": int(n % 10 != 0),
                "at": f"2026-01-01T00:{n // 60 % 60:02d}:{n % 60:02d}Z",
            }
            for n in range(count)
        ],
    )


def _upgrade(app):
    result = app.test_cli_runner().invoke(args=["db", "upgrade"])
    assert result.exit_code == 0, result.output


def _plan(sql: str, params: dict) -> str:
    """The plan as text; PostgreSQL told to avoid seq scans, which it prefers on few rows."""
    if db.get_db().engine == "sqlite":
        return "\n".join(r["detail"] for r in db.query("EXPLAIN QUERY PLAN " + sql, params))
    db.execute("SET enable_seqscan = off")
    try:
        return "\n".join(r["QUERY PLAN"] for r in db.query("EXPLAIN " + sql, params))
    finally:
        db.execute("RESET enable_seqscan")


def _sorts_in_full(plan: str, table: str) -> bool:
    """Whether the plan sorts rows rather than reading them in an index's order."""
    return "TEMP B-TREE FOR" in plan or "Sort" in plan or f"Seq Scan on {table}" in plan


def test_upgrade_gathers_the_planner_statistics(app):
    with app.app_context():
        _add_products(50)
    _upgrade(app)

    with app.app_context():
        if db.get_db().engine == "sqlite":
            assert db.value("SELECT COUNT(*) FROM sqlite_stat1 WHERE tbl = 'products'") > 0
        else:  # reltuples is -1 until a table is first analyzed
            assert db.value("SELECT reltuples FROM pg_class WHERE oid = 'products'::regclass") == 50


def test_closing_a_sqlite_connection_runs_optimize(app):
    from shop.db.sqlite import SQLiteConnection

    ran = []
    with app.app_context():
        if db.get_db().engine != "sqlite":
            pytest.skip("PRAGMA optimize is SQLite's")
        conn = SQLiteConnection(":memory:")
        conn.set_trace_callback(ran.append)
        conn.close()

    assert ran == ["PRAGMA optimize"]


@pytest.mark.parametrize(
    "where, params, sort",
    [
        ("p.active = 1 AND p.price_cents >= :min_price", {"min_price": 1000}, "-created_at"),
        ("p.active = 1 AND p.price_cents >= :min_price", {"min_price": 1000}, "price"),
        ("p.active = 1 AND p.price_cents <= :max_price", {"max_price": 1000}, "name"),
        ("p.active = 1 AND p.stock > 0", {}, "-created_at"),
        ("p.stock = 0", {}, "-price"),
    ],
)
def test_a_filtered_product_page_is_read_in_sort_order(app, where, params, sort):
    with app.app_context():
        _add_products(PRODUCTS)
    _upgrade(app)

    with app.app_context():
        sql = f"{SELECT} WHERE {where} ORDER BY {_SORTS[sort]} LIMIT 20 OFFSET 0"
        plan = _plan(sql, params)

    # Out of stock: in sort order, or the few such rows from their partial index (0016).
    assert "products_out_of_stock" in plan or not _sorts_in_full(plan, "products"), plan


@pytest.mark.parametrize("where", ["", " WHERE o.status = :status", " WHERE o.customer_id = :c"])
def test_an_orders_page_is_read_in_sort_order_with_its_tie_break(app, where):
    with app.app_context():
        sql = f"SELECT o.id FROM orders o{where} ORDER BY o.created_at DESC, o.id DESC LIMIT 20"
        plan = _plan(sql, {"status": "pending", "c": "x"})

    assert not _sorts_in_full(plan, "orders"), plan


@pytest.mark.parametrize(
    ("table", "where"),
    [
        ("orders", "updated_at >= :after"),
        ("customers", "updated_at >= :after"),
        ("webhook_deliveries", "webhook_id = :w AND updated_at >= :after"),
    ],
)
def test_a_sync_page_is_read_in_updated_at_order(app, table, where):
    """``updated_after`` (shop.db.pages.changed_since) on the tables that grow: no full sort.
    (An empty PostgreSQL table tempts the planner into a bitmap scan and a sort of nothing.)"""
    with app.app_context():
        postgres = db.get_db().engine != "sqlite"
        if postgres:
            db.execute("SET enable_bitmapscan = off")
        sql = f"SELECT id FROM {table} WHERE {where} ORDER BY updated_at, id LIMIT 100"
        plan = _plan(sql, {"after": "2026-01-01T00:00:00.000000Z", "w": "x"})
        if postgres:
            db.execute("RESET enable_bitmapscan")

    assert not _sorts_in_full(plan, table), plan


@pytest.mark.parametrize(
    "sql, where, sort, last",
    [
        (SELECT, "p.active = 1", _SORTS["-created_at"], ["2026-01-01T00:03:00Z", "p00180"]),
        (SELECT, "p.active = 1", _SORTS["price"], [2500, "p00200"]),
        (SELECT, "p.active = 1 AND p.price_cents >= 1000", _SORTS["-name"], ["Product 5", "p1"]),
        ("SELECT o.id FROM orders o", "1 = 1", "o.created_at DESC, o.id DESC", ["2026", "o1"]),
        ("SELECT o.id FROM orders o", "o.status = 'paid'", "o.created_at DESC, o.id DESC",
         ["2026", "o1"]),
    ],
)  # fmt: skip
def test_a_cursor_page_at_depth_is_an_index_range(app, sql, where, sort, last):
    """The page after a cursor (shop.db.pages.paginate) starts in the sort's index at the last
    row, whatever the depth: no sort, no scan of the table."""
    from shop.db import pages

    with app.app_context():
        _add_products(PRODUCTS)
    _upgrade(app)

    keys = pages._sort_keys(sort)
    table = "orders" if "orders" in sql else "products"
    with app.app_context():
        page = f"{sql} WHERE {where} AND {pages._after(keys)} ORDER BY {sort} LIMIT 21"
        plan = _plan(page, {f"_c{i}": value for i, value in enumerate(last)})

    assert not _sorts_in_full(plan, table), plan


def _add_orders(count: int) -> None:
    """Orders by bulk SQL (one customer), as the benchmark's seeding writes them."""
    customer = db.new_id()
    db.execute(
        "INSERT INTO customers (id, email, name, password_hash, active, created_at, updated_at)"
        " VALUES (:id, 'plans@example.com', 'P', 'x', 1, :at, :at)",
        {"id": customer, "at": "2026-01-01T00:00:00.000000Z"},
    )
    db.execute_many(
        "INSERT INTO orders (id, number, customer_id, status, subtotal_cents, total_cents,"
        " currency, created_at, updated_at) VALUES (:id, :number, :customer, :status, 100, 100,"
        " 'EUR', :at, :at)",
        [
            {
                "id": f"o{n:05d}",
                "number": f"SO-{n:06d}",
                "customer": customer,
                "status": ("pending", "paid", "shipped", "cancelled")[n % 4],
                "at": f"2026-01-{1 + n // 1440:02d}T{n // 60 % 24:02d}:{n % 60:02d}:00.000000Z",
            }
            for n in range(count)
        ],
    )


def test_the_kept_orders_total_counts_the_newer_orders_on_their_index(app):
    """``totals.SQL[ORDERS]`` with the planner's real statistics: PostgreSQL plans the count
    before it reads ``counted_to`` and, given only a lower bound, scanned the whole table."""
    from shop.db import totals

    with app.app_context():
        _add_orders(3000)
    _upgrade(app)  # counts them, and gathers the statistics

    with app.app_context():
        if db.get_db().engine == "sqlite":
            plan = _plan(totals.SQL[totals.ORDERS], {})
        else:  # the planner's own choice: no enable_seqscan = off
            plan = "\n".join(r["QUERY PLAN"] for r in db.query("EXPLAIN " + totals.SQL["orders"]))

    assert "orders_created_at" in plan and "Seq Scan on orders" not in plan, plan


def test_an_orders_page_reads_its_lines_history_payment_and_shipments_by_index(app):
    """The page's one statement (``orders/order_json.py``): each order's parts are read
    through their order's index, never by scanning their table."""
    from shop.orders import order_json

    with app.app_context():
        page = "SELECT o.id FROM orders o ORDER BY o.created_at DESC, o.id DESC LIMIT 21"
        sql = f"{order_json.select()} WHERE o.id IN ({page})"
        plan = _plan(sql, {})

    parts = ("order_items", "order_status_history", "shipments", "shipment_lines", "payments")
    for table in (*parts, "customers"):
        assert f"SCAN {table}" not in plan and f"Seq Scan on {table}" not in plan, plan


@pytest.mark.parametrize("where", ["o.status = :status", "o.customer_id = :c"])
def test_an_orders_total_is_counted_along_the_pages_index(app, where):
    """``count_in_order`` (shop.db.pages): the capped count walks the filter's index in the
    page's order, so it reads what the page read; no sort, no table scan."""
    from shop.db import pages

    with app.app_context():
        sql = pages.count_sql(
            "orders o", pages.Where(where), " ORDER BY o.created_at DESC, o.id DESC"
        )
        plan = _plan(sql, {"status": "paid", "c": "x", "_cap": 1001})

    assert not _sorts_in_full(plan, "orders"), plan


@pytest.mark.parametrize(
    "args, index",
    [
        ({"category_id": "k1"}, "products_category"),
        ({"category": "top"}, "products_category"),
        ({"options": {"Size": ["M"]}}, "variant_option_values_lookup"),
        ({"options": {"Size": ["M", "L"], "Colour": ["Red"]}}, "option_pairs"),  # 0044
        (
            {"options": {"Size": ["M"], "Colour": ["Red"], "Fit": ["Slim"]}},
            "variant_option_values_lookup",
        ),
        ({"collection_id": "c1"}, "collection_products"),
        ({"collection": "picks"}, "collection_products"),
        ({"in_stock": False}, "products_out_of_stock"),
    ],
)
def test_a_narrow_filter_finds_its_products_through_an_index(app, args, index):
    """The matches a narrow filter collects (and a category's capped count) come from an
    index of their own (0018): no scan of products, variants or option values."""
    from shop.catalogue.product_query import ProductQuery

    with app.app_context():
        _add_products(PRODUCTS)
        db.execute_many(
            "INSERT INTO categories (id, name, slug, created_at, updated_at)"
            " VALUES (:id, :id, :id, '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z')",
            [{"id": f"k{n}"} for n in range(40)],
        )
        db.execute("UPDATE categories SET slug = 'top' WHERE id = 'k1'")
        db.execute("UPDATE categories SET parent_id = 'k1' WHERE id IN ('k2', 'k3')")
        db.execute(
            "UPDATE products SET category_id ="
            " 'k' || CAST(CAST(SUBSTR(id, 2) AS INTEGER) % 40 AS TEXT)"
        )
    _upgrade(app)

    with app.app_context():
        query = ProductQuery(args, only_active=True)
        where = query.filters()
        plans = [
            _plan("SELECT p.id FROM products p" + where.sql(), where.params),
            _plan(f"SELECT COUNT(*) FROM (SELECT 1 FROM products p{where.sql()} LIMIT 1001) c",
                  where.params),
        ]  # fmt: skip

        sqlite = db.get_db().engine == "sqlite"

    scanned = [("products", "p"), ("product_variants", "v"), ("variant_option_values", "o0"),
               ("collection_products", "cp"), ("option_pairs", "op")]  # fmt: skip
    for plan in plans:
        assert index in plan, plan
        for table, alias in scanned:
            assert f"Seq Scan on {table}" not in plan, plan
            assert not any(line.strip() == f"SCAN {alias}" for line in plan.splitlines()), plan
    if "category" in str(args) and sqlite:
        assert "COVERING INDEX products_category" in plans[1], plans[1]  # counted in the index


def _prepared_plans(app, pattern: str) -> list[dict]:
    """The plans PostgreSQL made so far for the test's prepared statements like ``pattern``."""
    with app.app_context():
        return db.query(
            "SELECT generic_plans, custom_plans FROM pg_prepared_statements"
            " WHERE statement LIKE :page",
            {"page": pattern},
        )


def test_a_list_page_is_planned_once_on_postgresql(app, client):
    """With ``LIMIT`` and ``OFFSET`` parameters PostgreSQL planned a list's page anew on every
    request (issue 29: its generic plan guessed a tenth of the table, so it kept making
    custom ones); the LIMIT is written out and a first page has no OFFSET, so the first
    page of the unfiltered list has no parameter and one plan serves every request."""
    with app.app_context():
        if db.get_db().engine == "sqlite":
            pytest.skip("plans of prepared statements are PostgreSQL's")
        _add_products(PRODUCTS)
    for _ in range(15):  # psycopg prepares a statement on its 5th run
        assert client.get("/products?page_size=10").status_code == 200

    plans = _prepared_plans(app, "%AS _k0%FROM products p%")
    assert len(plans) == 1, plans
    assert plans[0]["custom_plans"] == 0 and plans[0]["generic_plans"] >= 10, plans


def test_a_cursor_page_near_a_lists_end_is_planned_once_on_postgresql(app, owner_client):
    """A cursor's keys are parameters. With the page's rows picked by ``IN (keys' query)``,
    a cursor where the statistics leave fewer rows than a page made every plan for the
    values look cheaper than the generic one, and PostgreSQL planned the orders page (3 kB
    of SQL) anew on every request (here 10 custom plans of 10); its rows are now picked by
    an array of the keys, planned for a fixed count, so the generic plan is kept."""
    with app.app_context():
        if db.get_db().engine == "sqlite":
            pytest.skip("plans of prepared statements are PostgreSQL's")
        _add_orders(3010)  # 151 pages, the last of 10
    _upgrade(app)  # the statistics that place the cursor near the end
    before = owner_client.get("/orders?page=150&page_size=20").get_json()
    deep = f"/orders?cursor={before['next_cursor']}&page_size=20"
    for _ in range(15):  # psycopg prepares a statement on its 5th run
        assert owner_client.get(deep).status_code == 200

    plans = _prepared_plans(app, "%AS _k0%(o.created_at, o.id) <%")
    assert len(plans) == 1, plans
    assert plans[0]["custom_plans"] <= 5 and plans[0]["generic_plans"] >= 5, plans


@pytest.mark.parametrize(
    "args, sort, covering",
    [
        ({"collection_id": "c1"}, "price", ["products_keys"]),
        ({"options": {"Size": ["M"]}}, "-created_at", ["products_keys"]),
        ({"options": {"Size": ["M"], "Colour": ["Red"]}}, "price",
         ["products_keys", "option_pairs"]),  # 0044: the pair's own index
    ],
)  # fmt: skip
def test_a_narrow_filters_matches_are_keyed_in_indexes_not_rows(app, args, sort, covering):
    """0036: each match's state and sort key come from ``products_keys`` and a second
    option is tested in ``option_pairs`` (0044: a row per product and pair of values of
    one active variant), no row read per match (SQLite's
    plan names a covering index; PostgreSQL's planner picks by its estimates and is
    checked for scans only, in the test above)."""
    from shop.catalogue.product_query import SORTS, ProductQuery

    with app.app_context():
        _add_products(PRODUCTS)
    _upgrade(app)
    with app.app_context():
        if db.get_db().engine != "sqlite":
            pytest.skip("a covering index is named in SQLite's plan")
        where = ProductQuery(args, only_active=True).filters()
        keys = SORTS[sort].split(", ")[0].split()[0]
        plan = _plan(f"SELECT {keys}, p.id FROM products p{where.sql()}", where.params)
    for index in covering:
        assert f"COVERING INDEX {index}" in plan, plan


def test_the_in_stock_total_is_counted_in_its_partial_index(app):
    """``in_stock`` alone by creation time counts along the page's order, so the partial
    index that holds the filter counts it (0018; the count in no order read a row per match
    through another index of ``active`` on SQLite)."""
    from shop.catalogue.product_query import ProductQuery
    from shop.db.pages import count_sql

    with app.app_context():
        _add_products(PRODUCTS)
    _upgrade(app)
    with app.app_context():
        query = ProductQuery({"in_stock": True}, only_active=True)
        assert query.counts_in_order("-created_at") and not query.counts_in_order("price")
        narrower = ProductQuery({"in_stock": True, "category_id": "k1"}, only_active=True)
        assert not narrower.counts_in_order("-created_at")  # its own index, in no order
        where = query.filters()
        sql = count_sql("products p", where, " ORDER BY p.created_at DESC, p.id DESC")
        plan = _plan(sql, {**where.params, "_cap": 1001})
    assert "products_in_stock" in plan, plan


@pytest.mark.parametrize(
    "args",
    [{"collection_id": "c1"}, {"collection": "picks"}, {"options": {"Size": ["M"]}},
     {"options": {"Size": ["M"], "Colour": ["Red"]}}],
)  # fmt: skip
@pytest.mark.parametrize("sort", ["-created_at", "price", "-price", "name"])
def test_a_collections_or_options_page_and_total_are_ranges_of_its_keys_index(app, args, sort):
    """0039: a page of a collection or an option value (with the state, any sort but
    updated_at) reads the sort's index of collection_products / option_products in order,
    and its exact total counts a range of it: no product row, no scan, no sort (the
    matches were collected and sorted before); 0044: a value of each of two names, the
    same from option_pairs (the first name's variants were each tested for the second
    value)."""
    from shop.catalogue.product_query import SORTS, ProductQuery

    with app.app_context():
        _add_products(PRODUCTS)
        db.execute(
            "INSERT INTO collections (id, title, slug, created_at, updated_at)"
            " VALUES ('c1', 'Picks', 'picks', '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z')"
        )
        db.execute(
            "INSERT INTO collection_products (collection_id, product_id, position)"
            " SELECT 'c1', id, 0 FROM products WHERE CAST(SUBSTR(id, 2) AS INTEGER) % 3 = 0"
        )
        db.execute(  # the default variants' values: Size M for every third product
            "INSERT INTO variant_option_values (variant_id, product_id, name, value)"
            " SELECT v.id, v.product_id, 'Size', CASE WHEN CAST(SUBSTR(v.product_id, 2)"
            " AS INTEGER) % 3 = 0 THEN 'M' ELSE 'S' END FROM product_variants v"
        )
        if "Colour" in args.get("options", {}):  # Red on every sixth product's M (0044's pairs)
            db.execute(
                "INSERT INTO variant_option_values (variant_id, product_id, name, value)"
                " SELECT v.id, v.product_id, 'Colour', 'Red' FROM product_variants v"
                " WHERE CAST(SUBSTR(v.product_id, 2) AS INTEGER) % 6 = 0"
            )
    _upgrade(app)

    with app.app_context():
        source, where = ProductQuery(args, only_active=True).keyed(sort)
        page = f"SELECT p.id FROM {source}{where.sql()} ORDER BY {SORTS[sort]} LIMIT 21"
        count = f"SELECT COUNT(*) FROM {source}{where.sql()}"
        plans = [_plan(page, where.params), _plan(count, where.params)]
        sqlite = db.get_db().engine == "sqlite"
        assert ProductQuery(args, only_active=True).keyed("updated_at") is None
        assert ProductQuery(args, only_active=False).keyed(sort) is None  # every state

    options = args.get("options", {})
    table = {0: "collection_products", 1: "option_products", 2: "option_pairs"}[len(options)]
    for plan in plans:
        assert f"{table}_" in plan, plan
        assert not _sorts_in_full(plan, table), plan
        assert "Seq Scan on products" not in plan, plan
        assert not any(line.strip() in ("SCAN cp", "SCAN op", "SCAN p") for line in
                       plan.splitlines()), plan  # fmt: skip
        if sqlite:
            assert f"COVERING INDEX {table}_" in plan, plan


def test_a_price_range_by_creation_time_reads_no_row_per_match(app):
    """0039: ``?min_price=…&max_price=…`` (sorted by creation time) collects the range from
    ``products_active_price``, which holds created_at: SQLite's plan names it covering (it
    read each match's row for its created_at); no scan of products on either engine."""
    from shop.catalogue.product_query import SORTS, ProductQuery

    with app.app_context():
        _add_products(PRODUCTS)
    _upgrade(app)
    with app.app_context():
        where = ProductQuery({"min_price": 1000, "max_price": 1500}, only_active=True).filters()
        order = SORTS["-created_at"]
        plan = _plan(f"SELECT p.id FROM products p{where.sql()} ORDER BY {order} LIMIT 21",
                     where.params)  # fmt: skip
        sqlite = db.get_db().engine == "sqlite"
    assert "Seq Scan on products" not in plan and "SCAN p\n" not in plan + "\n", plan
    if sqlite:
        assert "COVERING INDEX products_active_" in plan, plan
