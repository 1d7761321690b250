"""Bad days: PostgreSQL or Redis down, restarted or hung, and a worker lost mid-outage.

Each test starts its own PostgreSQL cluster or redis-server (tests/faults.py), never the
shared ones, and talks to the service as clients do: a live gunicorn over HTTP, or the test
client where one thread's connection is what is under test.
"""

import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from shop.db import postgres
from tests.conftest import PASSWORD, PG_URL
from tests.faults import _wait
from tests.live import LiveServer, release_step


def call(node, method, path, body=None, timeout=20):
    """One request; answers (status, headers, parsed body, seconds taken)."""
    request = urllib.request.Request(  # noqa: S310 - http://127.0.0.1 only
        node.url + path,
        data=None if body is None else json.dumps(body).encode(),
        method=method,
        headers={"Content-Type": "application/json"} if body is not None else {},
    )
    started = time.monotonic()
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:  # noqa: S310
            status, headers, raw = answer.status, answer.headers, answer.read()
    except urllib.error.HTTPError as error:
        with error:
            status, headers, raw = error.code, error.headers, error.read()
    return status, headers, json.loads(raw) if raw else None, time.monotonic() - started


def workers_of(node) -> list[int]:
    """The PIDs of a gunicorn master's workers."""
    out = subprocess.run(
        ["ps", "-o", "pid=", "--ppid", str(node.process.pid)], capture_output=True, text=True
    )
    return [int(pid) for pid in out.stdout.split()]


def assert_unavailable(status, headers, body):
    assert status == 503, body
    assert set(body) == {"message"} and "database" in body["message"]
    assert int(headers["Retry-After"]) >= 1


@pytest.mark.live
def test_a_node_started_while_postgresql_is_down_answers_503_keeps_its_workers_and_heals(
    private_postgres, tmp_path
):
    pg = private_postgres
    pg.start()
    release_step(pg.url)
    pg.stop()
    log_path = tmp_path / "gunicorn.log"
    with open(log_path, "wb") as log:
        node = LiveServer({"DATABASE_URL": pg.url, "SHOP_RATELIMIT_ENABLED": "0"}, log=log)
        try:
            status, headers, body, seconds = call(node, "GET", "/products")
            assert_unavailable(status, headers, body)
            assert seconds < 2  # refused at once, no waiting on the connect timeout
            for _ in range(5):
                assert_unavailable(*call(node, "GET", "/products")[:3])

            # A worker lost during the outage is replaced, and the replacement boots.
            (lost,) = workers_of(node)
            os.kill(lost, signal.SIGKILL)
            _wait(lambda: [w for w in workers_of(node) if w != lost], 20, "a new worker")
            assert_unavailable(*call(node, "GET", "/products")[:3])
            assert node.process.poll() is None  # the master stayed up

            pg.start()
            back = time.monotonic()
            seen = []

            def serves():
                seen.append(call(node, "GET", "/products")[0])
                return seen[-1] == 200

            _wait(serves, 5, "serving after PostgreSQL came back")
            assert time.monotonic() - back < 5
            assert set(seen) <= {200, 503}, seen
            status, _, body, _ = call(
                node,
                "POST",
                "/auth/register",
                {"email": "back@example.com", "password": PASSWORD, "name": "Back"},
            )
            assert status == 201, body
        finally:
            node.stop()
    text = log_path.read_text()
    # Once per worker process (two lived), not a traceback per request.
    assert text.count("the database cannot be reached") == 2, text
    assert "Traceback" not in text, text
    assert "the database answers again" in text, text


@pytest.mark.live
def test_after_a_postgresql_restart_no_request_sees_the_dead_connections(private_postgres):
    pg = private_postgres
    pg.start()
    release_step(pg.url)
    node = LiveServer({"DATABASE_URL": pg.url, "SHOP_RATELIMIT_ENABLED": "0"}, threads=8)
    try:

        def burst(tag):
            def one(i):
                if i % 4 == 0:
                    body = {"email": f"{tag}{i}@example.com", "password": PASSWORD, "name": "R"}
                    return call(node, "POST", "/auth/register", body)[0]
                return call(node, "GET", "/products")[0]

            with ThreadPoolExecutor(16) as pool:
                return list(pool.map(one, range(32)))

        assert set(burst("before")) == {200, 201}  # every thread holds a connection now
        pg.restart()
        statuses = burst("after")
        assert set(statuses) == {200, 201}, statuses
    finally:
        node.stop()


