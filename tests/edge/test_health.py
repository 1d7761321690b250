"""Health and metrics: /healthz, /readyz and /metrics (docs/operations.md)."""

import os
import re
import secrets
import shutil
import subprocess
import threading
import time
import urllib.request

import pytest

from shop import config, db, mail
from tests.live import LiveServer, release_step
from tests.mail_helpers import deliver

REDIS_URL = os.environ.get("SHOP_TEST_REDIS_URL")
CLOSED_REDIS = "redis://127.0.0.1:1/0"  # nothing listens on port 1: refused at once
CLOSED_DATABASE = "postgresql://postgres@127.0.0.1:1/none"
TOKEN = "metrics-token-" + "x" * 16


def sample(text: str, name: str, **labels) -> float:
    """The sum of the samples of ``name`` with ``labels`` in Prometheus' text format."""
    total = 0.0
    for line in text.splitlines():
        if line.startswith("#") or not line.startswith(name):
            continue
        head, _, value = line.rpartition(" ")
        found = dict(re.findall(r'(\w+)="([^"]*)"', head))
        if head.split("{")[0] == name and all(found.get(k) == v for k, v in labels.items()):
            total += float(value)
    return total


def scrape(client) -> str:
    response = client.get("/metrics")
    assert response.status_code == 200, response.data
    assert response.mimetype == "text/plain"
    return response.text


# -- /healthz and /readyz --------------------------------------------------------------------


def test_healthz_answers_200_even_while_the_schema_is_not_ready(make_app):
    client = make_app(prepare=False).test_client()
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json == {"status": "ok"}
    assert response.headers["Cache-Control"] == "no-store"


def test_healthz_answers_200_with_the_database_down(make_app):
    app = make_app(prepare=False, DATABASE_URL=CLOSED_DATABASE, REDIS_URL=CLOSED_REDIS)
    assert app.test_client().get("/healthz").status_code == 200


def test_readyz_answers_200_and_the_outbox_oldest_pending_age(app, client, clock):
    with app.app_context(), db.transaction():
        mail.queue("someone@example.com", "Hello", "Hello there.")
    clock.advance(90)
    response = client.get("/readyz")
    assert response.status_code == 200
    body = response.json
    assert body["status"] == "ready"
    assert body["checks"] == {"database": "ok", "schema": "ok", "redis": "not configured"}
    assert body["outbox"]["mail"] == {"pending": 1, "oldest_pending_age_seconds": 90.0}
    assert body["outbox"]["webhooks"] == {"pending": 0, "oldest_pending_age_seconds": None}
    assert "someone@example.com" not in response.text


def test_readyz_answers_503_naming_the_schema_when_it_is_not_current(make_app):
    client = make_app(prepare=False).test_client()
    response = client.get("/readyz")
    assert response.status_code == 503
    assert int(response.headers["Retry-After"]) >= 1
    assert response.json["message"].startswith("Not ready: schema at version 0, this release")


REDIS_FALLBACK = "unreachable; rate limits count in process memory"


def test_readyz_reports_a_redis_that_cannot_be_reached_and_stays_ready(make_app):
    # The limits fail open (they count in memory), so every request is still served: a
    # balancer following /readyz must not take the node out (issue 35, finding 10).
    response = make_app(REDIS_URL=CLOSED_REDIS).test_client().get("/readyz")
    assert response.status_code == 200, response.json
    assert response.json["checks"] == {"database": "ok", "schema": "ok", "redis": REDIS_FALLBACK}


def test_readyz_answers_503_naming_redis_when_the_limits_would_fail_closed(make_app):
    app = make_app(REDIS_URL=CLOSED_REDIS, RATELIMIT_IN_MEMORY_FALLBACK_ENABLED=False)
    response = app.test_client().get("/readyz")
    assert response.status_code == 503
    assert response.headers["Retry-After"] == "5"
    assert response.json == {"message": "Not ready: redis cannot be reached."}


@pytest.mark.live
@pytest.mark.parametrize("fault", ["stopped", "hung"])
def test_readyz_with_its_redis_stopped_or_hung_stays_ready_and_says_so(
    make_app, private_redis, fault
):
    from tests.edge.test_outages import _limited_login_app, _sign_in

    app = _limited_login_app(make_app, private_redis.url)
    client = app.test_client()
    assert client.get("/readyz").json["checks"]["redis"] == "ok"
    if fault == "stopped":
        private_redis.stop()
    else:
        private_redis.pause()
    try:
        started = time.monotonic()
        response = client.get("/readyz")
        seconds = time.monotonic() - started
        assert response.status_code == 200, response.json
        assert response.json["checks"]["redis"] == REDIS_FALLBACK
        assert seconds < 2  # one PING within SHOP_REDIS_TIMEOUT (0.5 s), connect and reply
        assert _sign_in(client)[0].status_code == 200  # and the node does serve
    finally:
        private_redis.resume()


