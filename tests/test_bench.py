"""The benchmark's commands start (the benchmark itself is no test: docs/performance.md)."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_bench_commands_start():
    """``python -m bench.run --help`` imports every part of the table; the others load too."""
    answer = subprocess.run(
        [sys.executable, "-m", "bench.run", "--help"],
        cwd=ROOT, capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    assert "--quick" in answer.stdout and "--only" in answer.stdout
    subprocess.run(
        [sys.executable, "-c", "import bench.ab, bench.lists, bench.search, bench.webhook_cost"],
        cwd=ROOT, capture_output=True, timeout=60, check=True,
    )  # fmt: skip