@pytest.fixture
def pg_app(make_app, database_url):
    """An app on the shared PostgreSQL (its own schema): one connection per thread."""
    if not database_url.startswith("postgresql"):
        pytest.skip("PostgreSQL only: SQLite has no connection to lose")
    return make_app()


def _terminate(pid: int) -> None:
    """End one server process of ours (a backend of this test's app) from another session."""
    import psycopg

    with psycopg.connect(PG_URL, autocommit=True) as conn:
        conn.execute("SELECT pg_terminate_backend(%s)", [pid])


def test_a_connection_lost_while_idle_is_replaced_and_the_statement_retried(pg_app):
    client = pg_app.test_client()
    assert client.get("/products").status_code == 200
    with pg_app.app_context():
        database = pg_app.extensions["shop.db"]
        pid = database.value("SELECT pg_backend_pid()")
    _terminate(pid)  # the test client runs in this thread: this thread's connection
    response = client.get("/products")
    assert response.status_code == 200, response.json
    with pg_app.app_context():
        assert database.value("SELECT pg_backend_pid()") != pid


def test_a_connection_lost_inside_a_transaction_is_503_and_writes_nothing(pg_app, caplog):
    from shop import db

    def lose_connection():
        with db.transaction():
            db.execute(
                "INSERT INTO counters (name, value) VALUES ('lost', 1)"
                " ON CONFLICT (name) DO NOTHING"
            )
            db.value("SELECT pg_terminate_backend(pg_backend_pid())")
        return {}

    pg_app.add_url_rule("/lose", view_func=lose_connection)
    client = pg_app.test_client()
    with caplog.at_level(logging.WARNING, logger="shop"):
        response = client.get("/lose")
    assert response.status_code == 503, response.get_data(as_text=True)
    assert set(response.json) == {"message"}
    assert response.headers["Retry-After"] == "5"
    assert "the database cannot be reached" in caplog.text
    with pg_app.app_context():
        assert db.value("SELECT value FROM counters WHERE name = 'lost'") is None
    assert client.get("/products").status_code == 200


def _limited_login_app(make_app, redis_url):
    """An app counting sign-ins in ``redis_url``, with a user who can sign in."""
    from shop.auth.users import create_user

    app = make_app(RATELIMIT_ENABLED=True, REDIS_URL=redis_url)
    with app.app_context():
        create_user("owner@example.com", "Owner", PASSWORD, "owner", [])
    return app


def _sign_in(client):
    started = time.monotonic()
    response = client.post("/auth/login", json={"email": "owner@example.com", "password": PASSWORD})
    return response, time.monotonic() - started


@pytest.mark.live
@pytest.mark.parametrize("fault", ["stopped", "hung"])
def test_redis_stopped_or_hung_sign_in_answers_fast_and_limits_hold_in_memory(
    make_app, private_redis, caplog, fault
):
    app = _limited_login_app(make_app, private_redis.url)
    client = app.test_client()
    assert _sign_in(client)[0].status_code == 200  # counted in Redis
    if fault == "stopped":
        private_redis.stop()
    else:
        private_redis.pause()
    try:
        with caplog.at_level(logging.INFO, logger="flask-limiter"):
            answers = [_sign_in(client) for _ in range(5)]
            assert [r.status_code for r, _ in answers] == [200] * 5
            # The first waits for Redis at most twice SHOP_REDIS_TIMEOUT (its command, then
            # flask-limiter's health check); the others count in memory without asking Redis.
            assert all(seconds < 2 for _, seconds in answers), answers
            over, _ = _sign_in(client)
        assert over.status_code == 429  # five a minute still holds, in this process
        assert "Retry-After" in over.headers
        assert caplog.text.count("falling back to in-memory storage") == 1
    finally:
        private_redis.resume()


