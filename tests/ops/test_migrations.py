"""Versioned migrations: schema.sql equals the migrations, `flask db status|upgrade`, the
version check of the service, adopting a database of the release before migrations, SQLite
table rebuilds, and upgrades that fail or race."""

import re
import shutil
import threading
import urllib.request

import pytest

from shop.schema import migrate
from tests.conftest import fresh_database
from tests.live import LiveServer

# -- what a schema is, read back from the database ------------------------------------------


def describe(database) -> dict:
    """Tables, columns (type, null, default, key), indexes and constraints, engine-neutral
    enough to compare two databases of the same engine."""
    if database.engine == "postgresql":
        schema = database.value("SELECT current_schema()")
        columns = database.query(
            "SELECT table_name, column_name, data_type, is_nullable, column_default"
            " FROM information_schema.columns WHERE table_schema = current_schema()"
        )
        constraints = database.query(
            "SELECT c.relname AS table_name, k.contype, pg_get_constraintdef(k.oid) AS def"
            " FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid"
            " JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema()"
        )
        indexes = database.query(
            "SELECT tablename, indexname, indexdef FROM pg_indexes"
            " WHERE schemaname = current_schema()"
        )
        # Triggers and their functions (schema.postgresql.sql against the migrations).
        triggers = database.query(
            "SELECT t.tgname, pg_get_triggerdef(t.oid) AS def, p.prosrc FROM pg_trigger t"
            " JOIN pg_proc p ON p.oid = t.tgfoid JOIN pg_class c ON c.oid = t.tgrelid"
            " JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE n.nspname = current_schema() AND NOT t.tgisinternal"
        )
        return {
            "triggers": sorted(
                (r["tgname"], r["def"].replace(f"{schema}.", ""), " ".join(r["prosrc"].split()))
                for r in triggers
            ),
            "columns": sorted(tuple(r.values()) for r in columns),
            "constraints": sorted(tuple(r.values()) for r in constraints),
            "indexes": sorted(
                (r["tablename"], r["indexname"], r["indexdef"].replace(f"{schema}.", ""))
                for r in indexes
            ),
        }
    shape = {
        "triggers": sorted(
            (r["name"], " ".join(r["sql"].split()))
            for r in database.query("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'")
        )
    }
    tables = database.query(
        "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
    )
    for table in tables:
        name = table["name"]
        indexes = {}
        for index in database.query("SELECT * FROM pragma_index_list(:t)", {"t": name}):
            cols = database.query("SELECT name FROM pragma_index_info(:i)", {"i": index["name"]})
            key = index["name"] if index["origin"] == "c" else index["origin"]
            indexes[key] = (index["unique"], index["partial"], [c["name"] for c in cols])
        shape[name] = {
            "columns": database.query(
                'SELECT name, upper(type) AS type, "notnull", dflt_value, pk'
                " FROM pragma_table_info(:t) ORDER BY name",
                {"t": name},
            ),
            "foreign_keys": sorted(
                (r["from"], r["table"], r["to"], r["on_update"], r["on_delete"])
                for r in database.query("SELECT * FROM pragma_foreign_key_list(:t)", {"t": name})
            ),
            "indexes": sorted(indexes.items(), key=lambda item: str(item)),
            "checks": sorted(
                " ".join(check.split())
                for check in re.findall(r"CHECK\s*\(([^()]*)\)", table["sql"])
            ),
        }
    return shape


def _upgrade(app, directory=None):
    """``flask db upgrade`` through the CLI; answers the result."""
    if directory is not None:
        app.config["MIGRATIONS_DIR"] = directory
    return app.test_cli_runner().invoke(args=["db", "upgrade"])


@pytest.fixture
def engine(database_url):
    return "postgresql" if database_url.startswith("postgresql") else "sqlite"


@pytest.fixture
def migrations_copy(tmp_path):
    """A copy of migrations/ that a test may add migrations to."""
    folder = tmp_path / "migrations"
    shutil.copytree(migrate.MIGRATIONS_DIR, folder)
    return folder


