"""A real HTTP receiver on 127.0.0.1 for the webhook tests, and small helpers around it."""

import json
import socket
import threading
import time
from contextlib import suppress
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from standardwebhooks import Webhook


class Receiver:
    """An HTTP server in a thread that records every POST and answers the statuses queued
    in ``answers`` (200 once they run out, or ``default``).

    ``keep_alive`` speaks HTTP/1.1 and keeps connections open between requests, as most
    servers do; ``hang_up`` then closes each connection after answering without saying so
    (as a server whose idle timeout ran out between two requests). Each request records the
    client's port: requests of one connection share it.
    """

    def __init__(self, default=200, keep_alive=False, hang_up=False):
        self.requests = []
        self.answers = []
        self.default = default
        self.lock = threading.Lock()
        # While ``holding`` is set, a request is read and held unanswered (not recorded)
        # until ``released`` is set; ``held`` counts them.
        self.holding, self.released, self.held = threading.Event(), threading.Event(), 0
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1" if keep_alive else "HTTP/1.0"

            def do_POST(self):  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                if receiver.holding.is_set():
                    with receiver.lock:
                        receiver.held += 1
                    receiver.released.wait(60)
                    self.close_connection = True
                    return
                with receiver.lock:
                    receiver.requests.append(
                        {
                            "headers": {k.lower(): v for k, v in self.headers.items()},
                            "body": body,
                            "port": self.client_address[1],
                            "at": time.time(),
                        }
                    )
                    status = receiver.answers.pop(0) if receiver.answers else receiver.default
                answer = f"answer {status}".encode()
                self.send_response(status)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)
                if hang_up:
                    self.close_connection = True

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"

    def events(self) -> list[dict]:
        """The JSON bodies received, in order."""
        return [json.loads(r["body"]) for r in self.requests]

    def ids(self) -> list[str]:
        return [r["headers"]["webhook-id"] for r in self.requests]

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def stop(self) -> None:
        self.released.set()
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=10)


class Misbehaving:
    """A receiver that redirects, answers a megabyte, or accepts and never answers."""

    def __init__(self, mode):
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}/hook"
        self.mode = mode
        self.held = []
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            if self.mode == "silent":
                self.held.append(conn)  # read nothing, answer nothing
                continue
            conn.recv(65536)
            if self.mode == "redirect":
                conn.sendall(b"HTTP/1.1 302 Found\r\nLocation: http://10.0.0.1/\r\n"
                             b"Content-Length: 0\r\n\r\n")  # fmt: skip
            else:
                body = b"x" * (1024 * 1024)
                head = f"HTTP/1.1 200 OK\r\nContent-Length: {len(body)}\r\n\r\n".encode()
                with suppress(OSError):  # the client stops reading early, as it should
                    conn.sendall(head + body)
            conn.close()

    def stop(self):
        self.listener.close()
        for conn in self.held:
            conn.close()


def verify(secret: str, request: dict) -> dict:
    """The payload, if the Standard Webhooks library accepts the request's signature."""
    return Webhook(secret).verify(request["body"], request["headers"])


def owner_with_timeout(make_app, timeout: float):
    """An app whose attempts are cut after ``timeout`` seconds, and its owner signed in."""
    from tests.conftest import login

    app = make_app(
        prepare=False,
        WEBHOOKS_ALLOW_PRIVATE=True,
        WEBHOOKS_ALLOW_HTTP=True,
        WEBHOOKS_TIMEOUT=timeout,
    )
    owner = app.test_client()
    login(owner, "owner@example.com")
    return app, owner


def work(app) -> str:
    """``flask webhooks work --once``; answer its output."""
    result = app.test_cli_runner().invoke(args=["webhooks", "work", "--once"])
    assert result.exit_code == 0, result.output
    return result.output


def create_hook(client, url, *events, status=201, **extra):
    """``POST /webhooks``; answer the JSON."""
    response = client.post("/webhooks", json={"url": url, "events": list(events), **extra})
    assert response.status_code == status, response.json
    return response.json


def deliveries(client, hook_id) -> list[dict]:
    response = client.get(f"/webhooks/{hook_id}/deliveries")
    assert response.status_code == 200, response.json
    return response.json["items"]


def asked(client, app, path: str) -> dict:
    """POST a ping or replay (``path``), which is queued (202), run the worker once, and
    answer the delivery as its log then shows it (through the 202's ``Location``)."""
    response = client.post(path)
    assert response.status_code == 202, response.json
    assert response.json["kind"] in ("ping", "replay")
    work(app)
    shown = client.get(response.headers["Location"])
    assert shown.status_code == 200, shown.json
    assert shown.json["queued"] == []
    assert response.json["id"] in [attempt["id"] for attempt in shown.json["attempts"]]
    return shown.json
