"""Starting the web process: a bad setting is one line naming it, exit code 1, no traceback;
a good start leaves each worker with the loaded app frozen out of garbage collection."""

import json
import os
import re
import socket
import subprocess
import sys
import urllib.request
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from pathlib import Path

import pytest

from tests.conftest import REDIS_URL
from tests.live import ROOT, LiveServer, free_port

pytestmark = pytest.mark.live  # a process of its own: ./dev test -m 'not live' skips it

BIN = Path(sys.executable).parent


def start(tmp_path, **env) -> subprocess.CompletedProcess:
    """The web process as the Procfile runs it, with ``env``; it must exit by itself."""
    full = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "HOST": "127.0.0.1",
        "PORT": str(free_port()),
        "DATABASE_URL": f"sqlite:///{tmp_path / 'shop.db'}",
        **env,
    }
    return subprocess.run(
        [sys.executable, "-m", "shop.server"],
        cwd=ROOT,
        env=full,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )


@pytest.mark.parametrize(
    ("env", "line"),
    [
        ({"WEB_CONCURRENCY": "two"}, "shop: WEB_CONCURRENCY must be a whole number, got 'two'"),
        ({"SHOP_THREADS": "0"}, "shop: SHOP_THREADS must be at least 1, got 0"),
        ({"SHOP_SESSION_LIFETIME": "soon"}, "shop: SHOP_SESSION_LIFETIME must be a whole number"),
        ({"DATABASE_URL": "mysql://db/shop"}, "shop: DATABASE_URL must start with sqlite:///"),
        ({"REDIS_URL": "http://cache:6379"}, "shop: REDIS_URL is not a Redis URL"),
        ({"WEB_CONCURRENCY": "2"}, "shop: refusing to start 2 workers without REDIS_URL"),
    ],
    ids=["workers", "threads", "lifetime", "database", "redis url", "workers without redis"],
)
def test_a_bad_setting_stops_the_server_with_one_line(tmp_path, env, line):
    result = start(tmp_path, **env)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert "Worker failed to boot" not in result.stderr
    assert result.stderr.strip().splitlines()[-1].startswith(line), result.stderr


def test_a_flask_command_with_a_bad_setting_says_so_in_one_line(tmp_path):
    result = subprocess.run(
        [str(BIN / "flask"), "--app", "app", "db", "status"],
        cwd=ROOT,
        env={"PATH": os.environ["PATH"], "HOME": str(tmp_path), "SHOP_THREADS": "-1"},
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert result.returncode == 1
    assert result.stderr.strip() == "shop: SHOP_THREADS must be at least 1, got -1"


@pytest.mark.skipif(not REDIS_URL, reason="Redis case: SHOP_TEST_REDIS_URL is not set")
def test_an_unreachable_redis_is_named_at_start_and_the_server_still_serves(tmp_path):
    with open(tmp_path / "server.log", "w+") as log:
        server = LiveServer(
            {
                "DATABASE_URL": f"sqlite:///{tmp_path / 'shop.db'}",
                "REDIS_URL": f"redis://127.0.0.1:{free_port()}/0",
            },
            log=log,
        )
        server.stop()
        log.seek(0)
        text = log.read()
    assert "REDIS_URL: Redis does not answer at redis://127.0.0.1:" in text


def test_a_worker_freezes_the_loaded_app_and_dates_each_answer_to_the_second(tmp_path):
    # gunicorn.conf.py's post_worker_init: the app's objects, made at start, are never walked
    # by a collection again; and its Date header, formatted once a second, is the time of the
    # answer (docs/performance.md, "The request path under gunicorn").
    with open(tmp_path / "server.log", "w+") as log:
        server = LiveServer({"DATABASE_URL": f"sqlite:///{tmp_path / 'shop.db'}"}, log=log)
        try:
            for _ in range(2):  # the second Date comes from the one formatted for this second
                before = datetime.now(UTC).replace(microsecond=0)
                with urllib.request.urlopen(server.url + "/healthz", timeout=5) as response:
                    assert json.load(response)["status"] == "ok"
                    date = parsedate_to_datetime(response.headers["Date"])
                after = datetime.now(UTC)
                assert before <= date <= after, (before, response.headers["Date"], after)
        finally:
            server.stop()
        log.seek(0)
        text = log.read()
    frozen = [int(n) for n in re.findall(r"froze (\d+) objects of the loaded app", text)]
    assert len(frozen) == 1, text  # one worker, one freeze, after the app was loaded
    assert frozen[0] > 10_000, text  # the app's modules and schemas, not a handful


def test_dev_serve_on_a_busy_port_says_which_setting_to_change(tmp_path):
    with socket.create_server(("127.0.0.1", 0)) as busy:
        port = busy.getsockname()[1]
        result = subprocess.run(
            ["./dev", "serve"],
            cwd=ROOT,
            env={
                "PATH": os.environ["PATH"],
                "HOME": str(tmp_path),
                "PORT": str(port),
                "DATABASE_URL": f"sqlite:///{tmp_path / 'shop.db'}",
            },
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert result.returncode == 1
    assert f"Port {port} is in use" in result.stderr and "PORT=8001 ./dev serve" in result.stderr
    assert not (tmp_path / "shop.db").exists()  # nothing was started or upgraded