# -- schema.sql and the migrations build the same schema ------------------------------------


def test_schema_sql_builds_the_same_schema_as_every_migration(make_app, engine, tmp_path):
    from_schema = make_app()  # schema.sql, as every test's database
    with fresh_database(engine, tmp_path) as url:
        from_migrations = make_app(prepare=False, DATABASE_URL=url)
        result = _upgrade(from_migrations)
        assert result.exit_code == 0, result.output
        shapes = [describe(a.extensions["shop.db"]) for a in (from_schema, from_migrations)]
        from_migrations.extensions["shop.db"].close_all()
    assert shapes[0] == shapes[1]
    assert shapes[0]  # the comparison saw tables


def test_the_comparison_sees_a_column_type_an_index_and_a_check(make_app, engine, tmp_path):
    """The equality above would catch a difference of each kind."""
    base = describe(make_app().extensions["shop.db"])
    changes = [
        "ALTER TABLE settings ADD COLUMN note TEXT",
        "CREATE INDEX settings_updated ON settings (updated_at)",
        "CREATE TABLE extra (id TEXT PRIMARY KEY, n INTEGER CHECK (n > 0))",
        "DROP TRIGGER products_lone_variant" + (" ON products" if engine == "postgresql" else ""),
    ]
    for change in changes:
        with fresh_database(engine, tmp_path) as url:
            app = make_app(DATABASE_URL=url)
            database = app.extensions["shop.db"]
            database.execute(change)
            assert describe(database) != base, change
            database.close_all()


# -- flask db status / upgrade --------------------------------------------------------------


def test_status_then_upgrade_of_an_empty_database(make_app):
    app = make_app(prepare=False)
    runner = app.test_cli_runner()
    status = runner.invoke(args=["db", "status"])
    assert status.exit_code == 0, status.output
    assert "Schema version: none" in status.output and "0001_baseline" in status.output
    result = runner.invoke(args=["db", "upgrade"])
    assert result.exit_code == 0, result.output
    assert "Applied 0001_baseline" in result.output
    latest = migrate.latest()
    assert f"Database upgraded to {latest:04d}" in result.output
    status = runner.invoke(args=["db", "status"])
    assert f"Schema version: {latest:04d}" in status.output and "Up to date." in status.output
    again = runner.invoke(args=["db", "upgrade"])
    assert again.exit_code == 0 and "nothing to apply" in again.output
    with app.app_context():
        records = app.extensions["shop.db"].query("SELECT * FROM schema_migrations")
    versions = sorted({m.version for m in migrate.available(app.extensions["shop.db"].engine)})
    assert [r["version"] for r in records] == versions and versions[-1] == latest
    assert records[0]["name"] == "baseline" and len(records[0]["checksum"]) == 64
    assert records[0]["applied_at"].endswith("Z")
    # the upgrade also seeded the built-in roles: the first owner can be created
    created = runner.invoke(
        args=["users", "create", "--email", "o@example.com", "--password", "x" * 12]
    )
    assert created.exit_code == 0, created.output


def test_init_db_is_the_old_name_of_upgrade(make_app):
    result = make_app(prepare=False).test_cli_runner().invoke(args=["init-db"])
    assert result.exit_code == 0 and "Applied 0001_baseline" in result.output


def test_a_command_on_a_database_not_upgraded_says_to_upgrade(make_app):
    runner = make_app(prepare=False).test_cli_runner()
    result = runner.invoke(args=["users", "list"])
    assert result.exit_code == 1 and "flask --app app db upgrade" in result.output


