"""Per-account lockout: 10 failures within 15 minutes lock an email (known or not) for a
cool-down that doubles on repeat; the owner lifts it; every lockout is audited. In memory
(one process) and in Redis (shared), with the clock moved by hand."""

import secrets

import pytest

from tests.conftest import PASSWORD, REDIS_URL, login

WRONG = "not the password"


@pytest.fixture(params=["memory", "redis"])
def locking_app(request, make_app):
    if request.param == "memory":
        return make_app()
    if not REDIS_URL:
        pytest.skip("Redis case: SHOP_TEST_REDIS_URL is not set")
    return make_app(REDIS_URL=REDIS_URL, RATELIMIT_KEY_PREFIX=f"t-{secrets.token_hex(6)}")


def attempt(app, email, password=WRONG):
    return app.test_client().post("/auth/login", json={"email": email, "password": password})


def fail(app, email, times):
    for _ in range(times):
        assert attempt(app, email).status_code == 401


def owner(app):
    from shop.auth.users import create_user

    with app.app_context():
        create_user("owner@example.com", "Owner", PASSWORD, "owner")
    client = app.test_client()
    login(client, "owner@example.com")
    return client


def test_ten_failures_lock_the_account_with_the_same_answer(locking_app, clock):
    app = locking_app
    boss = owner(app)
    from shop.auth.users import create_user

    with app.app_context():
        ed = create_user("ed@example.com", "Ed", PASSWORD, "editor")
    fail(app, "ed@example.com", 9)
    clock.advance(60)
    assert attempt(app, "ed@example.com", PASSWORD).status_code == 200  # 9: not yet
    fail(app, "ed@example.com", 10)
    locked = attempt(app, "ED@example.com", PASSWORD)
    wrong = attempt(app, "ed@example.com")
    assert locked.status_code == wrong.status_code == 401
    assert locked.json == wrong.json == {"message": "Invalid email or password."}
    assert locked.headers.get("X-Shop-OTP") is None

    clock.advance(15 * 60 - 1)
    assert attempt(app, "ed@example.com", PASSWORD).status_code == 401
    clock.advance(1)  # the first cool-down is 15 minutes
    assert attempt(app, "ed@example.com", PASSWORD).status_code == 200

    fail(app, "ed@example.com", 10)  # again: twice as long
    clock.advance(15 * 60)
    assert attempt(app, "ed@example.com", PASSWORD).status_code == 401
    clock.advance(15 * 60)
    assert attempt(app, "ed@example.com", PASSWORD).status_code == 200

    fail(app, "ed@example.com", 10)  # 60 minutes now, but the owner lifts it
    assert attempt(app, "ed@example.com", PASSWORD).status_code == 401
    assert boss.post(f"/users/{ed['id']}/unlock").status_code == 204
    assert attempt(app, "ed@example.com", PASSWORD).status_code == 200

    lockouts = boss.get("/audit-log?event=login.locked_out").json["items"]
    admin = [e["details"]["lockouts_in_a_row"] for e in lockouts if e["details"]["kind"] == "admin"]
    assert admin == [3, 2, 1]
    # Signing in without a kind counted against ed's customer account too (he has none).
    assert {e["details"]["kind"] for e in lockouts} == {"admin", "customer"}
    assert {e["details"]["email"] for e in lockouts} == {"ed@example.com"}
    (unlocked,) = boss.get("/audit-log?event=user.unlocked").json["items"]
    assert unlocked["details"]["was_locked"] is True
    assert unlocked["actor"]["label"] == "owner@example.com"


def test_failures_spread_over_more_than_15_minutes_do_not_lock(locking_app, clock):
    app = locking_app
    from shop.auth.users import create_user

    with app.app_context():
        create_user("ed@example.com", "Ed", PASSWORD, "editor")
    for _ in range(20):
        fail(app, "ed@example.com", 1)
        clock.advance(100)  # 9 failures per 15 minutes at most
    assert attempt(app, "ed@example.com", PASSWORD).status_code == 200


