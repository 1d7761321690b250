"""An import never stalls the shop (issue 35, finding 8), on both engines: a dry run takes no
lock and writes nothing, a real import writes in short chunks with the list totals bumped
once per chunk, a file with any bad row writes nothing whatever chunk it falls in, a row cap,
and a per-caller limit. The live test: a 20,000-row dry run on SQLite while a customer checks
out keeps every checkout under 3 s."""

import secrets
import threading

import pytest
from conftest import PASSWORD, login

from bench.catalogue_import import CheckoutProbe, call, catalogue_csv, opener, send_import
from shop import db
from shop.db import totals
from tests.catalogue.test_product_files import csv_of, new_row, product_count, send
from tests.live import LiveServer


def test_a_dry_run_answers_while_another_write_holds_the_catalogue(app, owner_client):
    first = send(owner_client, csv_of(new_row("mug", "1.00")))
    assert first.status_code == 200, first.json
    held, release = threading.Event(), threading.Event()

    def hold():
        """A product write in progress: the catalogue's lock (and SQLite's write lock)."""
        with app.app_context(), db.transaction():
            db.lock("products")
            held.set()
            release.wait(30)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert held.wait(10)
        body = csv_of(new_row("mug", "2.00"), new_row("jug", "3.00"))
        dry = send(owner_client, body, dry_run=True)
        assert dry.status_code == 200, dry.json  # before: 503 after waiting out the lock
        assert (dry.json["created"], dry.json["updated"]) == (1, 1)
    finally:
        release.set()
        holder.join(30)
    assert product_count(owner_client) == 1


def test_a_chunked_import_writes_every_product_and_counts_them_once(make_app):
    app = make_app(IMPORT_CHUNK_ROWS=2)
    owner = app.test_client()
    with app.app_context():
        from shop.auth.users import create_user

        create_user("chunks@example.com", "Owner", PASSWORD, "owner", [])
    login(owner, "chunks@example.com")
    rows = [new_row(f"p{n}", "1.00", product_active=str(n % 2 == 0).lower()) for n in range(9)]
    answer = send(owner, csv_of(*rows))
    assert answer.status_code == 200, answer.json
    assert answer.json["created"] == 9
    assert owner.get("/products?active=true").json["total"] == 5  # the counters' totals
    assert owner.get("/products?active=false").json["total"] == 4
    with app.app_context():
        assert db.value(totals.SQL[totals.PRODUCTS]) == 9
        assert db.value(totals.SQL[totals.ACTIVE_PRODUCTS]) == 5
    # A bad row in the last chunk (a SKU another product has): found before any write.
    rows = [new_row(f"q{n}", "1.00", variant_sku=f"Q{n}") for n in range(5)]
    rows.append(new_row("last", "1.00", variant_sku="Q0"))
    refused = send(owner, csv_of(*rows))
    assert refused.status_code == 400, refused.json
    assert [(e["row"], e["field"]) for e in refused.json["errors"]] == [(6, "variant_sku")]
    assert refused.json["message"] == "1 row(s) have errors; nothing was written."
    assert product_count(owner) == 9


def test_a_batch_of_bumps_is_one_write_per_count(app, sql_count):
    with app.app_context():
        before = db.value(totals.SQL[totals.PRODUCTS])
        with sql_count() as cost, db.transaction(), totals.batched():
            for _ in range(50):
                totals.bump(totals.PRODUCTS)
                totals.bump(totals.ACTIVE_PRODUCTS, 0)
        assert cost["writes"] == 1
        assert db.value(totals.SQL[totals.PRODUCTS]) == before + 50
        with pytest.raises(RuntimeError), db.transaction(), totals.batched():
            totals.bump(totals.PRODUCTS, 7)
            raise RuntimeError("undone")
        assert db.value(totals.SQL[totals.PRODUCTS]) == before + 50