def test_requests_answer_503_until_the_upgrade_then_serve(make_app, migrations_copy):
    (migrations_copy / "0900_product_note.sql").write_text(
        "-- a later release adds a nullable column\nALTER TABLE products ADD COLUMN note TEXT;\n"
    )
    app = make_app(prepare=False)
    assert _upgrade(app).exit_code == 0  # the real migrations: the previous release
    app.config["MIGRATIONS_DIR"] = migrations_copy
    client = app.test_client()
    for _ in range(2):  # still refused on the second request: checked until it is current
        response = client.get("/products")
        assert response.status_code == 503
        assert int(response.headers["Retry-After"]) > 0
        assert "flask db upgrade" in response.json["message"]
    assert client.get("/openapi.json").status_code == 200  # the docs need no database
    status = app.test_cli_runner().invoke(args=["db", "status"])
    assert "Pending:\n  0900_product_note" in status.output
    result = _upgrade(app)
    assert result.exit_code == 0 and "Applied 0900_product_note" in result.output
    assert client.get("/products").status_code == 200
    with app.app_context():
        assert "note" in migrate.describe_columns(app.extensions["shop.db"], "products")


@pytest.mark.live
def test_a_database_newer_than_the_code_refuses_upgrade_and_start(make_app, database_url):
    app = make_app()
    with app.app_context():
        app.extensions["shop.db"].execute(
            "INSERT INTO schema_migrations (version, name, checksum, applied_at)"
            " VALUES (9999, 'from_the_future', 'x', '2030-01-01T00:00:00.000000Z')"
        )
    runner = app.test_cli_runner()
    status = runner.invoke(args=["db", "status"])
    assert "Newer than this release: 9999" in status.output
    result = runner.invoke(args=["db", "upgrade"])
    assert result.exit_code == 1 and "newer release" in result.output
    with pytest.raises(SystemExit, match="Refusing to start.*9999"):
        migrate.check_at_start(database_url)
    with pytest.raises(RuntimeError, match="Refusing to start"):
        LiveServer({"DATABASE_URL": database_url})


@pytest.mark.live
def test_a_worker_boots_and_gunicorn_starts_with_the_database_down(make_app, tmp_path):
    from tests.live import free_port

    down = f"postgresql://postgres@127.0.0.1:{free_port()}/shop"  # nothing listens there
    app = make_app(prepare=False, DATABASE_URL=down)  # create_app touches no database
    assert app.test_client().get("/openapi.json").status_code == 200
    warning = migrate.check_at_start(down)
    assert "could not read the schema version" in warning
    server = LiveServer({"DATABASE_URL": down})
    try:
        with urllib.request.urlopen(server.url + "/openapi.json") as response:  # noqa: S310
            assert response.status == 200
    finally:
        server.stop()


# -- adopting a database of the release before migrations -----------------------------------


def _previous_release_database(app):
    """What release bd8e86d left: its schema.sql applied, its SHA-256 in schema_version, and
    no migration records (the baseline file holds that schema.sql verbatim)."""
    database = app.extensions["shop.db"]
    sql = migrate.available(database.engine)[0].sql
    with database.transaction():
        migrate.run_script(database, sql)
        database.execute(
            "INSERT INTO schema_version (id, checksum) VALUES (1, :c)", {"c": "previous"}
        )
        database.execute(
            "INSERT INTO categories (id, name, slug, created_at, updated_at)"
            " VALUES ('c1', 'Tea', 'tea', 'x', 'x')"
        )


def test_a_database_of_the_previous_release_is_adopted_as_the_baseline(make_app):
    app = make_app(prepare=False)
    with app.app_context():
        _previous_release_database(app)
    status = app.test_cli_runner().invoke(args=["db", "status"])
    assert "before migrations" in status.output and "0001_baseline" in status.output
    result = _upgrade(app)
    assert result.exit_code == 0, result.output
    assert "Adopted 0001_baseline" in result.output
    with app.app_context():
        database = app.extensions["shop.db"]
        assert database.value("SELECT checksum FROM schema_version") == "previous"  # untouched
        assert database.value("SELECT name FROM categories WHERE id = 'c1'") == "Tea"
    assert app.test_client().get("/categories").json["total"] == 1


