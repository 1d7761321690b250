"""Running wrk against a server, and reading its workers' CPU time and memory from /proc."""

import json
import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from bench import seed
from bench.scenarios import Scenario

LUA = Path(__file__).resolve().parent / "requests.lua"
# One wrk thread drives thousands of requests a second and leaves the other cores to the
# server and the database, which share the machine with it.
WRK_THREADS = 1
# wrk holds its first requests this many seconds (bench/requests.lua): long enough to see how
# its connections were spread, and stop it before it writes anything when they are uneven.
HOLD = 0.25
# How long wrk is started again and again until its connections are spread (_start_balanced):
# a worker still booting takes none.
START_WITHIN = 20.0


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
    jobs_cpu_us: float | None = None  # the jobs worker's CPU per request (bench.ab --jobs)
    ratio: float | None = None
    cpu_us: float = 0.0
    statements: str = "-"
    skipped: str | None = None
    note: str = ""  # what the row measured, when not requests (e.g. an import's seconds)
    checks: list = field(default_factory=list)
    split: list = field(default_factory=list)  # connections per worker, half-way through
    starts: int = 1  # wrk starts until the connections were spread (``_start_balanced``)
    balanced: bool = True  # every worker held its share of the connections (``is_balanced``)


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
        str(round(HOLD * 1000)),
        str(max(1, args.connections // WRK_THREADS)),
    ]
    run, cpu, balanced, starts = _start_balanced(command, server, args.workers, args.connections)
    split = _split_midway(run, args.duration, server)
    output, _ = run.communicate()
    if run.returncode:
        raise subprocess.CalledProcessError(run.returncode, command, output)
    cpu = cpu_seconds(server.process.pid) - cpu
    line = next(x for x in output.splitlines() if x.startswith("BENCH_JSON "))
    data = json.loads(line.removeprefix("BENCH_JSON "))
    seconds = data["duration_us"] / 1e6 - HOLD  # the held start sent nothing
    return Result(
        rps=data["requests"] / seconds,
        p50_ms=data["p50_us"] / 1000,
        p99_ms=data["p99_us"] / 1000,
        errors=data["s4xx"] + data["s5xx"] + data["s3xx"] + data["socket_errors"]
        + data["timeouts"],
        s5xx=data["s5xx"],
        cpu_us=cpu / max(1, data["requests"]) * 1e6,
        split=split,
        starts=starts,
        balanced=balanced and is_balanced(split, args.workers, args.connections),
    )  # fmt: skip


def _start_balanced(command: list, server, workers: int, connections: int):
    """wrk started until its connections are spread over every worker; answer the running
    wrk, the workers' CPU seconds at its start, whether the spread is balanced and the
    number of starts it took.

    wrk opens all its keep-alive connections at once and each stays with the worker that
    accepted it. The workers race to accept on one shared socket, and on a busy 2-core
    machine the worker that is already running often takes them all: the row then measures
    one worker (docs/performance.md, "The benchmark"). An uneven start is stopped at once
    and tried again, before its held first requests leave (``HOLD``); after ``START_WITHIN``
    seconds a try runs whatever its spread, and is flagged.
    """
    deadline = time.monotonic() + START_WITHIN
    attempt = 0
    while True:
        attempt += 1
        cpu = cpu_seconds(server.process.pid)
        run = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
        counts = _accepted(run, server, connections)
        balanced = is_balanced(counts, workers, connections)
        if balanced or time.monotonic() > deadline or run.poll() is not None:
            return run, cpu, balanced, attempt
        run.kill()
        run.communicate()


def _accepted(run: subprocess.Popen, server, connections: int) -> list[int]:
    """The workers' connections once wrk's are all accepted, or when its first requests are
    about to leave (half the hold: a killed wrk then sent nothing)."""
    deadline = time.monotonic() + HOLD / 2
    counts = connections_per_worker(server.process.pid, server.port)
    while sum(counts) < connections and time.monotonic() < deadline:
        try:
            run.wait(timeout=0.005)  # wrk ended (an error): its output tells
            return counts
        except subprocess.TimeoutExpired:
            counts = connections_per_worker(server.process.pid, server.port)
    return counts


def is_balanced(counts: list, workers: int, connections: int) -> bool:
    """Whether every worker holds at least half its fair share of the connections."""
    if workers <= 1 or connections < workers:
        return True
    fair = connections // workers
    return len(counts) == workers and min(counts) >= max(1, fair // 2)


def _split_midway(run: subprocess.Popen, duration: int, server) -> list[int]:
    """The workers' established connections half-way through a wrk run (``split``)."""
    try:
        run.wait(timeout=duration / 2)  # wrk ended early (an error): nothing to count
        return []
    except subprocess.TimeoutExpired:
        return connections_per_worker(server.process.pid, server.port)


def connections_per_worker(master_pid: int, port: int) -> list[int]:
    """How many established connections to ``port`` each worker holds, most first.

    Keep-alive connections stay with the worker that accepted them, and the workers share
    one listening socket: which worker takes each connection is a race. A worker holding
    none serves nothing for the whole run, so the row measures fewer workers than it says.
    """
    sockets = _established_sockets(port)
    counts = []
    for folder, _ in worker_processes(master_pid):
        try:
            links = [os.readlink(fd) for fd in (folder / "fd").iterdir()]
        except OSError:
            continue  # the worker ended while we looked
        counts.append(sum(1 for link in links if link in sockets))
    return sorted(counts, reverse=True)


def _established_sockets(port: int) -> set[str]:
    """The ``socket:[inode]`` names of established TCP connections whose local port is
    ``port`` (the server's side of each client connection), from /proc/net/tcp."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            local_port = int(fields[1].rsplit(":", 1)[1], 16)
            if local_port == port and fields[3] == "01":  # 01: ESTABLISHED
                found.add(f"socket:[{fields[9]}]")
    return found


def progress(name: str, result: Result) -> None:
    print(
        f"{name}: {result.rps:,.0f} req/s, p50 {result.p50_ms:.1f} ms,"
        f" p99 {result.p99_ms:.1f} ms, {result.errors} errors, {result.cpu_us:,.0f} us CPU/req"
        f", connections per worker {describe_split(result)}"
        + (f" (wrk started {result.starts} times)" if result.starts > 1 else ""),
        flush=True,
    )


def describe_split(result: Result) -> str:
    """Connections per worker, e.g. "8/8"; with "UNEVEN" when the row measured fewer
    workers than it says."""
    text = "/".join(map(str, result.split)) or "-"
    return text if result.balanced else f"{text} UNEVEN"


def worker_processes(master_pid: int) -> list[tuple[Path, list]]:
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
    return sum(_cpu(fields) for _, fields in worker_processes(master_pid))


def process_cpu_seconds(pid: int) -> float:
    """User and system CPU time one process has used so far."""
    return _cpu(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split())


def _cpu(fields: list) -> float:
    """CPU seconds from a /proc stat line's fields, from the state on."""
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def peak_rss_mb(master_pid: int) -> float | None:
    """The largest peak resident set (VmHWM) among the gunicorn master's workers, in MB."""
    peaks = []
    for folder, _ in worker_processes(master_pid):
        try:
            status = (folder / "status").read_text()
        except OSError:
            continue
        match = re.search(r"^VmHWM:\s+(\d+) kB", status, re.MULTILINE)
        if match:
            peaks.append(int(match.group(1)) / 1024)
    return max(peaks) if peaks else None
