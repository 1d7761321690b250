"""Fixtures: every test gets a fresh database, on SQLite and again on PostgreSQL.

PostgreSQL runs when ``SHOP_TEST_DATABASE_URL`` is set (each test gets its own schema);
Redis-backed tests run when ``SHOP_TEST_REDIS_URL`` is set. Unset, each defaults to the
server answering on its default local port (PostgreSQL 5432 as ``postgres``, Redis 6379),
so ``./dev test`` uses what runs on the machine; set one to an empty value to leave it out.
Otherwise those cases are skipped, saying why, and the run ends with one line saying how to
run them.
"""

import os
import secrets
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from urllib.parse import quote

import pytest

from shop import create_app
from shop.schema.migrate import load_schema, schema_ready
from tests import pg_schemas, route_builders
from tests.fake_stripe import fake_stripe  # noqa: F401 - the fake Stripe of the payment tests
from tests.faults import private_postgres, private_redis  # noqa: F401 - fixtures for fault tests
from tests.openapi_check import ValidatingClient

LOCAL_PG = (
    "postgresql://postgres@127.0.0.1:5432/test",
    "postgresql://postgres@127.0.0.1:5432/postgres",
)
LOCAL_REDIS = "redis://127.0.0.1:6379/0"


def _local_postgres() -> str | None:
    """The URL of a PostgreSQL answering on 127.0.0.1:5432 as ``postgres`` (its ``test``
    database, else ``postgres``), or None."""
    import psycopg

    for url in LOCAL_PG:
        try:
            psycopg.connect(url, connect_timeout=2).close()
        except psycopg.Error:
            continue
        return url
    return None


def _local_redis() -> str | None:
    """``LOCAL_REDIS`` when a Redis answers PING on 127.0.0.1:6379, else None."""
    import socket

    try:
        with socket.create_connection(("127.0.0.1", 6379), timeout=1) as conn:
            conn.sendall(b"PING\r\n")
            return LOCAL_REDIS if conn.recv(16).startswith(b"+PONG") else None
    except OSError:
        return None


# Before the test modules import: several read these variables themselves.
for _name, _find in (
    ("SHOP_TEST_DATABASE_URL", _local_postgres),
    ("SHOP_TEST_REDIS_URL", _local_redis),
):
    if _name not in os.environ:
        os.environ[_name] = _find() or ""
PG_URL = os.environ.get("SHOP_TEST_DATABASE_URL")
route_builders.install()  # every case builds an app: its URL rules' code compiled once
REDIS_URL = os.environ.get("SHOP_TEST_REDIS_URL")
ENGINES_HINT = (
    "to run them too, start PostgreSQL (127.0.0.1:5432, user postgres) and Redis"
    " (127.0.0.1:6379), or set SHOP_TEST_DATABASE_URL and SHOP_TEST_REDIS_URL (README)"
)
PASSWORD = "correct horse battery"


class Clock:
    """A clock the tests move by hand (the app reads it through the CLOCK setting)."""

    def __init__(self):
        self.moment = datetime.now(UTC).replace(microsecond=0)

    def __call__(self):
        return self.moment

    def advance(self, seconds: float) -> None:
        self.moment += timedelta(seconds=seconds)


def schema_url(schema: str) -> str:
    """The test PostgreSQL's URL with ``schema`` as the search path, and commits that do not
    wait for the disk (``synchronous_commit=off``): a commit is still atomic and seen by every
    later statement, only a crash of the server itself could lose the last few, and no test
    crashes the shared server (the fault tests start their own, with ``fsync=off``). On this
    VM a commit that waits for its WAL flush took 6.9 ms against 0.4 ms, and the suite's
    PostgreSQL cases commit thousands of times."""
    separator = "&" if "?" in PG_URL else "?"
    options = f"-csearch_path={schema} -csynchronous_commit=off"
    return f"{PG_URL}{separator}options={quote(options)}"


