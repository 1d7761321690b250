"""``--webhook``: the scenarios measured with one webhook subscribed to every event.

A receiver on 127.0.0.1 answers 204 to every POST; one webhook, the owner's, subscribes to
all events; the Procfile's worker (``flask --app app webhooks work``) delivers while the
scenarios run, as it would in production (``--webhook outbox``: no worker, to measure the
web side's cost alone). Everything stops and is removed at the end.
"""

import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


class _Handler(BaseHTTPRequestHandler):
    received = 0

    def do_POST(self):  # noqa: N802 - http.server's name
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        _Handler.received += 1
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args):
        pass


class Subscribed:
    """A receiver, a webhook to it and a worker process, until ``stop``."""

    def __init__(self, app_factory, database_url: str, env: dict, log_path: Path, mode: str):
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        app = app_factory(database_url)
        app.config.update(WEBHOOKS_ALLOW_PRIVATE=True, WEBHOOKS_ALLOW_HTTP=True)
        with app.app_context():
            from shop import db
            from shop.auth.caller import Caller
            from shop.auth.permissions import ALL_PERMISSIONS
            from shop.webhooks import store
            from shop.webhooks.events import ALL_EVENTS

            owner = db.value("SELECT id FROM users WHERE email = 'owner@bench.example'")
            caller = Caller("admin", owner, email="owner@bench.example", role="owner",
                            permissions=ALL_PERMISSIONS)  # fmt: skip
            store.create({"url": url, "events": list(ALL_EVENTS)}, caller)
        app.extensions["shop.db"].close_all()
        self.worker = None
        self.log = open(log_path, "ab")  # noqa: SIM115 - closed by stop()
        if mode == "outbox":  # only the web side's cost: events queue, nobody sends them
            return
        worker_env = {
            **env,
            "DATABASE_URL": database_url,
            "SHOP_WEBHOOKS_ALLOW_PRIVATE": "1",
            "SHOP_WEBHOOKS_ALLOW_HTTP": "1",
        }

        self.worker = subprocess.Popen(
            [sys.executable, "-m", "flask", "--app", "app", "webhooks", "work"],
            cwd=ROOT,
            env={**os.environ, **worker_env},
            stdout=self.log,
            stderr=self.log,
        )

    @property
    def received(self) -> int:
        return _Handler.received

    def stop(self) -> None:
        if self.worker is not None:
            self.worker.terminate()
            try:
                self.worker.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.worker.kill()
                self.worker.wait()
        self.server.shutdown()
        self.server.server_close()
        self.log.close()