@pytest.mark.skipif(not REDIS_URL, reason="needs SHOP_TEST_REDIS_URL")
def test_readyz_answers_200_when_the_configured_redis_answers(make_app):
    response = make_app(REDIS_URL=REDIS_URL).test_client().get("/readyz")
    assert response.status_code == 200
    assert response.json["checks"]["redis"] == "ok"


def test_readyz_answers_503_naming_the_database_when_it_cannot_be_reached(make_app):
    app = make_app(prepare=False, DATABASE_URL=CLOSED_DATABASE)
    response = app.test_client().get("/readyz")
    assert response.status_code == 503
    assert response.json["message"].startswith("Not ready: database cannot be reached")
    assert "schema unknown" in response.json["message"]


def test_health_endpoints_are_not_rate_limited(make_app):
    client = make_app(
        RATELIMIT_ENABLED=True, RATELIMIT_KEY_PREFIX=secrets.token_hex(6)
    ).test_client()
    statuses = {client.get(path).status_code for _ in range(30) for path in ("/healthz", "/readyz")}
    assert statuses == {200}


# -- /metrics: who may scrape ----------------------------------------------------------------


def test_metrics_answer_404_when_off(client):
    assert client.get("/metrics").status_code == 404


def test_metrics_answer_403_to_an_address_not_allowed(make_app):
    client = make_app(METRICS_ALLOW="10.0.0.0/8").test_client()
    response = client.get("/metrics")
    assert response.status_code == 403
    assert "SHOP_METRICS" in response.json["message"]


def test_metrics_want_the_token_when_one_is_set(make_app):
    client = make_app(METRICS_TOKEN=TOKEN).test_client()
    response = client.get("/metrics")
    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"] == 'Bearer realm="metrics"'
    wrong = client.get("/metrics", headers={"Authorization": "Bearer " + TOKEN + "x"})
    assert wrong.status_code == 401
    right = client.get("/metrics", headers={"Authorization": "Bearer " + TOKEN})
    assert right.status_code == 200
    assert "shop_http_requests_total" in right.text


# -- /metrics: what it says ------------------------------------------------------------------


def test_metrics_count_requests_by_route_template_and_status(make_app):
    client = make_app(METRICS_ALLOW="127.0.0.1").test_client()
    route = "/products/<id:product_id>"
    labels = {"route": route, "method": "GET", "status": "404"}
    before = sample(scrape(client), "shop_http_requests_total", **labels)
    missing_id = db.new_id()
    for _ in range(3):
        client.get(f"/products/{missing_id}")
    text = scrape(client)
    assert sample(text, "shop_http_requests_total", **labels) == before + 3
    assert missing_id not in text  # the template, never the raw path
    assert sample(text, "shop_http_request_duration_seconds_count", route=route) >= 3
    for name in (
        "shop_http_request_duration_seconds_bucket",
        "shop_rate_limit_refusals_total",
        "shop_dependency_unavailable_total",
    ):
        assert f"# TYPE {name.removesuffix('_bucket').removesuffix('_total')}" in text
    for queue in ("webhooks", "mail"):
        assert f'shop_outbox_pending{{queue="{queue}"}} 0.0' in text
        assert f'shop_outbox_oldest_pending_age_seconds{{queue="{queue}"}} 0.0' in text
    for outcome in ("success", "http_error", "error"):
        assert f'shop_webhook_attempts{{outcome="{outcome}"}}' in text
    assert 'shop_mail_messages{state="sent"}' in text


def test_metrics_count_rate_limit_refusals(make_app, make_admin):
    app = make_app(
        RATELIMIT_ENABLED=True, RATELIMIT_KEY_PREFIX=secrets.token_hex(6), METRICS_ALLOW="127.0.0.1"
    )
    client = app.test_client()
    before = sample(scrape(client), "shop_rate_limit_refusals_total")
    statuses = [
        client.post("/auth/login", json={"email": "x@example.com", "password": "bad"}).status_code
        for _ in range(8)
    ]
    refused = statuses.count(429)
    assert refused >= 1
    assert sample(scrape(client), "shop_rate_limit_refusals_total") == before + refused


def test_metrics_count_dependency_outages(make_app):
    app = make_app(
        prepare=False,
        DATABASE_URL=CLOSED_DATABASE,
        METRICS_ALLOW="127.0.0.1",
    )
    client = app.test_client()
    before = sample(scrape(client), "shop_dependency_unavailable_total", dependency="database")
    assert client.get("/products").status_code == 503
    text = scrape(client)
    assert sample(text, "shop_dependency_unavailable_total", dependency="database") == before + 1
    assert "shop_outbox_pending" not in text.replace("# ", "\n")  # unknown, not 0


