"""The Procfile's worker beside the web process, and ``--webhook``'s subscribed receiver.

The worker (``flask --app app webhooks work``) runs through every benchmark, as it does in
production: checkout queues an e-mail per order and the worker sends it (to its log, there
being no ``SMTP_URL``). ``--webhook`` adds one webhook, the owner's, subscribed to every
event, and a receiver on 127.0.0.1 that answers 204 to every POST; the worker delivers to it
while the scenarios run (``--webhook outbox``: events are queued, the worker sends nothing,
to measure the web side's cost alone).

The receiver stands for somebody else's server, which in production runs on another machine.
Here it shares the two cores with the shop, so it is kept as cheap as a receiver can be: one
thread, plain sockets, keep-alive when the client asks for it.
"""

import contextlib
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

from tests.live import end

ROOT = Path(__file__).resolve().parent.parent
RESPONSE = b"HTTP/1.1 204 No Content\r\n"


class Receiver:
    """Answers 204 to each request on 127.0.0.1, on every connection at once, until ``stop``."""

    def __init__(self):
        self.received = 0
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}/hook"
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        """Each connection on a thread of its own, as real receivers do: the worker keeps
        two connections open to one origin (two attempts in flight), and a receiver that
        read one at a time left the second's request unanswered until it timed out."""
        while True:
            try:
                conn, _ = self._listener.accept()
            except OSError:  # closed by stop()
                return
            threading.Thread(target=self._connection, args=(conn,), daemon=True).start()

    def _connection(self, conn: socket.socket) -> None:
        with conn, contextlib.suppress(OSError, ValueError):
            self._answer(conn)

    def _answer(self, conn: socket.socket) -> None:
        """Every request of one connection: read its head and body, answer 204."""
        buffer = b""
        while True:
            while b"\r\n\r\n" not in buffer:
                chunk = conn.recv(65536)
                if not chunk:
                    return
                buffer += chunk
            head, _, buffer = buffer.partition(b"\r\n\r\n")
            fields = dict(
                (name.strip().lower(), value.strip().lower())
                for name, _, value in (line.partition(b":") for line in head.split(b"\r\n")[1:])
            )
            length = int(fields.get(b"content-length", 0))
            while len(buffer) < length:
                chunk = conn.recv(65536)
                if not chunk:
                    return
                buffer += chunk
            buffer = buffer[length:]
            self.received += 1
            close = fields.get(b"connection") == b"close"
            conn.sendall(RESPONSE + (b"Connection: close\r\n\r\n" if close else b"\r\n"))
            if close:
                return

    def stop(self) -> None:
        self._listener.close()
        self._thread.join(timeout=5)


def subscribe(app_factory, database_url: str, url: str) -> None:
    """One webhook, the owner's, to ``url``, subscribed to every event."""
    app = app_factory(database_url)
    app.config.update(WEBHOOKS_ALLOW_PRIVATE=True, WEBHOOKS_ALLOW_HTTP=True)
    with app.app_context():
        from shop import db
        from shop.auth.caller import Caller
        from shop.permissions import ALL_PERMISSIONS
        from shop.webhooks import store
        from shop.webhooks.events import ALL_EVENTS

        owner = db.value("SELECT id FROM users WHERE email = 'owner@bench.example'")
        caller = Caller("admin", owner, email="owner@bench.example", role="owner",
                        permissions=ALL_PERMISSIONS)  # fmt: skip
        store.create({"url": url, "events": list(ALL_EVENTS)}, caller)
    app.extensions["shop.db"].close_all()


class Worker:
    """The Procfile's worker process on ``database_url``, until ``stop``."""

    def __init__(self, database_url: str, env: dict, log_path: Path, root: Path = ROOT):
        self.log = open(log_path, "ab")  # noqa: SIM115 - closed by stop()
        worker_env = {
            **env,
            "DATABASE_URL": database_url,
            "SHOP_WEBHOOKS_ALLOW_PRIVATE": "1",
            "SHOP_WEBHOOKS_ALLOW_HTTP": "1",
        }
        self.process = subprocess.Popen(
            [sys.executable, "-m", "flask", "--app", "app", "webhooks", "work"],
            cwd=root,
            env={**os.environ, **worker_env},
            stdout=self.log,
            stderr=self.log,
        )

    def stop(self) -> None:
        end(self.process, timeout=15)
        self.log.close()
