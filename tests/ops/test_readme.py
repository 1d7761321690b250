"""The curl walkthroughs of the README and docs/, run as written (twice, from a temporary
folder) against gunicorn started as the Procfile starts it; the rate limit under that
gunicorn; what gunicorn itself refuses, in our error shape."""

import json
import os
import re
import shutil
import socket
import subprocess
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import PASSWORD
from tests.live import ROOT, LiveServer

pytestmark = pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")


GUIDES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_TESTED = re.compile(r"<!-- tested: ([\w-]+)\b.*?-->\n```sh\n(.*?)```", re.S)


def guide_blocks() -> dict[str, str]:
    """Every shell block marked ``<!-- tested: name`` in the README and the guides."""
    blocks = {}
    for guide in GUIDES:
        for name, block in _TESTED.findall(guide.read_text()):
            assert name not in blocks, f"two tested blocks are named {name}"
            blocks[name] = block
    return blocks


def readme_block(name: str) -> str:
    """The shell block that follows ``<!-- tested: name`` in README.md or docs/."""
    blocks = guide_blocks()
    assert name in blocks, f"no guide has a tested block {name}"
    return blocks[name]


def git_status() -> str | None:
    """``git status --porcelain`` of the checkout, or None where git cannot tell."""
    git = shutil.which("git")
    if git is None:
        return None
    result = subprocess.run(
        [git, "-C", str(ROOT), "status", "--porcelain", "--untracked-files=all"],
        capture_output=True,
        text=True,
        check=False,
    )
    return result.stdout if result.returncode == 0 else None


@pytest.fixture
def live(make_app, database_url):
    """gunicorn on the test's database, with an owner account, cookies over plain http."""
    app = make_app()
    app.test_cli_runner().invoke(
        args=["users", "create", "--email", "you@example.com", "--password", PASSWORD]
    )
    server = LiveServer(
        {"DATABASE_URL": database_url, "SHOP_COOKIE_SECURE": "0", "SHOP_RATELIMIT_ENABLED": "1"}
    )
    server.database_url = database_url
    yield server
    server.stop()