def test_metrics_hold_no_email_address_or_key_id_after_a_sign_in(app, owner_client, make_key):
    app.config["METRICS_ALLOW"] = "127.0.0.1"
    key = make_key("read:product")
    assert key.get("/products").status_code == 200
    assert owner_client.get("/auth/me").status_code == 200
    text = scrape(app.test_client())
    assert "@" not in text
    assert owner_client.email not in text
    assert key.key["id"] not in text
    assert key.secret not in text
    assert owner_client.user_id not in text


# -- under gunicorn ----------------------------------------------------------------------------


@pytest.mark.live
@pytest.mark.skipif(not REDIS_URL, reason="two workers need SHOP_TEST_REDIS_URL")
def test_a_scrape_sums_the_request_counts_of_both_gunicorn_workers(database_url, tmp_path):
    release_step(database_url)
    metrics_dir = tmp_path / "metrics"
    metrics_dir.mkdir()
    server = LiveServer(
        {
            "DATABASE_URL": database_url,
            "REDIS_URL": REDIS_URL,
            "SHOP_RATELIMIT_KEY_PREFIX": secrets.token_hex(6),
            "SHOP_METRICS": "127.0.0.1",
            "PROMETHEUS_MULTIPROC_DIR": str(metrics_dir),
        },
        workers=2,
        threads=2,
    )
    try:
        sent = 0

        def get(path: str) -> None:
            with urllib.request.urlopen(server.url + path, timeout=10) as response:  # noqa: S310
                assert response.status == 200

        # Concurrent requests until both workers have counted some (bounded).
        for _ in range(50):
            threads = [threading.Thread(target=get, args=("/healthz",)) for _ in range(8)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            sent += len(threads)
            if len(list(metrics_dir.glob("counter_*.db"))) >= 2:
                break
        assert len(list(metrics_dir.glob("counter_*.db"))) >= 2, "one worker served all"
        with urllib.request.urlopen(server.url + "/metrics", timeout=10) as response:  # noqa: S310
            text = response.read().decode()
        assert sample(text, "shop_http_requests_total", route="/healthz", status="200") == sent
    finally:
        server.stop()


def test_metrics_read_the_mail_outbox_from_the_database(make_app):
    app = make_app(METRICS_ALLOW="127.0.0.1")
    with app.app_context(), db.transaction():
        mail.queue("someone@example.com", "Hello", "Hello there.")
    text = scrape(app.test_client())
    assert sample(text, "shop_outbox_pending", queue="mail") == 1
    assert deliver(app) == 1
    text = scrape(app.test_client())
    assert sample(text, "shop_outbox_pending", queue="mail") == 0
    assert sample(text, "shop_mail_messages", state="sent") == 1
    assert sample(text, "shop_mail_messages", state="failed") == 0
    assert "someone@example.com" not in text


def test_metrics_give_each_endpoints_backlog_so_a_dead_receiver_stands_out(
    make_app, make_admin, clock
):
    from shop.http import health
    from tests.conftest import login
    from tests.live import free_port
    from tests.orders_helpers import add_product
    from tests.webhook_helpers import Receiver, create_hook, work

    app = make_app(WEBHOOKS_ALLOW_PRIVATE=True, WEBHOOKS_ALLOW_HTTP=True, METRICS_ALLOW="127.0.0.1")
    make_admin("owner", email="owner@example.com")
    owner = app.test_client()
    login(owner, "owner@example.com")
    healthy = Receiver()
    try:
        dead_url = f"http://127.0.0.1:{free_port()}/hook"  # nothing listens: refused
        alive = create_hook(owner, healthy.url, "product.created")["id"]
        dead = create_hook(owner, dead_url, "product.created")["id"]
        add_product(app, name="Tea")
        clock.advance(120)
        # No worker yet: every endpoint's delivery waits, as they all do when it is down.
        text = scrape(app.test_client())
        for hook in (alive, dead):
            assert sample(text, "shop_webhook_pending", webhook=hook) == 1
            assert sample(text, "shop_webhook_oldest_pending_age_seconds", webhook=hook) == 120
        work(app)  # the worker runs: the healthy receiver has its event, the dead one does not
        text = scrape(app.test_client())
        assert sample(text, "shop_webhook_pending", webhook=alive) == 0
        assert f'shop_webhook_oldest_pending_age_seconds{{webhook="{alive}"}} 0.0' in text
        assert sample(text, "shop_webhook_pending", webhook=dead) == 1  # waits for its retry
        assert sample(text, "shop_webhook_oldest_pending_age_seconds", webhook=dead) == 120
        assert sample(text, "shop_outbox_oldest_pending_age_seconds", queue="webhooks") == 120
        assert healthy.url not in text and dead_url not in text and "127.0.0.1" not in text
        with app.app_context():  # the series are bounded: the longest waiting come first
            assert [row["id"] for row in health.endpoint_backlog(limit=1)] == [dead]
    finally:
        healthy.stop()


_ALERT_RULES = re.compile(r"<!-- checked: operations-alerts\b[^\n]*-->\n```yaml\n(.*?)```", re.S)
_WORKER_SUMMARY = "The worker sends nothing: is `flask jobs run` up on some node?"


def _series(ages: dict, pending: dict) -> list[dict]:
    """promtool's input series: per endpoint, its oldest age and its pending count."""
    rows = [
        {"series": f'shop_webhook_oldest_pending_age_seconds{{webhook="{hook}"}}', "values": v}
        for hook, v in ages.items()
    ]
    return rows + [
        {"series": f'shop_webhook_pending{{webhook="{hook}"}}', "values": v}
        for hook, v in pending.items()
    ]


@pytest.mark.skipif(shutil.which("promtool") is None, reason="promtool is not installed")
def test_the_documented_alert_rules_tell_a_dead_worker_from_a_dead_receiver(tmp_path):
    import json

    from tests.live import ROOT

    rules = _ALERT_RULES.search((ROOT / "docs" / "operations.md").read_text()).group(1)
    (tmp_path / "rules.yml").write_text(rules)
    growing, idle = "0+60x20", "0x20"  # an age growing a minute a minute, or none waiting
    cases = [
        {  # the worker is down: every endpoint that receives events falls behind
            "name": "worker down",
            "interval": "1m",
            "input_series": _series({"a": growing, "b": growing, "quiet": idle},
                                    {"a": "1x20", "b": "3x20", "quiet": idle}),
            "alert_rule_test": [
                {"eval_time": "15m", "alertname": "ShopWorkerNotSending", "exp_alerts": [
                    {"exp_labels": {}, "exp_annotations": {"summary": _WORKER_SUMMARY}}]},
                {"eval_time": "15m", "alertname": "ShopWebhookReceiverFailing", "exp_alerts": []},
            ],
        },
        {  # one receiver is down: the other endpoints' deliveries are sent within seconds
            "name": "one receiver down",
            "interval": "1m",
            "input_series": _series({"a": growing, "b": idle, "c": idle},
                                    {"a": "1x20", "b": "0 1 0 0 1 0x15", "c": idle}),
            "alert_rule_test": [
                {"eval_time": "15m", "alertname": "ShopWorkerNotSending", "exp_alerts": []},
                {"eval_time": "15m", "alertname": "ShopWebhookReceiverFailing", "exp_alerts": [{
                    "exp_labels": {"webhook": "a"},
                    "exp_annotations": {
                        "summary": "Webhook a is failing: see `flask webhooks status`."
                    },
                }]},
            ],
        },
    ]  # fmt: skip
    tests = {"rule_files": ["rules.yml"], "evaluation_interval": "1m", "tests": cases}
    (tmp_path / "tests.yml").write_text(json.dumps(tests))  # JSON is YAML
    result = subprocess.run(
        ["promtool", "test", "rules", "tests.yml"], cwd=tmp_path, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize(
    ("name", "value", "says"),
    [
        ("SHOP_METRICS", "10.0.0.0/8,nowhere", "SHOP_METRICS must list IP addresses"),
        ("SHOP_METRICS_TOKEN", "short", "SHOP_METRICS_TOKEN must be at least 16"),
    ],
)
def test_a_bad_metrics_setting_stops_the_start_naming_it(name, value, says):
    with pytest.raises(config.ConfigError, match=says):
        config.from_environment({name: value})


def test_metrics_settings_are_read_from_the_environment():
    settings = config.from_environment(
        {"SHOP_METRICS": " 10.0.0.1/8 , ::1 ", "SHOP_METRICS_TOKEN": TOKEN}
    )
    assert settings["METRICS_ALLOW"] == "10.0.0.0/8 ::1/128"
    assert settings["METRICS_TOKEN"] == TOKEN
    assert config.from_environment({})["METRICS_ALLOW"] is None


@pytest.mark.live
def test_gunicorn_makes_its_metrics_directory_and_removes_it_at_exit(database_url, tmp_path):
    release_step(database_url)
    env = {"DATABASE_URL": database_url, "SHOP_METRICS": "127.0.0.1", "TMPDIR": str(tmp_path)}
    server = LiveServer(env, workers=1, threads=2)
    try:
        made = list(tmp_path.glob("shop-metrics-*"))
        assert len(made) == 1
        with urllib.request.urlopen(server.url + "/metrics", timeout=10) as response:  # noqa: S310
            text = response.read().decode()
        assert sample(text, "shop_http_requests_total", route="/openapi.json", status="200") >= 1
        assert list(made[0].glob("counter_*.db"))
    finally:
        server.stop()
    assert not made[0].exists()
