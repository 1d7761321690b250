"""`flask db backup` under write load, and `flask db restore` into a new database that then
serves (product images included); on SQLite (the backup API) and PostgreSQL (pg_dump /
pg_restore)."""

import os
import secrets
import shutil
import sqlite3
import subprocess
import threading
import time
from contextlib import contextmanager
from urllib.parse import urlsplit, urlunsplit

import pytest

from tests.catalogue_helpers import image_bytes, upload
from tests.conftest import PASSWORD, fresh_database, login
from tests.orders_helpers import catalogue_client


@contextmanager
def restore_target(database_url: str, tmp_path):
    """An empty database to restore into. On PostgreSQL a new database (dropped afterwards)
    with the source's schema name: the dump of a test's schema recreates that schema."""
    if database_url.startswith("sqlite"):
        with fresh_database("sqlite", tmp_path) as url:
            yield url
        return
    import psycopg

    parts = urlsplit(database_url)
    name = f"restore_{secrets.token_hex(6)}"
    server = urlunsplit(parts._replace(path="/test", query=""))
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    try:
        yield urlunsplit(parts._replace(path=f"/{name}"))
    finally:
        with psycopg.connect(server, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE {name} WITH (FORCE)")


@pytest.fixture
def engine(database_url):
    if database_url.startswith("postgresql"):
        for tool in ("pg_dump", "pg_restore"):
            if shutil.which(tool) is None:
                pytest.skip(f"{tool} is not installed (Debian: postgresql-client)")
        return "postgresql"
    return "sqlite"


def test_a_backup_taken_under_writes_restores_to_a_service_that_answers(
    app, make_app, engine, owner_client, tmp_path, database_url
):
    catalogue = catalogue_client(app)
    key = catalogue.environ_base["HTTP_AUTHORIZATION"]
    # An image, with a kept width: its bytes live in the database, so the backup has them.
    pictured = catalogue.post("/products", json={"name": "Pictured", "price_cents": 1}).json
    image_url = upload(catalogue, pictured["id"], image_bytes(size=(400, 200))).json["url"]
    image = {w: catalogue.get(f"{image_url}?w={w}").data for w in (160, 1280)}
    written, stop, failures = [], threading.Event(), []

    def write():
        writer = app.test_client()
        writer.environ_base["HTTP_AUTHORIZATION"] = key
        while not stop.is_set():
            n = len(written)
            response = writer.post("/products", json={"name": f"Load {n}", "price_cents": n})
            if response.status_code != 201:
                failures.append(response.status_code)
                return
            written.append(time.monotonic())

    thread = threading.Thread(target=write)
    thread.start()
    try:
        deadline = time.monotonic() + 30
        while len(written) < 20 and time.monotonic() < deadline and not failures:
            time.sleep(0.01)  # polling (bounded) for the writer to be under way
        path = tmp_path / "shop.db.backup"
        started = time.monotonic()
        result = app.test_cli_runner().invoke(args=["db", "backup", str(path)])
        finished = time.monotonic()
        deadline = time.monotonic() + 30
        while not any(t > finished for t in written) and time.monotonic() < deadline:
            time.sleep(0.01)  # the writer kept going past the backup
    finally:
        stop.set()
        thread.join(timeout=30)
    assert result.exit_code == 0, result.output
    assert "Backup written" in result.output and not failures
    assert any(t < started for t in written) and any(t > finished for t in written)

    if engine == "sqlite":
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as copy:
            assert copy.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
            in_backup = copy.execute("SELECT COUNT(*) FROM products").fetchone()[0]
            counted = copy.execute("SELECT value FROM counters WHERE name = 'products'").fetchone()
        assert counted[0] == in_backup  # one moment: the kept total matches the rows

    with restore_target(database_url, tmp_path) as url:
        restored = make_app(prepare=False, DATABASE_URL=url)  # the restore brings the schema
        try:
            result = restored.test_cli_runner().invoke(args=["db", "restore", str(path)])
            assert result.exit_code == 0, result.output
            assert "schema version" in result.output
            status = restored.test_cli_runner().invoke(args=["db", "status"])
            assert "Up to date." in status.output
            client = restored.test_client()
            products = client.get("/products?page_size=1").json["total"]
            with restored.app_context():
                database = restored.extensions["shop.db"]
                assert database.value("SELECT COUNT(*) FROM products") == products
            assert 20 <= products <= len(written)
            assert login(client, "owner@example.com", PASSWORD)["role"] == "owner"
            reader = restored.test_client()
            reader.environ_base["HTTP_AUTHORIZATION"] = key  # keys live in the backup too
            assert reader.get("/products/" + _any_product(client)).status_code == 200
            assert {w: client.get(f"{image_url}?w={w}").data for w in image} == image
            assert (
                client.post("/products", json={"name": "After", "price_cents": 1}).status_code
                == 201
            )
        finally:
            restored.extensions["shop.db"].close_all()


def _any_product(client) -> str:
    return client.get("/products?page_size=1").json["items"][0]["id"]


def test_backup_never_overwrites_and_restore_needs_an_empty_database(app, engine, tmp_path):
    runner = app.test_cli_runner()
    path = tmp_path / "taken"
    path.write_text("keep me")
    result = runner.invoke(args=["db", "backup", str(path)])
    assert result.exit_code == 1 and "never overwrites" in result.output
    assert path.read_text() == "keep me"
    good = tmp_path / "good.backup"
    assert runner.invoke(args=["db", "backup", str(good)]).exit_code == 0
    result = runner.invoke(args=["db", "restore", str(good)])  # the test's database has tables
    assert result.exit_code == 1 and "not empty" in result.output
    result = runner.invoke(args=["db", "restore", str(path)])
    assert result.exit_code == 1 and "is not" in result.output and "backup" in result.output


@pytest.mark.live
def test_the_readme_backup_and_restore_block(tmp_path):
    """The operations guide's backup block, as written, on the default engine (SQLite)."""
    from tests.live import ROOT
    from tests.ops.test_readme import readme_block

    env = {
        "PATH": os.environ.get("PATH", ""),
        "DATABASE_URL": f"sqlite:///{tmp_path}/shop.db",
        "BACKUPS": str(tmp_path / "backups"),
    }
    upgrade = [str(ROOT / ".venv/bin/flask"), "--app", "app", "db", "upgrade"]
    subprocess.run(upgrade, cwd=ROOT, env=env, check=True, capture_output=True)
    script = readme_block("operations-backup")
    script = script.replace("instance/", f"{tmp_path}/")
    for _ in range(2):  # a reader may run it again
        result = subprocess.run(
            ["bash", "-c", "set -euo pipefail\n" + script],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert result.returncode == 0, result.stdout + result.stderr
        assert "Backup written" in result.stdout and "Restored" in result.stdout
        assert result.stdout.rstrip().endswith("Up to date.")
    assert len(list((tmp_path / "backups").iterdir())) == 2