@pytest.mark.live
def test_redis_back_after_an_outage_counts_again(make_app, private_redis):
    import redis

    app = _limited_login_app(make_app, private_redis.url)
    store = redis.Redis.from_url(private_redis.url, socket_timeout=5)
    private_redis.pause()
    try:
        assert _sign_in(app.test_client())[0].status_code == 200  # counted in memory
    finally:
        private_redis.resume()
    assert store.keys("*") == []

    def counted_in_redis():
        _sign_in(app.test_client())
        return store.keys("*") != []

    # flask-limiter looks at Redis again after a back-off of 1, 2, 4 ... seconds.
    _wait(counted_in_redis, 10, "sign-ins counted in Redis again")


@pytest.mark.live
def test_the_worker_starts_while_postgresql_is_down_waits_and_heals(private_postgres, tmp_path):
    pg = private_postgres
    pg.start()
    release_step(pg.url)
    pg.stop()
    root = Path(__file__).resolve().parents[2]
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",  # the venv's flask
        "DATABASE_URL": pg.url,
        "SHOP_WEBHOOKS_POLL_INTERVAL": "1",
    }
    log_path = tmp_path / "worker.log"
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            ["flask", "--app", "app", "jobs", "run"], cwd=root, env=env, stdout=log, stderr=log
        )
        try:
            _wait(lambda: "cannot be reached" in log_path.read_text(), 20, "the warning")
            assert process.poll() is None  # started, and waits
            pg.start()  # a few seconds: several of the worker's passes meet it down meanwhile
            _wait(lambda: "answers again" in log_path.read_text(), 20, "the worker healing")
            assert process.poll() is None
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=30)
    text = log_path.read_text()
    assert process.returncode == 0, text
    assert text.count("the database cannot be reached") == 1, text  # one line per outage
    assert "the worker waits until it is back" in text, text
    assert "Traceback" not in text, text
    assert "Worker stopped." in text, text


# -- a database that stops answering (issue 35, finding 12) ---------------------------------


@pytest.mark.live
def test_a_frozen_postgresql_fails_requests_on_open_connections_within_the_limit_and_heals(
    private_postgres, tmp_path
):
    pg = private_postgres
    pg.start()
    release_step(pg.url)
    limit = 1  # SHOP_DB_STATEMENT_TIMEOUT: a frozen server is cut at limit + GRACE
    bound = limit + postgres.GRACE + postgres.TICK + 1.0  # and a request's own work
    log_path = tmp_path / "gunicorn.log"
    env = {
        "DATABASE_URL": pg.url,
        "SHOP_RATELIMIT_ENABLED": "0",
        "SHOP_DB_STATEMENT_TIMEOUT": str(limit),
        "SHOP_DB_CONNECT_TIMEOUT": "1",
    }
    requests = [
        ("POST", "/auth/register", {"email": "frozen@example.com", "password": PASSWORD,
                                    "name": "Frozen"}),
        ("GET", "/products", None),
    ]  # fmt: skip
    with open(log_path, "wb") as log:
        node = LiveServer(env, threads=1, log=log)  # one thread: one connection, kept open
        try:
            for method, path, body in requests:
                assert call(node, "GET", "/products")[0] == 200  # the connection is open
                pg.freeze()
                try:
                    status, headers, answer, seconds = call(node, method, path, body, timeout=10)
                    assert_unavailable(status, headers, answer)
                    assert seconds < bound, (path, seconds)
                finally:
                    pg.thaw()
                back = time.monotonic()
                _wait(lambda: call(node, "GET", "/products")[0] == 200, 10, "serving again")
                assert time.monotonic() - back < 10
            status, _, answer, _ = call(node, *requests[0])
            assert status == 201, answer  # the write cut on the frozen server never ran
        finally:
            node.stop()
    text = log_path.read_text()
    assert f"the database did not answer within {limit} s" in text, text
    assert "the database answers again" in text, text
    assert "Traceback" not in text, text