def test_a_legacy_database_missing_a_column_is_not_adopted(make_app):
    app = make_app(prepare=False)
    with app.app_context():
        _previous_release_database(app)
        app.extensions["shop.db"].execute("ALTER TABLE settings DROP COLUMN updated_at")
    result = _upgrade(app)
    assert result.exit_code == 1 and "settings.updated_at" in result.output
    assert "cannot be adopted" in result.output
    with app.app_context():
        assert migrate.current_version(app.extensions["shop.db"]) == 0


# -- failures, races, bad files -------------------------------------------------------------


def test_a_failing_migration_changes_nothing_and_is_not_recorded(make_app, migrations_copy):
    (migrations_copy / "0900_half_done.sql").write_text(
        "CREATE TABLE half (id TEXT PRIMARY KEY);\n"
        "INSERT INTO half (id) VALUES ('a');\n"
        "INSERT INTO no_such_table (id) VALUES ('b');\n"
    )
    app = make_app()
    result = _upgrade(app, migrations_copy)
    assert result.exit_code == 1 and "0900_half_done failed and was rolled back" in result.output
    assert "no_such_table" in result.output
    with app.app_context():
        database = app.extensions["shop.db"]
        assert not migrate.table_exists(database, "half")
        assert migrate.current_version(database) == migrate.latest()
        applied = database.value("SELECT COUNT(*) FROM schema_migrations")
        assert applied == len(migrate.available(database.engine))


def test_two_upgrades_at_once_apply_each_migration_once(make_app, migrations_copy):
    (migrations_copy / "0900_counted.sql").write_text(
        "CREATE TABLE counted (n INTEGER NOT NULL);\nINSERT INTO counted (n) VALUES (1);\n"
    )
    apps = [make_app(prepare=False, MIGRATIONS_DIR=migrations_copy) for _ in range(2)]
    barrier = threading.Barrier(2)
    outcomes = []

    def run(app):
        barrier.wait(timeout=10)
        with app.app_context():
            outcomes.append(migrate.upgrade(app.extensions["shop.db"], migrations_copy))

    threads = [threading.Thread(target=run, args=(app,)) for app in apps]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert len(outcomes) == 2
    applied = sorted(str(m) for done in outcomes for m in done)
    assert applied == sorted(str(m) for m in migrate.available("sqlite", migrations_copy))
    with apps[0].app_context():
        assert apps[0].extensions["shop.db"].value("SELECT COUNT(*) FROM counted") == 1


@pytest.mark.parametrize(
    ("files", "message"),
    [
        (["0901_a.sql", "0901_b.sql"], "two migrations numbered 0901"),
        (["0901_a.sqlite.sql"], "needs both"),
        (["0901_a.sql", "0901_a.sqlite.sql"], "a shared file and engine files"),
        (["2_a.sql"], "not NNNN_snake_name"),
    ],
)
def test_a_bad_set_of_migration_files_is_refused(migrations_copy, files, message):
    for name in files:
        (migrations_copy / name).write_text("SELECT 1;")
    with pytest.raises(migrate.MigrationError, match=message):
        migrate.available("sqlite", migrations_copy)


def test_statements_are_cut_outside_quotes_comments_and_trigger_bodies():
    script = """
    -- a comment; with a semicolon
    CREATE TABLE t (v TEXT DEFAULT 'a;b');
    CREATE TRIGGER t_ins AFTER INSERT ON t BEGIN UPDATE t SET v = 'x'; SELECT 1; END;
    /* only a comment; */
    """
    cut = migrate.statements(script)
    assert len(cut) == 2
    assert cut[0].endswith("DEFAULT 'a;b');") and cut[1].endswith("END;")


# -- SQLite: rebuilding a table inside a migration ------------------------------------------

REBUILD_SQLITE = """
-- roles gains CHECK (length(name) > 0): SQLite cannot add a constraint in place, so the
-- table is rebuilt (https://www.sqlite.org/lang_altertable.html, "other kinds of changes").
CREATE TABLE roles_new (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL UNIQUE CHECK (length(name) > 0),
    builtin INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
INSERT INTO roles_new (id, name, builtin, created_at, updated_at)
    SELECT id, name, builtin, created_at, updated_at FROM roles;
DROP TABLE roles;
ALTER TABLE roles_new RENAME TO roles;
"""
REBUILD_POSTGRESQL = """
ALTER TABLE roles ADD CONSTRAINT roles_name_check CHECK (length(name) > 0);
"""


