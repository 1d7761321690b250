"""deploy/nginx.conf in front of a live gunicorn: slow clients, body limit, client address.

The test runs Debian's nginx as its own child process (no daemon, its own temp prefix, free
ports of 127.0.0.1) with deploy/nginx.conf as shipped but for the two addresses. Skipped,
saying why, where nginx is not installed (CI installs it: .ci/nginx).
"""

import http.client
import os
import shutil
import socket
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.faults import _stop, _wait
from tests.live import ROOT, LiveServer, free_port, release_step

NGINX = shutil.which("nginx") or next(
    (p for p in ("/usr/sbin/nginx",) if os.access(p, os.X_OK)), None
)
pytestmark = [
    pytest.mark.live,
    pytest.mark.skipif(
        NGINX is None, reason="nginx is not installed (CI installs Debian's: .ci/nginx)"
    ),
]


class Nginx:
    """nginx with deploy/nginx.conf, listening on a free port, passing to ``upstream_port``
    (``worker_processes``: 1 here; the benchmark of ``reuse_port`` runs Debian's ``auto``)."""

    def __init__(self, upstream_port: int, worker_processes: int = 1):
        self.port = free_port()
        self.prefix = Path(tempfile.mkdtemp(prefix="shop-nginx-"))
        shipped = (ROOT / "deploy" / "nginx.conf").read_text()
        site = shipped.replace("listen 80;", f"listen 127.0.0.1:{self.port};", 1).replace(
            "server 127.0.0.1:8000;", f"server 127.0.0.1:{upstream_port};", 1
        )
        assert site.count(str(self.port)) == 1 and site.count(str(upstream_port)) == 1
        (self.prefix / "shop.conf").write_text(site)
        temp = "\n".join(
            f"    {kind}_temp_path {self.prefix / kind};"
            for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
        )
        # The parts of Debian's /etc/nginx/nginx.conf that matter here, made private.
        (self.prefix / "nginx.conf").write_text(
            f"daemon off;\nworker_processes {worker_processes};\n"
            + ("user root;\n" if os.geteuid() == 0 else "")
            + f"pid {self.prefix / 'nginx.pid'};\n"
            f"error_log {self.prefix / 'error.log'} warn;\n"
            "events { worker_connections 1024; }\n"
            "http {\n    access_log off;\n    default_type application/octet-stream;\n"
            f"{temp}\n    include {self.prefix / 'shop.conf'};\n}}\n"
        )
        command = [NGINX, "-p", str(self.prefix), "-c", str(self.prefix / "nginx.conf")]
        command += ["-e", str(self.prefix / "error.log")]
        checked = subprocess.run([*command, "-t"], capture_output=True, text=True)
        assert checked.returncode == 0, checked.stderr
        self.process = subprocess.Popen(command, stderr=subprocess.DEVNULL)
        _wait(self._listening, 10, f"nginx on port {self.port}")

    def _listening(self) -> bool:
        assert self.process.poll() is None, (self.prefix / "error.log").read_text()
        try:
            socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
            return True
        except OSError:
            return False

    def stop(self) -> None:
        _stop(self.process, __import__("signal").SIGQUIT)  # nginx's graceful stop
        shutil.rmtree(self.prefix, ignore_errors=True)


@pytest.fixture(scope="module")
def node(tmp_path_factory):
    """gunicorn (1 worker, 4 threads: few enough to hold with slow clients) behind nginx.

    One for the module: each test leaves it as it found it (its own client addresses).
    """
    url = f"sqlite:///{tmp_path_factory.mktemp('proxy') / 'shop.db'}"
    release_step(url)
    server = LiveServer(
        {"DATABASE_URL": url, "SHOP_TRUSTED_PROXIES": "1", "SHOP_RATELIMIT_ENABLED": "1"},
        threads=4,
    )
    proxy = Nginx(server.port)
    yield server, proxy
    proxy.stop()
    server.stop()