def test_between_chunks_only_the_tables_that_doubled_are_analyzed(app, owner_client, sql_count):
    """The import's ``ANALYZE`` between chunks (``analyze_grown``, instead of planning every
    statement afresh): on PostgreSQL a table whose rows written since its last ``ANALYZE``
    outnumber the rows it had then is analyzed, which drops the plans kept on its old size;
    a table not grown is not. SQLite runs nothing (it plans each statement anyway)."""
    database = app.extensions["shop.db"]
    tables = ("products", "categories")
    with app.app_context():
        if database.engine == "sqlite":
            with sql_count() as cost:
                database.analyze_grown(tables)
            assert cost["statements"] == 0
            return
        for table in tables:
            db.execute(f"ANALYZE {table}")
    for number in range(3):
        made = owner_client.post("/products", json={"name": f"P{number}", "price_cents": 100})
        assert made.status_code == 201, made.json
    with app.app_context():
        db.value("SELECT pg_stat_force_next_flush()")  # the writes' counts, to the statistics
        count = (
            "SELECT relname, analyze_count FROM pg_stat_user_tables"
            " WHERE schemaname = current_schema() AND relname IN ('products', 'categories')"
        )
        before = {row["relname"]: row["analyze_count"] for row in db.query(count)}
        database.analyze_grown(tables)
        after = {row["relname"]: row["analyze_count"] for row in db.query(count)}
    assert after == {"products": before["products"] + 1, "categories": before["categories"]}


def test_a_file_over_the_row_cap_is_a_413_that_names_the_setting(make_app):
    app = make_app(IMPORT_MAX_ROWS=3)
    with app.app_context():
        from shop.auth.users import create_user

        create_user("cap@example.com", "Owner", PASSWORD, "owner", [])
    owner = app.test_client()
    login(owner, "cap@example.com")
    rows = [new_row(f"p{n}", "1.00") for n in range(4)]
    refused = send(owner, csv_of(*rows), dry_run=True)
    assert refused.status_code == 413, refused.json
    assert "SHOP_IMPORT_MAX_ROWS" in refused.json["message"]
    assert send(owner, csv_of(*rows[:3])).json["created"] == 3


def test_imports_are_limited_per_caller(make_app):
    app = make_app(RATELIMIT_ENABLED=True, RATELIMIT_KEY_PREFIX=f"imp-{secrets.token_hex(6)}")
    owners = []
    with app.app_context():
        from shop.auth.users import create_user

        for name in ("one", "two"):
            create_user(f"{name}@example.com", "Owner", PASSWORD, "owner", [])
    for name in ("one", "two"):
        owners.append(app.test_client())
        login(owners[-1], f"{name}@example.com")
    body = csv_of(new_row("mug", "1.00"))
    for _ in range(6):
        assert send(owners[0], body, dry_run=True).status_code == 200
    limited = send(owners[0], body)
    assert limited.status_code == 429, limited.json
    assert int(limited.headers["Retry-After"]) > 0
    assert send(owners[1], body, dry_run=True).status_code == 200  # another caller's own
    assert product_count(owners[1]) == 0


@pytest.mark.live
@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_a_20k_row_dry_run_keeps_checkouts_under_3_s(database_url, app):
    with app.app_context():
        from shop.auth.users import create_user

        create_user("load@example.com", "Owner", PASSWORD, "owner", [])
    env = {"DATABASE_URL": database_url, "SHOP_RATELIMIT_ENABLED": "0", "SHOP_COOKIE_SECURE": "0"}
    server = LiveServer(env)
    try:
        owner = opener()
        call(owner, server.url + "/auth/login", {"email": "load@example.com", "password": PASSWORD})
        probe = CheckoutProbe(server.url, owner, every=0.1, timeout=10)
        body = catalogue_csv(20_000, variants=1)  # 20,000 products: the most work per row
        with probe:  # a checkout every 0.1 s while the dry run runs, each bounded to 10 s
            answer = send_import(owner, server.url, body, dry_run=True)
        assert answer["created"] == 20_000 and answer["errors"] == []
        assert len(probe.latencies) >= 3
        assert set(probe.statuses) == {201}, probe.statuses
        assert probe.worst < 3.0, probe.latencies
    finally:
        server.stop()