@contextmanager
def fresh_database(engine: str, folder):
    """A new, empty database of ``engine`` (a file in ``folder``, or a PostgreSQL schema)."""
    if engine == "sqlite":
        yield f"sqlite:///{folder / f'shop-{secrets.token_hex(3)}.db'}"
        return
    if not PG_URL:
        pytest.skip("PostgreSQL case: SHOP_TEST_DATABASE_URL is not set")
    import psycopg

    schema = f"t_{secrets.token_hex(6)}"
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    url = schema_url(schema)
    pg_schemas.EMPTY[url] = schema
    try:
        yield url
    finally:
        pg_schemas.EMPTY.pop(url, None)
        _schema_pool().drop_later(schema)


def _schema_pool() -> pg_schemas.SchemaPool:
    """The thread that builds schemas ahead and drops used ones (``tests/pg_schemas.py``)."""
    return pg_schemas.pool(PG_URL)


def pytest_sessionfinish(session):
    pg_schemas.close()


_SQLITE_TEMPLATE: list = []  # the built file, once per test process (None: could not)


def _sqlite_from_template(database, tmp_path_factory) -> None:
    """A case's new SQLite file as a copy of one built by ``build_schema`` once per process:
    schema.sql's DDL and the migration records, what ``load_schema`` would run first (0.4 ms
    to copy against 12 ms of CPU to build). ``load_schema`` then finds the records and does
    the rest (roles, totals, search index) on the case's clock, as with PostgreSQL's built
    schemas (``tests/pg_schemas.py``). A file that exists already is left alone."""
    import shutil
    from pathlib import Path

    if database.engine != "sqlite" or database.path == ":memory:" or Path(database.path).exists():
        return
    _sqlite_template(tmp_path_factory)
    if _SQLITE_TEMPLATE[0] is not None:
        shutil.copyfile(_SQLITE_TEMPLATE[0], database.path)


def _sqlite_template(tmp_path_factory) -> None:
    """Build the process's SQLite template once. Called before a case makes its app: building
    it makes an app too, and the process's one rate limiter takes the settings of the last app
    made (a case's ``RATELIMIT_ENABLED=True`` would be undone by the template's False)."""
    if not _SQLITE_TEMPLATE:
        _SQLITE_TEMPLATE.append(_build_sqlite_template(tmp_path_factory.mktemp("template")))


def _build_sqlite_template(folder):
    from shop.schema.migrate import build_schema

    path = folder / "template.db"
    settings = {"DATABASE_URL": f"sqlite:///{path}", "REDIS_URL": None, "RATELIMIT_ENABLED": False}
    app = create_app({"TESTING": True, **settings})
    database = app.extensions["shop.db"]
    try:
        with app.app_context():
            build_schema(database)
    finally:
        database.close_all()
        app.extensions["shop.announcements"].stop()
    # One self-contained file: the last connection's close folded the WAL into it.
    return None if path.with_name(path.name + "-wal").exists() else path


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request, tmp_path):
    """A fresh, empty database of each engine."""
    with fresh_database(request.param, tmp_path) as url:
        yield url


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def make_app(database_url, clock, tmp_path_factory):
    """Build an app on the test's database; keyword arguments override settings.

    Its test clients check every response against the OpenAPI description
    (``tests/openapi_check.py``) unless ``validate_responses=False``. The database is built
    from schema.sql (proven equal to the migrations by
    tests/ops/test_migrations.py) unless ``prepare=False``; create_app itself never touches it.
    """
    apps = []

    def make(prepare=True, validate_responses=True, **overrides):
        config = {
            "TESTING": True,
            "DATABASE_URL": database_url,
            "REDIS_URL": None,
            "RATELIMIT_ENABLED": False,
            "CLOCK": clock,
            # The production scrypt cost, scaled down so the suite stays fast.
            "PASSWORD_HASH_METHOD": "scrypt:1024:8:1",
            "COOKIE_SECURE": True,
        }
        config.update(overrides)
        if prepare and config["DATABASE_URL"].startswith("sqlite"):
            _sqlite_template(tmp_path_factory)  # before the case's app: see _sqlite_template
        app = create_app(config)
        if validate_responses:
            app.test_client_class = ValidatingClient  # every response must be documented
        apps.append(app)
        if prepare:
            if database_url in pg_schemas.EMPTY:  # schema.sql's DDL built ahead, when ready
                _schema_pool().take(pg_schemas.EMPTY.pop(database_url))
            _sqlite_from_template(app.extensions["shop.db"], tmp_path_factory)
            with app.app_context():
                load_schema(app.extensions["shop.db"])
            assert schema_ready(app)
        return app

    yield make
    for app in apps:
        app.extensions["shop.db"].close_all()
        app.extensions["shop.announcements"].stop()  # its Redis listener, if it started one


