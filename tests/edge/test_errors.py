"""Every error is exactly {"message": "..."}: unknown paths, wrong methods, bad JSON and
fields, oversized bodies, rate limits and crashes."""

import logging

import pytest

from tests.conftest import PASSWORD, REDIS_URL


def assert_error(response, status):
    assert response.status_code == status, response.get_data(as_text=True)
    assert response.is_json
    assert set(response.json) == {"message"}
    assert isinstance(response.json["message"], str) and response.json["message"]


def test_unknown_path_is_404(client):
    response = client.get("/no-such-thing")
    assert_error(response, 404)
    assert "/no-such-thing" in response.json["message"]


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("patch", "/users/not-an-id"),
        ("put", "/roles/not-an-id"),
        ("get", "/products/NOT-AN-ID-000000000000000"),
        ("delete", "/auth/sessions/not-an-id"),
    ],
)
def test_an_id_that_no_record_could_have_is_404_before_the_body_is_read(owner_client, method, path):
    response = getattr(owner_client, method)(path, json={"no such field": 1})
    assert_error(response, 404)


def test_wrong_method_is_405_with_allow(client):
    response = client.delete("/auth/login")
    assert_error(response, 405)
    assert "POST" in response.headers["Allow"]


def test_invalid_json_is_400(client):
    response = client.post(
        "/auth/login", data="{not json", headers={"Content-Type": "application/json"}
    )
    assert_error(response, 400)
    assert "JSON" in response.json["message"]


def test_field_errors_are_named_in_the_message(client):
    response = client.post("/auth/register", json={"email": "not-an-email", "password": "x"})
    assert_error(response, 400)
    message = response.json["message"]
    assert "email:" in message and "password:" in message and "name:" in message


def test_unknown_field_is_400(client):
    response = client.post(
        "/auth/register",
        json={"email": "a@example.com", "password": PASSWORD, "name": "A", "admin": True},
    )
    assert_error(response, 400)
    assert "admin: Unknown field." in response.json["message"]


def test_oversized_body_is_413(make_app):
    client = make_app(MAX_CONTENT_LENGTH=2048).test_client()
    response = client.post("/auth/login", json={"email": "a@example.com", "password": "x" * 4096})
    assert_error(response, 413)
    assert "2048" in response.json["message"]


def test_unhandled_exception_is_a_bare_500(make_app, caplog):
    app = make_app(PROPAGATE_EXCEPTIONS=False)

    def explode():
        raise RuntimeError("internal detail: /srv/secret/path")

    app.add_url_rule("/explode", view_func=explode)
    with caplog.at_level(logging.ERROR, logger="shop"):
        response = app.test_client().get("/explode")
    assert_error(response, 500)
    assert "secret" not in response.get_data(as_text=True)
    assert "RuntimeError" in caplog.text  # logged for the operator, not sent to the client


def test_unsupported_authorization_scheme_is_401(client):
    response = client.get("/auth/me", headers={"Authorization": "Basic dXNlcjpwYXNz"})
    assert_error(response, 401)
    assert response.headers["WWW-Authenticate"].startswith("Bearer")


def test_an_empty_authorization_header_is_no_credential(owner_client):
    """A generated client typed for keys, used with a session, sends an empty header."""
    response = owner_client.get("/auth/me", headers={"Authorization": ""})
    assert response.status_code == 200 and response.get_json()["role"] == "owner"
    bare = owner_client.get("/auth/me", headers={"Authorization": "Bearer "})
    assert_error(bare, 401)  # a scheme with nothing after it is a bad key, not no key


@pytest.fixture(params=["memory", "redis"])
def limited_client(request, make_app):
    """A client of an app with rate limits on, counted in memory or in Redis."""
    overrides = {"RATELIMIT_ENABLED": True}
    if request.param == "redis":
        if not REDIS_URL:
            pytest.skip("Redis case: SHOP_TEST_REDIS_URL is not set")
        import secrets

        overrides["REDIS_URL"] = REDIS_URL
        overrides["RATELIMIT_KEY_PREFIX"] = f"test-{secrets.token_hex(6)}"
    return make_app(**overrides).test_client()