def request(port, method="GET", path="/products", body=None, source="127.0.0.1", timeout=5):
    """One request; answers (status, body bytes)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    conn.source_address = (source, 0)
    try:
        headers = {"Content-Type": "application/json"} if body is not None else {}
        conn.request(method, path, body=body, headers=headers)
        answer = conn.getresponse()
        return answer.status, answer.read()
    finally:
        conn.close()


def slow_clients(port, count=50):
    """``count`` connections that send half a request and stall: partial headers, or full
    headers and part of the body."""
    socks = []
    for i in range(count):
        sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        if i % 2:
            sock.sendall(b"GET /products HTTP/1.1\r\nHost: shop\r\nX-Slow: ")
        else:
            sock.sendall(
                b"POST /auth/login HTTP/1.1\r\nHost: shop\r\nContent-Type: application/json\r\n"
                b'Content-Length: 1000\r\n\r\n{"email": '
            )
        socks.append(sock)
    return socks


def answered_within(port, seconds) -> bool:
    """Whether a plain request is answered 200 within ``seconds``."""
    try:
        return request(port, timeout=seconds)[0] == 200
    except OSError:  # timed out
        return False


def test_fifty_slow_clients_do_not_stop_other_requests_behind_nginx(node):
    server, proxy = node
    assert request(proxy.port)[0] == 200
    socks = slow_clients(proxy.port)
    try:
        with ThreadPoolExecutor(8) as pool:
            statuses = list(pool.map(lambda _: request(proxy.port)[0], range(24)))
        assert statuses == [200] * 24
        # The same slow clients straight at gunicorn hold its four threads: the proof that
        # nginx is what keeps the node answering.
        direct = slow_clients(server.port, count=8)
        try:
            assert not answered_within(server.port, 2)
        finally:
            for sock in direct:
                sock.close()
    finally:
        for sock in socks:
            sock.close()
    assert request(proxy.port)[0] == 200


def upstream_connections(server) -> set[str]:
    """The client ends of the TCP connections established to gunicorn's port now."""
    out = subprocess.run(
        ["ss", "-Htn", "state", "established", f"( dport = :{server.port} )"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return {line.split()[2] for line in out.splitlines()}


def test_nginx_keeps_connections_to_gunicorn_alive(node):
    server, proxy = node
    assert request(proxy.port)[0] == 200
    before = upstream_connections(server)
    for _ in range(10):
        assert request(proxy.port)[0] == 200
    after = upstream_connections(server)
    # Ten requests one after the other went over a connection that stays open, not ten new
    # ones closed after each (which is what nginx does without `keepalive`).
    assert after and len(after - before) <= 1, (before, after)


def test_the_body_limit_matches_the_app_and_answers_json(node):
    _, proxy = node
    limit = 1024 * 1024  # SHOP_MAX_BODY_BYTES's default
    status, body = request(proxy.port, "POST", "/auth/login", b" " * (limit + 1))
    assert status == 413 and body.startswith(b'{"message": "Request body too large')
    # At the limit nginx passes it on; the app reads it (and finds no JSON object in it).
    status, body = request(proxy.port, "POST", "/auth/login", b" " * limit)
    assert status == 400, body
    # An image, an import and a sync may be larger: nginx passes 2 MiB on to the app.
    images = "/products/" + "0" * 24 + "/images"
    for path in (images, "/products/import", "/content/sync"):
        status, body = request(proxy.port, "POST", path, b" " * (2 * limit))
        assert status == 401, (path, body)  # the app's answer (no credentials), not a 413


def test_the_app_counts_limits_per_client_behind_the_proxy(node):
    _, proxy = node
    for _ in range(5):
        assert request(proxy.port, "POST", "/auth/login", b"{}", source="127.0.0.2")[0] == 400
    assert request(proxy.port, "POST", "/auth/login", b"{}", source="127.0.0.2")[0] == 429
    # Another client (address) has its own budget: the app saw X-Forwarded-For, not nginx.
    assert request(proxy.port, "POST", "/auth/login", b"{}", source="127.0.0.3")[0] == 400


def test_a_node_that_is_down_is_a_json_503_with_retry_after():
    proxy = Nginx(free_port())  # nothing listens there
    try:
        started = time.monotonic()
        conn = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=5)
        conn.request("GET", "/products")
        answer = conn.getresponse()
        assert answer.status == 503
        assert answer.getheader("Retry-After") == "5"
        assert answer.read().startswith(b'{"message": "Service unavailable')
        assert time.monotonic() - started < 3
        conn.close()
    finally:
        proxy.stop()
