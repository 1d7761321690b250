"""Human sign-in, sessions and their lifetime (spec 2.3, 3.2, 4.1, 5.1)."""

import logging

from shop.db import sha256
from tests.conftest import PASSWORD, login


def session_cookie(response, name):
    """The Set-Cookie header for ``name``."""
    headers = [h for h in response.headers.getlist("Set-Cookie") if h.startswith(name + "=")]
    assert len(headers) == 1, response.headers.getlist("Set-Cookie")
    return headers[0]


def test_admin_login_sets_a_strict_cookie_and_returns_the_user(make_admin, app):
    make_admin("editor", email="Ed@Example.com")
    client = app.test_client()
    response = client.post("/auth/login", json={"email": "ED@example.COM", "password": PASSWORD})
    assert response.status_code == 200
    user = response.json
    assert user["email"] == "ed@example.com"
    assert user["kind"] == "admin" and user["role"] == "editor"
    assert user["permissions"] == sorted(user["permissions"])
    assert "products.create" in user["permissions"] and "users.read" not in user["permissions"]
    cookie = session_cookie(response, "shop_admin_session")
    for attribute in ("HttpOnly", "Secure", "SameSite=Strict", "Path=/", "Max-Age=604800"):
        assert attribute in cookie
    token = cookie.split(";", 1)[0].split("=", 1)[1]
    assert len(token) == 43
    assert token not in response.get_data(as_text=True)
    assert client.get("/auth/me").json["email"] == "ed@example.com"


def test_session_table_holds_only_the_hash(owner_client, app):
    token = owner_client.get_cookie("shop_admin_session").value
    from shop import db

    with app.app_context():
        rows = db.query("SELECT token_hash FROM user_session")
    assert [r["token_hash"] for r in rows] == [sha256(token)]


def test_cookie_secure_can_be_dropped_for_local_http(make_app):
    app = make_app(COOKIE_SECURE=False)
    response = app.test_client().post(
        "/auth/register", json={"email": "a@example.com", "password": PASSWORD, "name": "A"}
    )
    assert "Secure" not in session_cookie(response, "shop_customer_session")


def test_customer_login_and_kind(make_customer, app):
    make_customer(email="cu@example.com")
    client = app.test_client()
    user = login(client, "cu@example.com", kind="customer")
    assert user["kind"] == "customer" and user["role"] is None and user["permissions"] == []
    assert client.get_cookie("shop_customer_session") is not None
    refused = app.test_client().post(
        "/auth/login", json={"email": "cu@example.com", "password": PASSWORD, "kind": "admin"}
    )
    assert refused.status_code == 401


def test_wrong_password_and_unknown_email_get_the_same_answer(owner_client, app):
    client = app.test_client()
    wrong = client.post("/auth/login", json={"email": "owner@example.com", "password": "nope-nope"})
    unknown = client.post("/auth/login", json={"email": "nobody@example.com", "password": "x"})
    assert wrong.status_code == unknown.status_code == 401
    assert wrong.json == unknown.json == {"message": "Invalid email or password."}
    failures = owner_client.get("/audit-log?event=login.failed").json["items"]
    assert {f["details"]["email"] for f in failures} == {"owner@example.com", "nobody@example.com"}


def test_register_conflicts_and_short_passwords(client):
    body = {"email": "new@example.com", "password": PASSWORD, "name": "New"}
    created = client.post("/auth/register", json=body)
    assert created.status_code == 201
    assert created.json["kind"] == "customer" and created.json["email"] == "new@example.com"
    assert client.get("/auth/me").json["id"] == created.json["id"]
    again = client.post("/auth/register", json={**body, "email": "NEW@example.com"})
    assert again.status_code == 409
    short = client.post(
        "/auth/register", json={**body, "email": "b@example.com", "password": "1234567"}
    )
    assert short.status_code == 400 and "password" in short.json["message"]


def test_me_needs_a_session(client):
    response = client.get("/auth/me")
    assert response.status_code == 401


def test_logout_ends_the_server_side_session(owner_client, app):
    token = owner_client.get_cookie("shop_admin_session").value
    response = owner_client.post("/auth/logout")
    assert response.status_code == 204
    assert "shop_admin_session=;" in session_cookie(response, "shop_admin_session")
    replay = app.test_client()
    replay.set_cookie("shop_admin_session", token)
    assert replay.get("/auth/me").status_code == 401


def test_session_expires_after_its_lifetime_without_use(owner_client, clock):
    clock.advance(7 * 24 * 3600 + 1)
    response = owner_client.get("/auth/me")
    assert response.status_code == 401
    assert "expired" in response.json["message"]


def test_session_slides_with_use_up_to_its_absolute_cap(owner_client, clock):
    for _ in range(4):  # 24 days of use, each gap under the 7-day sliding window
        clock.advance(6 * 24 * 3600)
        assert owner_client.get("/auth/me").status_code == 200
    clock.advance(6 * 24 * 3600 - 1)  # 30 days less a second after sign-in
    response = owner_client.get("/auth/me")
    assert response.status_code == 200
    clock.advance(1)  # the 30-day cap, though it was used a moment ago
    response = owner_client.get("/auth/me")
    assert response.status_code == 401 and "expired" in response.json["message"]