def test_sixth_login_in_a_minute_is_429_with_retry_after(limited_client):
    for _ in range(5):
        response = limited_client.post("/auth/login", json={"email": "x@example.com"})
        assert response.status_code == 400  # invalid requests count too
    response = limited_client.post(
        "/auth/login", json={"email": "x@example.com", "password": PASSWORD}
    )
    assert_error(response, 429)
    assert 1 <= int(response.headers["Retry-After"]) <= 60
    assert "5 per 1 minute" in response.json["message"]


def test_fourth_registration_in_a_minute_is_429(limited_client):
    for i in range(3):
        response = limited_client.post(
            "/auth/register",
            json={"email": f"c{i}@example.com", "password": PASSWORD, "name": "C"},
        )
        assert response.status_code == 201
    response = limited_client.post(
        "/auth/register", json={"email": "c9@example.com", "password": PASSWORD, "name": "C"}
    )
    assert_error(response, 429)
    assert "Retry-After" in response.headers


def test_limits_count_per_client_address(limited_client):
    for _ in range(5):
        limited_client.post("/auth/login", json={}, environ_base={"REMOTE_ADDR": "10.0.0.1"})
    other = limited_client.post("/auth/login", json={}, environ_base={"REMOTE_ADDR": "10.0.0.2"})
    assert other.status_code == 400


def test_forwarded_for_is_ignored_unless_proxies_are_trusted(make_app):
    client = make_app(RATELIMIT_ENABLED=True).test_client()
    for i in range(5):
        client.post("/auth/login", json={}, headers={"X-Forwarded-For": f"10.9.9.{i}"})
    response = client.post("/auth/login", json={}, headers={"X-Forwarded-For": "10.9.9.99"})
    assert response.status_code == 429


def test_trusted_proxy_address_is_used_for_limits(make_app):
    client = make_app(RATELIMIT_ENABLED=True, TRUSTED_PROXIES=1).test_client()
    for _ in range(5):
        client.post("/auth/login", json={}, headers={"X-Forwarded-For": "10.9.9.1"})
    response = client.post("/auth/login", json={}, headers={"X-Forwarded-For": "10.9.9.2"})
    assert response.status_code == 400


def test_a_limit_holds_over_any_minute_across_a_window_edge(make_app, clock, monkeypatch):
    """Five sign-ins a minute means five in any 60 s: a fixed window let ten through in
    two seconds across its edge (one at 0 s, four at 59 s, five more at 61 s)."""
    import types

    import limits.storage.memory

    # limits' memory storage reads time.time(): give it the test's clock instead.
    monkeypatch.setattr(
        limits.storage.memory, "time", types.SimpleNamespace(time=lambda: clock().timestamp())
    )
    client = make_app(RATELIMIT_ENABLED=True).test_client()
    assert client.post("/auth/login", json={}).status_code == 400  # counts, as a failure
    clock.advance(59)
    for _ in range(4):
        assert client.post("/auth/login", json={}).status_code == 400
    clock.advance(2)  # the first attempt is now more than a minute old, the others are not
    statuses = [client.post("/auth/login", json={}).status_code for _ in range(5)]
    assert statuses == [400, 429, 429, 429, 429]


def test_a_500_is_logged_once_with_its_traceback(make_app, caplog):
    app = make_app(PROPAGATE_EXCEPTIONS=False)

    def explode():
        raise RuntimeError("boom")

    app.add_url_rule("/explode", view_func=explode)
    with caplog.at_level(logging.DEBUG):
        assert app.test_client().get("/explode").status_code == 500
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1, [r.getMessage() for r in errors]
    assert errors[0].exc_info and errors[0].exc_info[0] is RuntimeError


