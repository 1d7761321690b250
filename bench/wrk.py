"""Running wrk against a server, and reading its workers' CPU time and memory from /proc."""

import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from bench import seed
from bench.scenarios import Scenario

LUA = Path(__file__).resolve().parent / "requests.lua"
# One wrk thread drives thousands of requests a second and leaves the other cores to the
# server and the database, which share the machine with it.
WRK_THREADS = 1


@dataclass
class Result:
    """What wrk measured for one scenario."""

    rps: float = 0.0
    p50_ms: float | None = 0.0
    p99_ms: float | None = 0.0
    errors: int = 0
    s5xx: int = 0
    half_rps: float | None = None
    half_p99_ms: float | None = None
    half_5xx: int = 0
    ratio: float | None = None
    cpu_us: float = 0.0
    statements: str = "-"
    skipped: str | None = None
    note: str = ""  # what the row measured, when not requests (e.g. an import's seconds)
    checks: list = field(default_factory=list)


def ensure() -> None:
    """Install wrk from Debian's packages when it is missing."""
    if shutil.which("wrk"):
        return
    print("wrk is missing: installing it with apt-get", flush=True)
    sudo = [] if os.geteuid() == 0 else ["sudo"]
    lock = ["-o", "DPkg::Lock::Timeout=300"]
    subprocess.run([*sudo, "apt-get", "update", "-qq"], check=True)
    subprocess.run([*sudo, "apt-get", "install", "-y", "-qq", *lock, "wrk"], check=True)


def measure(args, server, scenario: Scenario, work: Path, rate=None, requests=None) -> Result:
    """One wrk run of a scenario: at full speed, or paced to about ``rate`` requests/s.

    Besides wrk's figures, the workers' CPU time per request: on a busy machine it moves
    much less than the rate does.
    """
    path = work / "requests.tsv"
    with open(path, "w") as out:
        for name, value in {"User-Agent": seed.USER_AGENT, **scenario.headers}.items():
            out.write(f"H\t{name}\t{value}\n")
        for method, target, body in requests or scenario.requests:
            out.write(f"R\t{method}\t{target}\t{body}\n")
    delay = 0
    if rate:
        delay = max(1, round(1000 * args.connections / rate))
    command = [
        "wrk",
        f"-t{WRK_THREADS}",
        f"-c{args.connections}",
        f"-d{args.duration}s",
        "--timeout",
        "5s",
        "-s",
        str(LUA),
        server.url,
        "--",
        str(path),
        str(delay),
        str(WRK_THREADS),
    ]
    cpu = cpu_seconds(server.process.pid)
    output = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    cpu = cpu_seconds(server.process.pid) - cpu
    line = next(x for x in output.splitlines() if x.startswith("BENCH_JSON "))
    data = json.loads(line.removeprefix("BENCH_JSON "))
    seconds = data["duration_us"] / 1e6
    return Result(
        rps=data["requests"] / seconds,
        p50_ms=data["p50_us"] / 1000,
        p99_ms=data["p99_us"] / 1000,
        errors=data["s4xx"] + data["s5xx"] + data["s3xx"] + data["socket_errors"]
        + data["timeouts"],
        s5xx=data["s5xx"],
        cpu_us=cpu / max(1, data["requests"]) * 1e6,
    )  # fmt: skip


def progress(name: str, result: Result) -> None:
    print(
        f"{name}: {result.rps:,.0f} req/s, p50 {result.p50_ms:.1f} ms,"
        f" p99 {result.p99_ms:.1f} ms, {result.errors} errors, {result.cpu_us:,.0f} us CPU/req",
        flush=True,
    )


def _workers(master_pid: int) -> list[tuple[Path, list]]:
    """The gunicorn master's workers: (/proc folder, stat fields from the state on)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # the process ended while we looked
        if int(fields[1]) == master_pid:
            found.append((stat.parent, fields))
    return found


def cpu_seconds(master_pid: int) -> float:
    """User and system CPU time the workers have used so far."""
    return sum(_cpu(fields) for _, fields in _workers(master_pid))


def process_cpu_seconds(pid: int) -> float:
    """User and system CPU time one process has used so far."""
    return _cpu(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split())


def _cpu(fields: list) -> float:
    """CPU seconds from a /proc stat line's fields, from the state on."""
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def peak_rss_mb(master_pid: int) -> float | None:
    """The largest peak resident set (VmHWM) among the gunicorn master's workers, in MB."""
    peaks = []
    for folder, _ in _workers(master_pid):
        try:
            status = (folder / "status").read_text()
        except OSError:
            continue
        match = re.search(r"^VmHWM:\s+(\d+) kB", status, re.MULTILINE)
        if match:
            peaks.append(int(match.group(1)) / 1024)
    return max(peaks) if peaks else None