def test_a_sqlite_table_rebuild_keeps_the_rows_that_reference_it(make_admin, app, migrations_copy):
    (migrations_copy / "0900_role_name_check.sqlite.sql").write_text(REBUILD_SQLITE)
    (migrations_copy / "0900_role_name_check.postgresql.sql").write_text(REBUILD_POSTGRESQL)
    editor = make_admin("editor")
    with app.app_context():
        database = app.extensions["shop.db"]
        permissions = database.value("SELECT COUNT(*) FROM role_permissions")
    result = _upgrade(app, migrations_copy)
    assert result.exit_code == 0, result.output
    with app.app_context():
        # ON DELETE CASCADE did not fire on DROP TABLE: foreign keys were off meanwhile
        assert database.value("SELECT COUNT(*) FROM role_permissions") == permissions
        with pytest.raises(Exception, match="CHECK|check"):
            database.execute(
                "INSERT INTO roles (id, name, created_at, updated_at) VALUES ('r', '', 'x', 'x')"
            )
        if database.engine == "sqlite":
            assert database.value("PRAGMA foreign_keys") == 1  # on again for the connection
    assert editor.get("/auth/me").json["role"] == "editor"


def test_a_sqlite_migration_that_breaks_foreign_keys_is_rolled_back(app, migrations_copy):
    (migrations_copy / "0900_orphans.sqlite.sql").write_text(
        "INSERT INTO role_permissions (role_id, permission) VALUES ('no-such-role', 'x.y');\n"
    )
    (migrations_copy / "0900_orphans.postgresql.sql").write_text("SELECT 1;\n")
    result = _upgrade(app, migrations_copy)
    with app.app_context():
        database = app.extensions["shop.db"]
        if database.engine == "postgresql":
            assert result.exit_code == 0  # PostgreSQL's file does nothing wrong
            return
        assert result.exit_code == 1 and "break foreign keys" in result.output
        assert (
            database.value("SELECT COUNT(*) FROM role_permissions WHERE role_id = 'no-such-role'")
            == 0
        )
        assert migrate.current_version(database) == migrate.latest()


def _shop_before(number: str, make_app, migrations_copy):
    """A shop at the release before migration ``number`` (its files left out of the copy),
    and a client of its owner, signed in: ``(app, owner)``."""
    from shop.auth.users import create_user
    from tests.conftest import PASSWORD, login

    for path in migrations_copy.glob(f"{number}_*"):
        path.unlink()
    app = make_app(prepare=False)
    assert _upgrade(app, migrations_copy).exit_code == 0
    with app.app_context():
        create_user("owner@example.com", "Owner", PASSWORD, "owner", [])
    owner = app.test_client()
    login(owner, "owner@example.com")
    return app, owner


# -- 0044: the option pairs of a shop that had options before -------------------------------


