"""HTTP edges against a live gunicorn: pooled connections after a refusal, chunked bodies,
the Host header and what lands in the logs."""

import http.client
import json
import socket

import pytest

from tests.live import LiveServer

pytestmark = pytest.mark.live  # a process of its own: ./dev test -m 'not live' skips it


@pytest.fixture
def live(database_url, make_app, tmp_path):
    """A live gunicorn on the test's database (with its schema), limits off."""
    make_app()
    log = open(tmp_path / "gunicorn.log", "wb")  # noqa: SIM115 - closed below
    server = LiveServer(
        {
            "DATABASE_URL": database_url,
            "SHOP_COOKIE_SECURE": "0",
            "SHOP_RATELIMIT_ENABLED": "0",
            "SHOP_MAX_BODY_BYTES": "65536",
            "SHOP_ACCESS_LOG": "1",  # what lands in it is checked below
        },
        threads=4,
        log=log,
    )
    server.log_path = tmp_path / "gunicorn.log"
    yield server
    server.stop()
    log.close()


BIG = json.dumps({"label": "x" * 150_000, "scopes": ["read:product"]}).encode()


@pytest.mark.parametrize(
    ("path", "status"),
    [
        ("/api-keys", 401),  # refused by the route guard before the body is read
        ("/content/sync", 401),
        ("/auth/login", 413),  # over SHOP_MAX_BODY_BYTES
    ],
)
def test_a_pooled_connection_survives_a_request_refused_before_its_body(live, path, status):
    """20 times on one keep-alive connection: a refused big body, then an ordinary read.

    The refusal either keeps the connection usable or says ``Connection: close`` (and the
    client opens a new one); it never answers keep-alive and then hangs up.
    """
    conn = http.client.HTTPConnection("127.0.0.1", live.port, timeout=10)
    try:
        for _ in range(20):
            conn.request("POST", path, body=BIG, headers={"Content-Type": "application/json"})
            refused = conn.getresponse()
            assert refused.status == status
            assert set(json.loads(refused.read())) == {"message"}
            conn.request("GET", "/settings/public")
            after = conn.getresponse()
            assert after.status == 200, after.read()
            after.read()
    finally:
        conn.close()


@pytest.mark.parametrize(
    "path", ["/products/" + "0" * 24 + "/images", "/content/sync", "/products/import"]
)
def test_a_refused_body_the_route_accepts_is_read_not_reset(live, path):
    """4 MiB to a route that takes more than the usual limit, refused (401) before its body
    is read, 20 times on one keep-alive connection: every refusal arrives and keeps the
    connection. Left unread, the body made the close a reset, which lost the answer (a 502
    behind nginx, tests/edge/test_proxy.py)."""
    body = b" " * (4 * 1024 * 1024)
    conn = http.client.HTTPConnection("127.0.0.1", live.port, timeout=10)
    try:
        for _ in range(20):
            conn.request("POST", path, body=body, headers={"Content-Type": "text/csv"})
            refused = conn.getresponse()
            assert refused.status == 401
            assert set(json.loads(refused.read())) == {"message"}
            assert refused.getheader("Connection") == "keep-alive"  # nothing left unread
    finally:
        conn.close()


def _raw(live, request: bytes) -> bytes:
    """Send raw bytes on a new connection; answer everything the server sends back."""
    with socket.create_connection(("127.0.0.1", live.port), timeout=10) as sock:
        sock.sendall(request)
        chunks = []
        while True:
            data = sock.recv(65536)
            if not data:
                break
            chunks.append(data)
    return b"".join(chunks)


def test_a_chunked_body_over_the_limit_is_413(live):
    body = json.dumps({"email": "a@example.com", "password": "x" * 100_000}).encode()
    chunks = b"".join(
        f"{len(part):x}\r\n".encode() + part + b"\r\n"
        for part in (body[i : i + 8192] for i in range(0, len(body), 8192))
    )
    answer = _raw(
        live,
        b"POST /auth/login HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
        b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n" + chunks + b"0\r\n\r\n",
    )
    head, _, payload = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 413"), answer[:300]
    assert "65536" in json.loads(payload)["message"]


def test_control_characters_in_the_path_are_escaped_in_the_logs(live):
    forged = "/no-such%0D%0A127.0.0.1%20%22GET%20/forged%20HTTP/1.1%22%20200%00x"
    conn = http.client.HTTPConnection("127.0.0.1", live.port, timeout=10)
    conn.request("GET", forged)
    response = conn.getresponse()
    response.read()
    conn.close()
    assert response.status in (400, 404)
    live.stop()  # flushes the log
    text = live.log_path.read_bytes()
    assert b"\x00" not in text
    lines = [line for line in text.splitlines() if b"no-such" in line]
    assert lines, text[-2000:]
    assert all(b"forged" in line for line in lines)  # never a line of its own


@pytest.mark.parametrize("setting", [None, "0", "1"])
def test_the_access_log_is_written_only_when_asked_for(database_url, make_app, tmp_path, setting):
    make_app()
    env = {"DATABASE_URL": database_url, "SHOP_RATELIMIT_ENABLED": "0"}
    if setting is not None:
        env["SHOP_ACCESS_LOG"] = setting
    path = tmp_path / "gunicorn.log"
    with open(path, "wb") as log:
        server = LiveServer(env, threads=2, log=log)
        try:
            conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
            conn.request("GET", "/products?q=never-logged")
            assert conn.getresponse().status == 200
            conn.close()
        finally:
            server.stop()  # flushes the log
    lines = [line for line in path.read_bytes().splitlines() if b'"GET /products"' in line]
    assert len(lines) == (1 if setting == "1" else 0), lines
    assert b"never-logged" not in path.read_bytes()


def test_every_answer_is_finished_once(client, owner_client):
    """finish_response reads the view's headers in one pass (issue 29): ``nosniff`` once,
    a signed-in answer ``no-store`` once, an anonymous one without a caching rule, and a
    redirect to the client's own Host made relative."""
    anonymous, missing = client.get("/products"), client.get("/no-such-thing")
    signed_in = owner_client.get("/auth/me")
    for response in (anonymous, missing, signed_in):
        assert response.headers.getlist("X-Content-Type-Options") == ["nosniff"]
    assert signed_in.headers.getlist("Cache-Control") == ["no-store"]
    assert "Cache-Control" not in anonymous.headers
    redirect = client.get("/admin", headers={"Host": "shop.example"})
    assert redirect.status_code in (301, 308)
    assert redirect.headers["Location"] == "/admin/"
