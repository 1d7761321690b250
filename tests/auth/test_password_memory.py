"""Memory under scrypt sign-ins: a hash takes 32 MiB while it runs (N=32768, r=8), so at most
SHOP_PASSWORD_HASH_CONCURRENCY (1) run at once per process, whatever the threads."""

import json
import os
import subprocess
import sys
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.conftest import PASSWORD
from tests.live import ROOT, LiveServer, release_step

pytestmark = pytest.mark.live  # a process of its own: ./dev test -m 'not live' skips it


def peak_rss_kib(pid: int) -> int:
    """The highest resident memory a process has had (VmHWM), in KiB."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    raise AssertionError("no VmHWM")


def test_sixteen_concurrent_scrypt_sign_ins_hash_one_at_a_time(tmp_path):
    url = f"sqlite:///{tmp_path / 'shop.db'}"
    release_step(url)
    flask = os.path.join(os.path.dirname(sys.executable), "flask")
    subprocess.run(  # the production hash: scrypt:32768:8:1, the default
        [flask, "--app", "app", "users", "create", "--email", "o@example.com"]
        + ["--password", PASSWORD],
        cwd=ROOT,
        env={"PATH": os.environ.get("PATH", ""), "DATABASE_URL": url},
        check=True,
        capture_output=True,
    )
    node = LiveServer({"DATABASE_URL": url, "SHOP_RATELIMIT_ENABLED": "0"}, threads=8)
    try:
        (worker,) = subprocess.run(
            ["ps", "-o", "pid=", "--ppid", str(node.process.pid)], capture_output=True, text=True
        ).stdout.split()
        idle = peak_rss_kib(int(worker))

        def sign_in(_):
            request = urllib.request.Request(  # noqa: S310 - http://127.0.0.1 only
                node.url + "/auth/login",
                data=json.dumps({"email": "o@example.com", "password": PASSWORD}).encode(),
                headers={"Content-Type": "application/json"},
            )
            with urllib.request.urlopen(request, timeout=60) as answer:  # noqa: S310
                return answer.status

        with ThreadPoolExecutor(16) as pool:
            assert set(pool.map(sign_in, range(16))) == {200}
        grown_mib = (peak_rss_kib(int(worker)) - idle) / 1024
        # One hash at a time: ~35 MiB more at the peak. Eight at once grew it by ~260 MiB.
        assert grown_mib < 80, f"worker peak grew by {grown_mib:.0f} MiB"
    finally:
        node.stop()