def test_0044_builds_the_option_pairs_of_a_shop_with_options(make_app, migrations_copy):
    """A shop at 0042 with products of two and three options upgrades: every row stays,
    option_pairs holds the pairs of the active variants (as the triggers would have made
    them), and the filters answer as they did, two names as one variant's values."""
    from tests.catalogue_helpers import Catalogue, option_pairs_of_the_variants

    app, owner = _shop_before("0044", make_app, migrations_copy)
    public = app.test_client()
    catalogue = Catalogue(owner)
    sizes = {"name": "Size", "values": ["S", "M"]}
    colours = {"name": "Colour", "values": ["Red", "Blue"]}
    both = catalogue.product(name="Both", options=[sizes, colours], generate=True)
    split = catalogue.product(name="Split", options=[sizes, colours])  # S, Red
    made = owner.post(f"/products/{split['id']}/variants", json={"options": {"Size": "M"}})
    assert made.status_code == 400  # one value of every option
    made = owner.post(
        f"/products/{split['id']}/variants", json={"options": {"Size": "M", "Colour": "Blue"}}
    )
    assert made.status_code == 201, made.json
    fits = {"name": "Fit", "values": ["Slim", "Wide"]}
    three = catalogue.product(name="Three", options=[sizes, colours, fits], generate=True)
    red_m = next(
        v
        for v in owner.get(f"/products/{three['id']}/variants").json["items"]
        if v["options"] == {"Size": "M", "Colour": "Red", "Fit": "Slim"}
    )
    switched = owner.patch(
        f"/products/{three['id']}/variants/{red_m['id']}", json={"active": False}
    )
    assert switched.status_code == 200, switched.json
    tables = ("products", "product_variants", "variant_option_values", "option_products")
    single = ("option.Size=M", "option.Fit=Wide", "option.Colour=Red&sort=price")
    with app.app_context():
        database = app.extensions["shop.db"]
        before = {t: database.query(f"SELECT * FROM {t}") for t in tables}
    answers = {q: public.get(f"/products?{q}").json for q in single}

    result = _upgrade(app, migrate.MIGRATIONS_DIR)
    assert result.exit_code == 0 and "Applied 0044_option_pairs" in result.output, result.output
    with app.app_context():
        database = app.extensions["shop.db"]
        after = {t: database.query(f"SELECT * FROM {t}") for t in tables}
    for table in tables:
        assert sorted(map(str, after[table])) == sorted(map(str, before[table])), table
    kept, made_pairs = option_pairs_of_the_variants(app)
    assert kept == made_pairs and len(kept) == 4 + 2 + 12  # Both, Split, Three's 7 of 8
    for query, answer in answers.items():
        assert public.get(f"/products?{query}").json == answer, query

    def ids(query: str) -> list[str]:
        response = public.get(f"/products?{query}")
        assert response.status_code == 200, response.json
        return sorted(item["id"] for item in response.json["items"])

    assert ids("option.Size=M&option.Colour=Red") == sorted([both["id"], three["id"]])
    assert ids("option.Size=M&option.Colour=Blue") == sorted([both["id"], split["id"], three["id"]])
    assert ids("option.Size=S&option.Colour=Blue") == sorted([both["id"], three["id"]])
    # Three's red M is Wide only now: three names still ask one variant for all three
    assert ids("option.Size=M&option.Colour=Red&option.Fit=Slim") == []
    assert ids("option.Size=M&option.Colour=Red&option.Fit=Wide") == [three["id"]]


# -- 0052: the documents of a shop that invoiced before, their PDFs kept from then on -----


