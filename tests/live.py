"""A live gunicorn of the app for tests that need real HTTP (races, several nodes, a browser).

``start(env)`` runs gunicorn with the Procfile's settings on a free port of 127.0.0.1 and
waits until it answers; ``stop()`` ends it. The server reads only the environment it is given
(plus PATH), so the test decides the database, Redis and limits.
"""

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class LiveServer:
    """One gunicorn process tree serving the app.

    ``app`` names another WSGI app (the benchmark's baseline), answering on ``ready_path``
    once up; ``log`` is an open file for gunicorn's stderr and stdout (its error and access
    logs), for runs long enough to fill a pipe nobody reads; ``root`` is the checkout it
    serves (another revision's, for ``bench/ab.py``).
    """

    def __init__(
        self,
        env: dict,
        workers: int = 1,
        threads: int = 8,
        app: str = "app:app",
        log=None,
        ready_path: str = "/openapi.json",
        root: Path = ROOT,
    ):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        full_env = {
            "PATH": os.environ.get("PATH", ""),
            "HOME": os.environ.get("HOME", str(ROOT)),
            "PORT": str(self.port),
            "HOST": "127.0.0.1",
            "WEB_CONCURRENCY": str(workers),
            "SHOP_THREADS": str(threads),
            "SHOP_PASSWORD_HASH": "scrypt:1024:8:1",
            **env,
        }
        gunicorn = Path(sys.executable).with_name("gunicorn")
        self.process = subprocess.Popen(
            [str(gunicorn), "--config", "gunicorn.conf.py", app],
            cwd=root,
            env=full_env,
            stdout=log or subprocess.DEVNULL,  # the access log, with the error log
            stderr=log or subprocess.PIPE,
        )
        self._wait_ready(ready_path)

    def _wait_ready(self, path: str, seconds: float = 120.0) -> None:
        """Poll until gunicorn answers on ``path``; fail at once when it exits. The bound is
        for a server that never answers: on a loaded VM (two test workers, other jobs) an app
        import alone was seen taking 30 s, so 20 s failed healthy starts."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                stderr = self.process.stderr
                raise RuntimeError(
                    "gunicorn exited: "
                    + (stderr.read().decode(errors="replace") if stderr else "see its log")
                )
            try:
                with urllib.request.urlopen(self.url + path, timeout=1):  # noqa: S310
                    return
            except OSError:
                time.sleep(0.05)  # polling for readiness, not waiting for time to pass
        self.stop()
        raise RuntimeError(f"gunicorn did not answer on {self.url} within {seconds}s")

    def stop(self) -> None:
        """End the server and its workers."""
        end(self.process)
        if self.process.stderr:
            self.process.stderr.close()


def end(process: subprocess.Popen, timeout: float = 10) -> None:
    """Stop a process we started: SIGTERM, then SIGKILL if it is still there after
    ``timeout`` seconds."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def release_step(url: str) -> None:
    """The Procfile's release step, `flask db upgrade`, against the database at ``url``."""
    flask = Path(sys.executable).with_name("flask")
    subprocess.run(
        [str(flask), "--app", "app", "db", "upgrade"],
        cwd=ROOT,
        env={"PATH": os.environ.get("PATH", ""), "DATABASE_URL": url},
        check=True,
        capture_output=True,
        timeout=60,
    )