def test_an_unknown_email_locks_the_same_way(locking_app):
    app = locking_app
    boss = owner(app)
    fail(app, "nobody@example.com", 10)
    lockouts = boss.get("/audit-log?event=login.locked_out").json["items"]
    # Without a kind, the attempt counts against an administrator and a customer account.
    assert sorted((e["details"]["email"], e["details"]["kind"]) for e in lockouts) == [
        ("nobody@example.com", "admin"),
        ("nobody@example.com", "customer"),
    ]
    # A customer account locks too, and the other accounts are untouched.
    client = app.test_client()
    body = {"email": "cu@example.com", "password": PASSWORD, "name": "Cu"}
    assert client.post("/auth/register", json=body).status_code == 201
    fail(app, "cu@example.com", 10)
    assert attempt(app, "cu@example.com", PASSWORD).status_code == 401
    assert attempt(app, "owner@example.com", PASSWORD).status_code == 200


def test_only_a_holder_of_users_update_unlocks(make_admin, owner_client, customer_client):
    ed = make_admin("editor")
    target = f"/users/{ed.user_id}/unlock"
    assert ed.post(target).status_code == 403
    assert customer_client.post(target).status_code == 403
    assert owner_client.post("/users/" + "0" * 24 + "/unlock").status_code == 404
    assert owner_client.post(target).status_code == 204
    (entry,) = owner_client.get("/audit-log?event=user.unlocked").json["items"]
    assert entry["details"]["was_locked"] is False


def test_the_console_sign_in_counts_too(locking_app):
    from tests.admin_helpers import submit

    app = locking_app
    owner(app)
    fail(app, "owner@example.com", 10)
    browser = app.test_client()
    response = submit(
        browser, "/admin/login", "/admin/login", email="owner@example.com", password=PASSWORD
    )
    assert response.status_code == 401 and b"Invalid email or password." in response.data


def test_with_redis_away_each_process_counts_in_memory(make_app, caplog):
    from tests.live import free_port

    app = make_app(REDIS_URL=f"redis://127.0.0.1:{free_port()}/0")  # nobody listens there
    owner(app)
    fail(app, "owner@example.com", 10)
    assert attempt(app, "owner@example.com", PASSWORD).status_code == 401
    assert "counting in memory" in caplog.text


def attempt_as(app, email, password, kind=None):
    body = {"email": email, "password": password}
    if kind:
        body["kind"] = kind
    return app.test_client().post("/auth/login", json=body)


OWN = "the customer's own passphrase"


def test_a_customer_with_an_administrators_email_cannot_keep_the_lockout_away(locking_app):
    """Issue 22: 9 wrong guesses of the administrator's password, then one sign-in of a
    customer registered with the same email, over and over: the administrator's account
    still locks at the tenth failure, and the customer's success never clears it."""
    app = locking_app
    boss = owner(app)
    body = {"email": "Owner@Example.com", "password": OWN, "name": "Mallory"}
    assert app.test_client().post("/auth/register", json=body).status_code == 201
    for _ in range(3):
        fail(app, "owner@example.com", 9)
        for kind in (None, "customer"):  # with and without a kind: the customer's own
            signed_in = attempt_as(app, "owner@example.com", OWN, kind)
            assert signed_in.status_code == 200 and signed_in.json["kind"] == "customer"
    for kind in (None, "admin"):
        refused = attempt_as(app, "owner@example.com", PASSWORD, kind)
        assert refused.status_code == 401
        assert refused.json == {"message": "Invalid email or password."}
    lockouts = boss.get("/audit-log?event=login.locked_out").json["items"]
    assert [e["details"]["kind"] for e in lockouts] == ["admin"]
    # The owner's own session lifts it; only the administrator's account is cleared.
    assert boss.post(f"/users/{boss.get('/auth/me').json['id']}/unlock").status_code == 204
    assert attempt_as(app, "owner@example.com", PASSWORD).json["kind"] == "admin"


def test_known_and_unknown_emails_lock_alike_for_each_kind(locking_app):
    """Ten failures without a kind lock both kinds' accounts of the email, whether or not
    an account has it: a kind-specific attempt then tells nothing either."""
    app = locking_app
    owner(app)  # an administrator only
    fail(app, "owner@example.com", 10)
    fail(app, "nobody@example.com", 10)
    answers = [
        (r.status_code, r.json)
        for email in ("owner@example.com", "nobody@example.com")
        for kind in ("admin", "customer")
        for r in [attempt_as(app, email, PASSWORD, kind)]
    ]
    assert answers == [(401, {"message": "Invalid email or password."})] * 4