def run_walkthrough(live, tmp_path: Path, *names: str, env=None) -> list[list[str]]:
    """Run guide blocks in one bash against the live server, twice, as a reader would.

    From the checkout (the blocks call .venv/bin/flask), with a temporary folder for
    ``mktemp``; both runs must succeed and leave ``git status`` as it was. Answers the
    non-blank output lines of each run.
    """
    script = "set -euo pipefail\n" + "\n".join(readme_block(n) for n in names)
    environ = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(tmp_path),
        "TMPDIR": str(tmp_path),
        "BASE": live.url,
        "DATABASE_URL": live.database_url,
        **(env or {}),
    }
    before = git_status()
    runs = []
    for _ in range(2):
        result = subprocess.run(
            ["bash", "-c", script],
            input=PASSWORD + "\n",
            cwd=ROOT,
            env=environ,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert result.returncode == 0, result.stdout + result.stderr
        runs.append([line for line in result.stdout.splitlines() if line.strip()])
    assert git_status() == before, "a walkthrough left files in the checkout"
    return runs


@pytest.mark.live
def test_sign_in_walkthrough(live, tmp_path):
    for lines in run_walkthrough(live, tmp_path, "walkthrough-auth"):
        me = json.loads(lines[1])
        assert me["email"] == "you@example.com" and me["role"] == "owner"
        assert json.loads(lines[2])["total"] == 1
        assert lines[3] == "204"
        assert "Authentication required" in json.loads(lines[4])["message"]
        assert PASSWORD not in "\n".join(lines)


@pytest.mark.live
def test_first_key_walkthrough(live, tmp_path):
    first, second = run_walkthrough(live, tmp_path, "readme-first-key")
    for lines, total in ((first, 1), (second, 2)):
        created, page = json.loads(lines[0]), json.loads(lines[1])
        assert created["name"] == "Teapot" and created["price_cents"] == 2500
        assert page["total"] == total and created["id"] in [p["id"] for p in page["items"]]
        assert "eck_" not in "\n".join(lines)


@pytest.mark.live
def test_sixth_login_in_a_minute_gets_429_under_gunicorn(live):
    statuses, left = [], []
    for _ in range(6):
        request = urllib.request.Request(
            live.url + "/auth/login",
            data=json.dumps({"email": "you@example.com", "password": "wrong"}).encode(),
            headers={"Content-Type": "application/json"},
        )
        try:
            urllib.request.urlopen(request)  # noqa: S310 - our own server on 127.0.0.1
        except urllib.error.HTTPError as error:
            statuses.append(error.code)
            body = json.loads(error.read())
            assert set(body) == {"message"}
            assert error.headers["RateLimit-Policy"] == '"sign-in";q=5;w=60'
            field = re.fullmatch(r'"sign-in";r=(\d+);t=(\d+)', error.headers["RateLimit"])
            remaining, wait = map(int, field.groups())
            left.append(remaining)
            if error.code == 429:
                assert int(error.headers["Retry-After"]) >= 1
                assert abs(int(error.headers["Retry-After"]) - wait) <= 1
    assert statuses == [401] * 5 + [429]
    assert left == [4, 3, 2, 1, 0, 0]


@pytest.mark.live
def test_api_key_walkthrough(live, tmp_path):
    for lines in run_walkthrough(live, tmp_path, "walkthrough-auth", "walkthrough-keys"):
        registry = json.loads(lines[5])
        assert registry["items"] == [] and registry["total"] == 0
        assert "read:order" in json.loads(lines[6])["message"]
        active = json.loads(lines[7])
        assert [k["label"] for k in active["items"]] == ["ci deploy"]
        assert "secret" not in lines[7]
        assert lines[8] == "204"
        assert json.loads(lines[9]) == {"message": "API key revoked."}


def test_every_tested_block_of_the_guides_has_its_test():
    """A walkthrough added to a guide gets a test: its name must be one of these."""
    assert set(guide_blocks()) == {
        "readme-first-key",
        "walkthrough-auth",
        "walkthrough-keys",
        "keys-controls",
        "content-sync",
        "product-image",
        "catalogue-import",
        "orders-setup",
        "orders-walkthrough",
        "orders-sync",
        "pricing-vat",
        "pricing-us",
        "operations-backup",
        "variants-walkthrough",
        "cart-walkthrough",
    }


@pytest.mark.live
def test_api_key_controls_walkthrough(live, tmp_path):
    for lines in run_walkthrough(live, tmp_path, "walkthrough-auth", "keys-controls"):
        assert lines[5:8] == ["200", "200", "200"]  # the old key, the new one, the old again
        successor, expires_at, requests = lines[8].split()
        assert len(successor) == 24 and expires_at.endswith("Z")
        assert requests == "2"  # the old key's two requests, counted without a write


@pytest.mark.parametrize(
    ("request_head", "status"),
    [
        (f"GET /products?q={'x' * 5000} HTTP/1.1\r\nHost: shop\r\n", 414),
        (f"GET /products HTTP/1.1\r\nHost: shop\r\nX-Note: {'x' * 9000}\r\n", 431),
        ("GET /products?q=a b HTTP/1.1\r\nHost: shop\r\n", 400),
    ],
    ids=["url too long", "header too large", "malformed request line"],
)
@pytest.mark.live
def test_what_gunicorn_refuses_before_the_app_is_still_a_json_message(live, request_head, status):
    with socket.create_connection(("127.0.0.1", live.port), timeout=10) as conn:
        conn.sendall((request_head + "\r\n").encode())
        answer = b""
        while chunk := conn.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    assert lines[0].startswith(f"HTTP/1.1 {status} ")
    assert "Content-Type: application/json" in lines
    message = json.loads(body)["message"]
    assert set(json.loads(body)) == {"message"} and message
