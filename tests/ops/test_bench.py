"""The benchmark's commands start (the benchmark itself is no test: docs/performance.md)."""

import http.client
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bench import wrk
from tests.live import LiveServer

ROOT = Path(__file__).resolve().parents[2]
REDIS_URL = os.environ.get("SHOP_TEST_REDIS_URL")


def test_bench_commands_start():
    """``python -m bench.run --help`` imports every part of the table; the others load too."""
    answer = subprocess.run(
        [sys.executable, "-m", "bench.run", "--help"],
        cwd=ROOT, capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    assert "--quick" in answer.stdout and "--only" in answer.stdout
    subprocess.run(
        [sys.executable, "-c",
         "import bench.ab, bench.lists, bench.references, bench.reuse_port, bench.search,"
         " bench.webhook_cost"],
        cwd=ROOT, capture_output=True, timeout=60, check=True,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("counts", "workers", "balanced"),
    [
        ([8, 8], 2, True),
        ([12, 4], 2, True),  # each worker at least half its share: both cores busy
        ([13, 3], 2, False),
        ([16, 0], 2, False),  # one worker served the whole row
        ([16], 2, False),  # the other worker holds nothing (or is still booting)
        ([16], 1, True),
    ],
)
def test_a_split_is_balanced_when_every_worker_holds_half_its_share(counts, workers, balanced):
    """16 wrk connections over the workers (``bench.wrk.is_balanced``)."""
    assert wrk.is_balanced(counts, workers, connections=16) is balanced


def test_one_connection_is_balanced_over_two_workers():
    """A single-connection row (``bench/lists.py``) cannot be spread: never flagged."""
    assert wrk.is_balanced([1, 0], 2, connections=1)


@pytest.mark.live
@pytest.mark.skipif(not REDIS_URL, reason="two workers need SHOP_TEST_REDIS_URL")
def test_the_split_counts_each_open_keep_alive_connection_once(tmp_path):
    """``connections_per_worker`` finds every connection a client keeps open, each on
    one of the two workers."""
    server = LiveServer(
        {"DATABASE_URL": f"sqlite:///{tmp_path / 'bench.db'}", "REDIS_URL": REDIS_URL},
        workers=2,
        threads=2,
        app="bench.baseline:app",
        ready_path="/fixed",
    )
    clients = [http.client.HTTPConnection("127.0.0.1", server.port, timeout=10) for _ in range(5)]
    try:
        _until_forked(server, workers=2)
        for client in clients:  # answered: accepted by a worker and kept alive
            client.request("GET", "/fixed")
            assert client.getresponse().read()
        counts = wrk.connections_per_worker(server.process.pid, server.port)
        assert sum(counts) == 5 and len(counts) == 2
    finally:
        for client in clients:
            client.close()
        server.stop()


def _until_forked(server: LiveServer, workers: int) -> None:
    """Poll until gunicorn has forked all its workers: it answers as soon as the first is up,
    and forks the next a random fraction of a second later."""
    deadline = time.monotonic() + 30
    while len(wrk.worker_processes(server.process.pid)) < workers:
        assert time.monotonic() < deadline, "gunicorn did not fork its workers within 30 s"
        time.sleep(0.01)  # polling for the fork, not waiting for time to pass