def test_our_log_lines_escape_control_characters(make_app):
    import io

    from shop.logs import EscapingFormatter

    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(EscapingFormatter("%(message)s"))
    log = logging.getLogger("shop")
    log.addHandler(handler)
    try:
        log.warning("path %s", "/a\r\n127.0.0.1 forged\x00")
        try:
            raise ValueError("bad\r\nline")
        except ValueError:
            log.exception("failed on %s", "/b\n")
    finally:
        log.removeHandler(handler)
    lines = stream.getvalue().splitlines()
    assert lines[0] == "path /a\\x0d\\x0a127.0.0.1 forged\\x00"
    assert lines[1] == "failed on /b\\x0a"
    assert lines[-1] == "ValueError: bad\\x0d\\x0aline"


def test_session_refresh_must_be_shorter_than_the_lifetime(make_app):
    from shop import config

    with pytest.raises(config.ConfigError) as caught:
        config.from_environment({"SHOP_SESSION_LIFETIME": "3600", "SHOP_SESSION_REFRESH": "3600"})
    message = str(caught.value)
    assert "\n" not in message
    assert "SHOP_SESSION_REFRESH" in message and "SHOP_SESSION_LIFETIME" in message
    with pytest.raises(config.ConfigError):
        make_app(SESSION_LIFETIME=600, SESSION_REFRESH=900)
    assert config.from_environment({"SHOP_SESSION_LIFETIME": "3600", "SHOP_SESSION_REFRESH": "60"})


def test_swagger_has_the_consoles_security_headers(client):
    import base64
    import hashlib
    import re

    response = client.get("/swagger")
    assert response.status_code == 200
    assert response.headers["X-Frame-Options"] == "DENY"
    policy = response.headers["Content-Security-Policy"]
    assert "frame-ancestors 'none'" in policy and "default-src 'self'" in policy
    assert "'unsafe-inline'" not in policy.split("script-src", 1)[1].split(";", 1)[0]
    (script,) = re.findall(r"<script>(.*?)</script>", response.text, re.DOTALL)
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    assert f"'sha256-{digest}'" in policy  # Swagger UI's own start-up script may run


def test_the_console_and_swagger_send_one_set_of_page_headers(client):
    """One definition (shop/http/hooks.py): Swagger UI only widens the sources its page needs."""

    def policy(headers):
        directives = (
            d.strip().split(" ", 1) for d in headers["Content-Security-Policy"].split(";")
        )
        return dict(directives)

    swagger, console = client.get("/swagger").headers, client.get("/admin/login").headers
    for name in ("Cache-Control", "X-Frame-Options", "Referrer-Policy"):
        assert swagger[name] == console[name], name
    for directive in ("default-src", "frame-ancestors", "form-action"):
        assert policy(swagger)[directive] == policy(console)[directive], directive
    assert set(policy(console)) < set(policy(swagger))


def test_redirects_never_carry_the_clients_host(make_app):
    client = make_app().test_client()
    response = client.get("/admin", headers={"Host": "evil.example"})
    assert response.status_code == 308
    assert response.headers["Location"] == "/admin/"
    # Behind a proxy, X-Forwarded-Host is trusted only with SHOP_TRUSTED_HOSTS set.
    client = make_app(TRUSTED_PROXIES=1).test_client()
    response = client.get("/admin", headers={"X-Forwarded-Host": "evil.example"})
    assert "evil" not in response.headers["Location"]


def test_trusted_hosts_refuse_any_other_host(make_app):
    client = make_app(TRUSTED_HOSTS=["shop.example"], TRUSTED_PROXIES=1).test_client()
    response = client.get("/settings/public", headers={"Host": "evil.example"})
    assert_error(response, 400)
    response = client.get("/settings/public", headers={"Host": "shop.example"})
    assert response.status_code == 200
    response = client.get(
        "/settings/public", headers={"Host": "shop.example", "X-Forwarded-Host": "evil.example"}
    )
    assert_error(response, 400)


def test_trusted_hosts_setting_is_a_comma_list(make_app):
    from shop import config

    assert config.from_environment({})["TRUSTED_HOSTS"] is None
    hosts = config.from_environment({"SHOP_TRUSTED_HOSTS": " shop.example, .shop.example ,"})
    assert hosts["TRUSTED_HOSTS"] == ["shop.example", ".shop.example"]