@pytest.fixture
def app(make_app):
    return make_app()


@pytest.fixture
def client(app):
    return app.test_client()


def login(client, email, password=PASSWORD, kind=None):
    """Sign a test client in; fail the test if that does not work."""
    body = {"email": email, "password": password}
    if kind:
        body["kind"] = kind
    response = client.post("/auth/login", json=body)
    assert response.status_code == 200, response.json
    return response.json


@pytest.fixture
def make_admin(app):
    """Create an administrator with a role (and extra permissions); answer a signed-in client."""

    def make(role="owner", permissions=(), email=None):
        from shop.auth.users import create_user

        email = email or f"{role}-{secrets.token_hex(3)}@example.com"
        with app.app_context():
            row = create_user(email, role.title(), PASSWORD, role, list(permissions))
        client = app.test_client()
        client.user = login(client, email)
        client.user_id = row["id"]
        client.email = email
        return client

    return make


@pytest.fixture
def owner_client(make_admin):
    return make_admin("owner", email="owner@example.com")


@pytest.fixture
def make_customer(app):
    """Register a customer through the API; answer a signed-in client."""

    def make(email=None, name="Casey Customer"):
        client = app.test_client()
        email = email or f"customer-{secrets.token_hex(3)}@example.com"
        response = client.post(
            "/auth/register", json={"email": email, "password": PASSWORD, "name": name}
        )
        assert response.status_code == 201, response.json
        client.user = response.json
        client.email = email
        return client

    return make


@pytest.fixture
def customer_client(make_customer):
    return make_customer(email="customer@example.com")


@pytest.fixture
def make_key(app, owner_client):
    """Create an API key through the API (by the owner unless ``by`` is given).

    Answers a test client that sends the key as a Bearer token; ``client.key`` is the record
    and ``client.secret`` the secret.
    """

    def make(*scopes, by=None, expires_at=None, label="test key"):
        body = {"label": label, "scopes": list(scopes)}
        if expires_at:
            body["expires_at"] = expires_at
        response = (by or owner_client).post("/api-keys", json=body)
        assert response.status_code == 201, response.json
        client = app.test_client()
        client.environ_base["HTTP_AUTHORIZATION"] = f"Bearer {response.json['secret']}"
        client.secret = response.json["secret"]
        client.key = response.json
        return client

    return make


@pytest.fixture
def sql_count(app):
    """Count the statements and writes a block runs in this thread (the test client's)."""
    from contextlib import contextmanager

    @contextmanager
    def count():
        database = app.extensions["shop.db"]
        before = database.stats()
        result = {}
        yield result
        after = database.stats()
        result["statements"] = after["statements"] - before["statements"]
        result["writes"] = after["writes"] - before["writes"]

    return count


