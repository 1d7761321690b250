"""Private dependencies for fault tests: a PostgreSQL cluster and a Redis of the test's own.

Never the shared ones: each is started on a free port of 127.0.0.1 as a child process of the
test, stopped by its PID and removed. ``pytest.skip`` says why where the binaries are missing.
"""

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from glob import glob
from pathlib import Path

import pytest

from tests.live import free_port

ROOT = Path(__file__).resolve().parent.parent


def _wait(predicate, seconds: float, what: str) -> None:
    """Poll ``predicate`` until it holds; fail naming ``what`` after ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)  # polling a bounded condition, not waiting for time to pass
    raise AssertionError(f"{what}: not within {seconds}s")


def _stop(process: subprocess.Popen, sig=signal.SIGTERM) -> None:
    """End one child process by its PID; kill it when it does not go within 20 s."""
    if process.poll() is None:
        process.send_signal(sig)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


class PrivatePostgres:
    """A throwaway PostgreSQL cluster (initdb into a temp dir), run as the postgres user.

    ``start()`` and ``stop()`` may be called again: the data stays until ``remove()``.
    """

    def __init__(self):
        found = sorted(glob("/usr/lib/postgresql/*/bin/initdb"))
        if not found:
            pytest.skip("private PostgreSQL: no /usr/lib/postgresql/*/bin/initdb on this machine")
        if os.geteuid() == 0:
            try:
                import pwd

                pwd.getpwnam("postgres")
            except KeyError:
                pytest.skip("private PostgreSQL: running as root and there is no postgres user")
            self.user = "postgres"
        else:
            self.user = None  # initdb runs as whoever we are
        self.bin = Path(found[-1]).parent
        self.port = free_port()
        self.dir = Path(tempfile.mkdtemp(prefix="shop-pg-"))
        self.data = self.dir / "data"
        if self.user:
            shutil.chown(self.dir, self.user, self.user)
        self.url = f"postgresql://postgres@127.0.0.1:{self.port}/postgres"
        self.process = None
        self._log = None
        subprocess.run(
            [str(self.bin / "initdb"), "-D", str(self.data), "-A", "trust", "-U", "postgres"]
            + ["--no-sync", "-E", "UTF8", "--locale", "C"],
            check=True,
            capture_output=True,
            user=self.user,
            cwd=self.dir,
        )

    def start(self) -> None:
        """Start the server (a child process) and wait until it accepts connections."""
        self._log = open(self.dir / "server.log", "ab")  # noqa: SIM115 - closed in stop()
        self.process = subprocess.Popen(
            [str(self.bin / "postgres"), "-D", str(self.data), "-p", str(self.port)]
            + ["-k", str(self.dir), "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off"],
            user=self.user,
            cwd=self.dir,
            stdout=subprocess.DEVNULL,
            stderr=self._log,
        )
        _wait(self.ready, 30, f"private PostgreSQL on port {self.port}")

    def ready(self) -> bool:
        """Whether the server accepts a connection now."""
        import psycopg

        if self.process.poll() is not None:
            raise AssertionError("private PostgreSQL exited: " + self.log()[-2000:])
        try:
            with psycopg.connect(self.url, connect_timeout=2):
                return True
        except psycopg.OperationalError:
            return False

    def processes(self) -> list[int]:
        """The PIDs of the server: the postmaster, then each process it started."""
        out = subprocess.run(
            ["ps", "-o", "pid=", "--ppid", str(self.process.pid)], capture_output=True, text=True
        )
        return [self.process.pid, *(int(pid) for pid in out.stdout.split())]

    def freeze(self) -> None:
        """SIGSTOP the whole server (the postmaster first, so it starts no other): its port
        still accepts connections and its kernel acknowledges what is sent; nothing answers.
        ``thaw`` it in a ``finally``."""
        self.frozen = self.processes()
        for pid in self.frozen:
            os.kill(pid, signal.SIGSTOP)

    def thaw(self) -> None:
        """SIGCONT every process ``freeze`` stopped."""
        for pid in reversed(getattr(self, "frozen", [])):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)
        self.frozen = []

    def stop(self) -> None:
        """Stop the server by its PID (SIGINT: PostgreSQL's fast shutdown)."""
        if self.process is not None:
            self.thaw()
            _stop(self.process, signal.SIGINT)
            self._log.close()
            self.process = None

    def restart(self) -> None:
        self.stop()
        self.start()

    def log(self) -> str:
        path = self.dir / "server.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def remove(self) -> None:
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


class PrivateRedis:
    """A throwaway redis-server on a free port, a child process of the test."""

    def __init__(self):
        binary = shutil.which("redis-server")
        if binary is None:
            pytest.skip("private Redis: redis-server is not installed")
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.dir = Path(tempfile.mkdtemp(prefix="shop-redis-"))
        self.process = subprocess.Popen(
            [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", ""]
            + ["--appendonly", "no", "--dir", str(self.dir)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        _wait(self.ready, 10, f"private Redis on port {self.port}")

    def ready(self) -> bool:
        import redis

        if self.process.poll() is not None:
            raise AssertionError("private Redis exited")
        try:
            return redis.Redis.from_url(self.url, socket_timeout=1).ping()
        except redis.exceptions.RedisError:
            return False

    def pause(self) -> None:
        """SIGSTOP: the port still accepts connections, nothing answers (a hung Redis)."""
        self.process.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        self.process.send_signal(signal.SIGCONT)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.resume()
        _stop(self.process)

    def remove(self) -> None:
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture
def private_postgres():
    """A private PostgreSQL cluster, initialised but not started."""
    cluster = PrivatePostgres()
    yield cluster
    cluster.remove()


@pytest.fixture
def private_redis():
    """A private, running redis-server."""
    server = PrivateRedis()
    yield server
    server.remove()


class Worker:
    """``flask jobs run`` as a child process on ``database_url`` with ``settings`` (env
    names); its output goes to a file (``output()``), so a chatty worker never blocks."""

    def __init__(self, database_url: str, folder: Path, **settings):
        env = {
            **os.environ,
            "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",  # the venv's flask
            "DATABASE_URL": database_url,
            **{name: str(value) for name, value in settings.items()},
        }
        self.log = Path(tempfile.mkstemp(prefix="worker-", suffix=".log", dir=folder)[1])
        with self.log.open("wb") as out:
            self.process = subprocess.Popen(
                ["flask", "--app", "app", "jobs", "run"],
                cwd=ROOT,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def kill(self) -> None:
        """kill -9, by its PID."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait()

    def stop(self) -> None:
        """SIGTERM by its PID (SIGKILL when it does not go within 20 s)."""
        _stop(self.process)
