"""Stopping a node (SIGTERM, as a deploy or a scale-in does): the requests in flight finish,
and a connection opened meanwhile is refused at once, so a proxy retries another node."""

import json
import signal
import socket

import pytest

from tests.conftest import PASSWORD
from tests.faults import _wait
from tests.live import LiveServer, release_step

pytestmark = pytest.mark.live  # a process of its own: ./dev test -m 'not live' skips it


def refused(port) -> bool:
    """Whether a new connection to ``port`` is refused now."""
    try:
        sock = socket.create_connection(("127.0.0.1", port), timeout=0.5)
    except ConnectionRefusedError:
        return True
    sock.close()
    return False


def read_response(sock) -> bytes:
    """Everything the server sends until it closes the connection."""
    chunks = []
    while chunk := sock.recv(65536):
        chunks.append(chunk)
    return b"".join(chunks)


def test_sigterm_finishes_the_request_in_flight_and_refuses_new_connections(tmp_path):
    url = f"sqlite:///{tmp_path / 'shop.db'}"
    release_step(url)
    server = LiveServer({"DATABASE_URL": url, "SHOP_RATELIMIT_ENABLED": "0"}, threads=4)
    try:
        sock = socket.create_connection(("127.0.0.1", server.port), timeout=10)
        # A first request on the connection: the worker has surely accepted it.
        sock.sendall(b"GET /openapi.json HTTP/1.1\r\nHost: shop\r\n\r\n")
        head = b""
        while b"\r\n\r\n" not in head:
            head += sock.recv(65536)
        length = int(head.split(b"Content-Length: ", 1)[1].split(b"\r\n", 1)[0])
        rest = len(head.split(b"\r\n\r\n", 1)[1])
        while rest < length:
            rest += len(sock.recv(65536))
        # The request in flight: headers and part of its body sent, the rest still to come.
        body = json.dumps({"email": "late@example.com", "password": PASSWORD, "name": "Late"})
        body = body.encode()
        sock.sendall(
            b"POST /auth/register HTTP/1.1\r\nHost: shop\r\nContent-Type: application/json\r\n"
            + f"Content-Length: {len(body)}\r\n\r\n".encode()
            + body[:10]
        )

        server.process.send_signal(signal.SIGTERM)
        _wait(lambda: refused(server.port), 5, "new connections refused after SIGTERM")

        sock.sendall(body[10:])
        answer = read_response(sock)
        sock.close()
        assert answer.startswith(b"HTTP/1.1 201 "), answer[:200]
        assert b"late@example.com" in answer
        assert server.process.wait(timeout=15) == 0
    finally:
        server.stop()