def test_the_absolute_cap_is_a_setting(make_app, clock):
    app = make_app(SESSION_MAX_LIFETIME=3600)
    from shop.auth.users import create_user

    with app.app_context():
        create_user("o@example.com", "O", PASSWORD, "owner")
    client = app.test_client()
    login(client, "o@example.com")
    clock.advance(3000)
    assert client.get("/auth/me").status_code == 200
    clock.advance(600)
    assert client.get("/auth/me").status_code == 401


def test_refresh_writes_at_most_once_per_interval(owner_client, clock, sql_count):
    with sql_count() as counted:
        response = owner_client.get("/auth/me")
    assert response.status_code == 200
    assert "Set-Cookie" not in response.headers
    assert counted["writes"] == 0
    clock.advance(61)
    with sql_count() as counted:
        response = owner_client.get("/auth/me")
    assert counted["writes"] == 1
    assert "Max-Age=604800" in session_cookie(response, "shop_admin_session")


def test_resolving_a_session_is_one_query(owner_client, sql_count):
    with sql_count() as counted:
        owner_client.get("/auth/sessions")
    # The session (with user, role and permissions) and the sessions list itself.
    assert counted == {"statements": 2, "writes": 0}


def test_another_user_agent_ends_the_session(owner_client):
    response = owner_client.get("/auth/me", headers={"User-Agent": "curl/8.0"})
    assert response.status_code == 401
    assert "browser changed" in response.json["message"]
    assert owner_client.get("/auth/me").status_code == 401  # the session is gone for good
    events = [e["event"] for e in _audit(owner_client)]
    assert "session.user_agent_mismatch" in events


def _audit(client):
    from tests.conftest import login as sign_in

    sign_in(client, "owner@example.com")
    return client.get("/audit-log").json["items"]


def test_an_address_change_is_audited_and_the_session_goes_on(owner_client):
    moved = owner_client.get("/auth/me", environ_base={"REMOTE_ADDR": "192.0.2.7"})
    assert moved.status_code == 200
    entries = owner_client.get(
        "/audit-log?event=session.ip_changed", environ_base={"REMOTE_ADDR": "192.0.2.7"}
    ).json["items"]
    assert len(entries) == 1
    assert entries[0]["details"]["from"] == "127.0.0.1"
    assert entries[0]["details"]["to"] == "192.0.2.7"


def test_password_change_ends_other_sessions(make_admin, app):
    first = make_admin("admin", email="a@example.com")
    second = app.test_client()
    login(second, "a@example.com")
    wrong = first.post(
        "/auth/password", json={"current_password": "wrong-one", "new_password": "n3w-passw0rd"}
    )
    assert wrong.status_code == 400
    changed = first.post(
        "/auth/password", json={"current_password": PASSWORD, "new_password": "n3w-passw0rd"}
    )
    assert changed.status_code == 204
    assert first.get("/auth/me").status_code == 200
    assert second.get("/auth/me").status_code == 401
    login(app.test_client(), "a@example.com", "n3w-passw0rd")


def test_sessions_list_and_revoke(make_admin, app):
    first = make_admin("admin", email="a@example.com")
    second = app.test_client()
    login(second, "a@example.com")
    listed = first.get("/auth/sessions").json
    assert listed["total"] == 2
    current = [s for s in listed["items"] if s["current"]]
    other = [s for s in listed["items"] if not s["current"]]
    assert len(current) == len(other) == 1
    assert set(current[0]) == {
        "id",
        "created_at",
        "last_seen_at",
        "expires_at",
        "user_agent",
        "device",
        "ip",
        "current",
    }
    assert first.delete(f"/auth/sessions/{other[0]['id']}").status_code == 204
    assert second.get("/auth/me").status_code == 401
    assert first.delete(f"/auth/sessions/{other[0]['id']}").status_code == 404


def test_a_customer_cannot_end_an_administrator_session(owner_client, customer_client):
    owner_session = owner_client.get("/auth/sessions").json["items"][0]["id"]
    assert customer_client.delete(f"/auth/sessions/{owner_session}").status_code == 404
    assert owner_client.get("/auth/me").status_code == 200


def test_update_own_name(customer_client):
    response = customer_client.patch("/auth/me", json={"name": "Renamed"})
    assert response.status_code == 200 and response.json["name"] == "Renamed"


def test_no_secret_reaches_a_response_or_a_log(app, caplog):
    client = app.test_client()
    with caplog.at_level(logging.DEBUG):
        registered = client.post(
            "/auth/register",
            json={"email": "s@example.com", "password": PASSWORD, "name": "S"},
        )
        token = client.get_cookie("shop_customer_session").value
        bodies = [registered.get_data(as_text=True)]
        bodies.append(client.get("/auth/me").get_data(as_text=True))
        bodies.append(client.get("/auth/sessions").get_data(as_text=True))
        bodies.append(
            client.post(
                "/auth/login", json={"email": "s@example.com", "password": PASSWORD + "x"}
            ).get_data(as_text=True)
        )
    for text in [*bodies, caplog.text]:
        assert PASSWORD not in text
        assert token not in text
        assert sha256(token) not in text
        assert "scrypt" not in text