def test_a_write_held_up_past_the_statement_timeout_answers_503_and_heals(make_app):
    from shop import db

    limit = 0.5
    app = make_app(DB_STATEMENT_TIMEOUT=limit)
    client = app.test_client()
    customer = {"email": "held@example.com", "password": PASSWORD, "name": "Held"}
    holding, done = threading.Event(), threading.Event()

    def hold():
        """Another writer's transaction, holding SQLite's write lock (PostgreSQL: the same
        new email, so the request's insert waits for it) until the request has answered."""
        with app.app_context(), db.transaction():
            db.execute(
                "INSERT INTO customers (id, email, name, created_at, updated_at)"
                " VALUES (:id, :email, 'Other', :now, :now)",
                {"id": db.new_id(), "email": customer["email"], "now": "2030-01-01T00:00:00Z"},
            )
            holding.set()
            done.wait(5)  # on a release without the limit the request waits this long
            db.execute("DELETE FROM customers WHERE email = :email", customer)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert holding.wait(10)
        started = time.monotonic()
        response = client.post("/auth/register", json=customer)
        seconds = time.monotonic() - started
    finally:
        done.set()
        holder.join()
    assert response.status_code == 503, response.json
    assert response.headers["Retry-After"] == "5"
    assert "the database" in response.json["message"]
    assert seconds < limit + postgres.GRACE + postgres.TICK + 1.0
    again = client.post("/auth/register", json=customer)
    assert again.status_code == 201, again.json  # a connection that waits no more


def _waiting_threads() -> int:
    return sum(thread.name == "sqlite-writer-wait" for thread in threading.enumerate())


def test_a_sqlite_write_held_up_by_another_process_answers_503_and_heals(make_app, database_url):
    import fcntl
    import sqlite3

    if not database_url.startswith("sqlite"):
        pytest.skip("SQLite only: its write lock is a file another process can hold")
    limit = 0.5
    app = make_app(DB_STATEMENT_TIMEOUT=limit)
    client = app.test_client()
    path = database_url.removeprefix("sqlite:///")
    customer = {"email": "held@example.com", "password": PASSWORD, "name": "Held"}
    # Another program's writer: the queue's file lock and SQLite's own, as a worker holds them.
    writer = os.open(path + "-writer", os.O_RDWR)
    other = sqlite3.connect(path, isolation_level=None)
    try:
        fcntl.flock(writer, fcntl.LOCK_EX)
        other.execute("BEGIN IMMEDIATE")
        before = _waiting_threads()
        for _ in range(3):  # each waits its limit; one thread waits at the file for them all
            started = time.monotonic()
            response = client.post("/auth/register", json=customer)
            seconds = time.monotonic() - started
            assert response.status_code == 503, response.json
            assert response.headers["Retry-After"] == "5"
            assert response.json["message"] == (
                "Service unavailable: the database is busy: another write held it for over"
                f" {limit} s. Try again shortly."
            )
            assert seconds < limit + 1.0
        assert _waiting_threads() == before + 1
    finally:
        other.rollback()
        other.close()
        fcntl.flock(writer, fcntl.LOCK_UN)
        os.close(writer)
    again = client.post("/auth/register", json=customer)
    assert again.status_code == 201, again.json  # the abandoned wait gave the lock back


def test_a_database_urls_own_connection_settings_win_but_the_statement_timeout_is_ours():
    params = postgres.connect_params(
        "postgresql://shop@db:5432/shop?options=-csearch_path%3Dx%20-cstatement_timeout%3D0"
        "&keepalives_idle=30&connect_timeout=9",
        3,
        2.5,
    )
    assert params["keepalives_idle"] == "30" and params["connect_timeout"] == "9"
    assert params["keepalives"] == "1" and params["tcp_user_timeout"] == "20000"
    # Ours last: PostgreSQL takes the last -c of a setting.
    assert params["options"] == "-csearch_path=x -cstatement_timeout=0 -c statement_timeout=2500"
    assert postgres.connect_params("postgresql://h/d", 3, None)["options"] == (
        "-c statement_timeout=0"  # an upgrade's connection: no limit
    )


def test_an_upgrade_runs_without_the_limit_and_the_limit_comes_back(make_app):
    from shop import db
    from shop.outages import Unavailable

    app = make_app(DB_STATEMENT_TIMEOUT=0.3)
    database = app.extensions["shop.db"]
    if database.engine != "postgresql":
        pytest.skip("PostgreSQL only: a SQLite statement runs in this process, unlimited")
    slow = "SELECT pg_sleep(0.6)"
    with app.app_context():
        with pytest.raises(Unavailable, match="did not answer within 0.3 s"):
            db.value(slow)
        with database.time_limit(None):  # as `flask db upgrade` runs
            db.value(slow)
            assert db.value("SHOW statement_timeout") == "0"
        assert db.value("SHOW statement_timeout") == "300ms"
        with pytest.raises(Unavailable):
            db.value(slow)