@pytest.fixture
def smtp():
    """A real SMTP server on 127.0.0.1 (aiosmtpd) keeping what it receives: ``smtp.url``
    for SMTP_URL, ``smtp.messages``."""
    from tests.mail_helpers import SmtpServer

    server = SmtpServer()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def chromium():
    """The browser tests' one headless Chromium per test process, started by the first test
    that asks for ``browser`` (tests/admin/test_admin_browser.py) and handed to each as new."""
    from tests.admin.browser_helpers import Chromium
    from tests.admin.test_admin_browser import CHROMEDRIVER, CHROMIUM, FLAGS

    shared = Chromium(CHROMIUM, CHROMEDRIVER, FLAGS)
    yield shared
    shared.quit()


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config):
    """How many processes ``-n auto`` (``./dev test``) starts: one per core for the suite or
    a marker's part of it (``-m "not live"``), none (this process alone) when the run is
    narrowed to a few tests by ``-k``, a file or a test's id, ``--lf`` or ``--co``, where two
    workers each importing and collecting the suite would cost more than they save. ``-n N``
    chooses outright (docs/architecture.md, "Tests and CI")."""
    option = config.option
    narrowed = (
        option.keyword
        or option.collectonly
        or getattr(option, "lf", False)
        or any(".py" in arg for arg in config.args)
    )
    return 0 if narrowed else len(os.sched_getaffinity(0))


# Fixtures that start a process: a test using one must carry the ``live`` marker.
LIVE_FIXTURES = frozenset({"live", "browser", "chromium", "private_postgres", "private_redis"})


def pytest_collection_modifyitems(items):
    """Refuse a test that starts a process through a fixture but is not marked ``live``,
    so that ``-m "not live"`` really leaves every such test out; then, in the workers of
    ``./dev test``, put the slow modules first (``_heaviest_first``)."""
    unmarked = [
        item.nodeid
        for item in items
        if LIVE_FIXTURES & set(getattr(item, "fixturenames", ()))
        and item.get_closest_marker("live") is None
    ]
    if unmarked:
        raise pytest.UsageError(
            "mark these @pytest.mark.live (they start a process): " + ", ".join(unmarked)
        )
    if os.environ.get("PYTEST_XDIST_WORKER"):
        items[:] = _heaviest_first(items)


def _heaviest_first(items):
    """The modules with browser tests, then those with other ``live`` tests, then the rest,
    each module's tests together and in their order.

    The workers take the next test as they finish one (``--dist loadgroup``), so the run
    ends when the last test started ends: with the browser tests (up to a minute each) and
    the live servers first, what is left at the end is the many short cases, and the two
    workers finish close together instead of one waiting on the other's late browser test.
    Every worker collects the same list, so the order is the same in each, as xdist needs.
    """
    rank = {}
    for item in items:
        names = set(getattr(item, "fixturenames", ()))
        weight = 0 if "browser" in names else 1 if item.get_closest_marker("live") else 2
        rank[item.path] = min(rank.get(item.path, 2), weight)
    return sorted(items, key=lambda item: rank[item.path])  # stable: each module's order


def pytest_terminal_summary(terminalreporter):
    """Skipped tests counted by reason, one line each, before pytest's closing summary.

    ``-rs`` would list every skipped location (hundreds when PostgreSQL is not configured)
    after the results; a reason with its count says as much.
    """
    reasons = {}
    for report in terminalreporter.stats.get("skipped", []):
        _, _, reason = report.longrepr if isinstance(report.longrepr, tuple) else ("", 0, "")
        reason = reason.removeprefix("Skipped: ")
        reasons[reason] = reasons.get(reason, 0) + 1
    if reasons:
        terminalreporter.section("skipped, by reason")
        for reason, count in sorted(reasons.items(), key=lambda item: -item[1]):
            terminalreporter.line(f"{count:5d}  {reason}")


def pytest_unconfigure(config):
    """The run's last line, when cases were skipped for want of PostgreSQL or Redis: how many,
    and how to run them (after pytest's own summary, so it is not missed)."""
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None:
        return
    missing = 0
    for report in reporter.stats.get("skipped", []):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else ""
        if "SHOP_TEST_DATABASE_URL" in reason or "SHOP_TEST_REDIS_URL" in reason:
            missing += 1
    if missing:
        engines = [name for name, url in (("PostgreSQL", PG_URL), ("Redis", REDIS_URL)) if not url]
        reporter.write_line(
            f"{missing} cases skipped: no {' and no '.join(engines) or 'PostgreSQL or Redis'}"
            f" here; {ENGINES_HINT}.",
            yellow=True,
            bold=True,
        )