def test_0052_keeps_every_document_and_draws_their_pdfs_once_after_the_upgrade(
    make_app, migrations_copy
):
    """A shop at the release before 0052 with an invoice and a credit note upgrades: every
    row stays as it was, none has a PDF yet; the first download draws it (the bytes of a
    fresh drawing of its snapshot) and keeps it, and the worker keeps the others."""
    import json

    from shop.invoices import pdf
    from tests.conftest import PASSWORD
    from tests.orders_helpers import add_product, basket

    app, owner = _shop_before("0052", make_app, migrations_copy)
    customer = app.test_client()
    registered = customer.post(
        "/auth/register",
        json={"email": "customer@example.com", "password": PASSWORD, "name": "Casey Customer"},
    )
    assert registered.status_code == 201, registered.json
    order = customer.post("/payments/checkout", json=basket((add_product(app), 2)))
    assert order.status_code == 201, order.json
    order_id = order.json["id"]
    paid = owner.patch(f"/orders/{order_id}/status", json={"status": "paid"})
    assert paid.status_code == 200, paid.json
    refund = owner.post(f"/orders/{order_id}/refunds", json={"amount_cents": 500})
    assert refund.status_code == 201, refund.json
    tables = ("invoices", "credit_notes")
    with app.app_context():
        database = app.extensions["shop.db"]
        before = {t: database.query(f"SELECT * FROM {t}") for t in tables}
    assert [len(before[t]) for t in tables] == [1, 1]

    result = _upgrade(app, migrate.MIGRATIONS_DIR)
    assert result.exit_code == 0 and "Applied 0052_kept_pdfs" in result.output, result.output
    with app.app_context():
        database = app.extensions["shop.db"]
        after = {t: database.query(f"SELECT * FROM {t}") for t in tables}
    for table in tables:
        assert [row.pop("pdf") for row in after[table]] == [None]  # nothing drawn yet
        assert after[table] == before[table], table
    [invoice], [note] = before["invoices"], before["credit_notes"]
    downloaded = owner.get(f"/orders/{order_id}/invoice")
    assert downloaded.status_code == 200
    assert downloaded.data == pdf.render(json.loads(invoice["snapshot"]))
    assert app.test_cli_runner().invoke(args=["jobs", "run", "--once"]).exit_code == 0
    with app.app_context():
        database = app.extensions["shop.db"]
        kept = {t: database.query(f"SELECT id, pdf FROM {t}") for t in tables}
    assert bytes(kept["invoices"][0]["pdf"]) == downloaded.data
    assert bytes(kept["credit_notes"][0]["pdf"]) == pdf.render(json.loads(note["snapshot"]))
    served = owner.get(f"/orders/{order_id}/refunds/{refund.json['id']}/credit-note")
    assert served.status_code == 200 and served.data == bytes(kept["credit_notes"][0]["pdf"])


# -- 0053: the facets' count functions in PL/pgSQL ------------------------------------------


def test_0053_keeps_the_facet_counts_and_the_writes_after_it_count_as_before(
    make_app, migrations_copy
):
    """A shop at 0052 with products of options and a category upgrades: the kept facet
    counts stay as they were and equal a recount; then a variant switched off, a product's
    category changed and a product with options created move them as a recount says (the
    functions the triggers call, PL/pgSQL now on PostgreSQL, count as the SQL ones did)."""
    from tests.catalogue.test_facet_counts import _assert_kept_equals_a_recount, _kept
    from tests.catalogue_helpers import Catalogue

    app, owner = _shop_before("0053", make_app, migrations_copy)
    catalogue = Catalogue(owner)
    shirts = catalogue.category(name="Shirts")
    options = [{"name": "Size", "values": ["S", "M"]}, {"name": "Colour", "values": ["Red"]}]
    shirt = catalogue.product(options=options, generate=True, category_id=shirts["id"])
    catalogue.product(options=options, generate=True, price_cents=2500)
    with app.app_context():
        before = _kept()

    result = _upgrade(app, migrate.MIGRATIONS_DIR)
    assert result.exit_code == 0, result.output
    assert "Applied 0053_facet_functions_kept_plans" in result.output, result.output
    with app.app_context():
        assert _kept() == before
        database = app.extensions["shop.db"]
        if database.engine == "postgresql":
            languages = database.query(
                "SELECT p.proname, l.lanname FROM pg_proc p"
                " JOIN pg_language l ON l.oid = p.prolang"
                " JOIN pg_namespace n ON n.oid = p.pronamespace"
                " WHERE n.nspname = current_schema() AND p.proname LIKE 'facet%'"
                " ORDER BY p.proname"
            )
            assert {row["lanname"] for row in languages} == {"plpgsql"}, languages
    _assert_kept_equals_a_recount(app)
    first = owner.get(f"/products/{shirt['id']}/variants").json["items"][0]
    off = owner.patch(f"/products/{shirt['id']}/variants/{first['id']}", json={"active": False})
    assert off.status_code == 200, off.json
    moved = owner.patch(f"/products/{shirt['id']}", json={"category_id": None})
    assert moved.status_code == 200, moved.json
    catalogue.product(options=options, generate=True, category_id=shirts["id"])
    with app.app_context():
        assert _kept() != before
    _assert_kept_equals_a_recount(app)
