"""Two-factor sign-in (TOTP) for administrators: set up, confirm, sign in with a code or a
recovery code, replays refused, turn off; the shop-wide requirement; the console's second
step. The clock is moved by hand, and codes are made with pyotp for that clock."""

import re
from datetime import timedelta

import pyotp
import pytest

from shop import db
from tests.admin_helpers import submit
from tests.conftest import PASSWORD

EMAIL = "owner@example.com"


def code(secret, clock, steps=0):
    """The code of ``secret`` ``steps`` time steps from the test clock's now."""
    return pyotp.TOTP(secret).at(clock.moment + timedelta(seconds=30 * steps))


def sign_in(app, otp=None, email=EMAIL, password=PASSWORD):
    body = {"email": email, "password": password}
    if otp is not None:
        body["otp"] = otp
    client = app.test_client()
    response = client.post("/auth/login", json=body)
    client.response = response
    return client


def turn_on(client, clock):
    """Set up and confirm through the API; answer (secret, recovery codes)."""
    setup = client.post("/auth/two-factor/setup")
    assert setup.status_code == 201, setup.json
    secret = setup.json["secret"]
    confirmed = client.post("/auth/two-factor/confirm", json={"otp": code(secret, clock)})
    assert confirmed.status_code == 200, confirmed.json
    return secret, confirmed.json["recovery_codes"]


def test_set_up_confirm_and_sign_in_with_a_code(app, owner_client, clock):
    assert owner_client.get("/auth/two-factor").json == {
        "enabled": False,
        "enabled_at": None,
        "recovery_codes_left": 0,
        "required": False,
    }
    setup = owner_client.post("/auth/two-factor/setup")
    assert setup.status_code == 201
    secret = setup.json["secret"]
    assert re.fullmatch(r"[A-Z2-7]{32}", secret)
    assert setup.json["otpauth_uri"].startswith("otpauth://totp/My%20Shop:owner%40example.com?")
    assert f"secret={secret}" in setup.json["otpauth_uri"]
    assert setup.json["qr_svg"].startswith("<svg") and "<path" in setup.json["qr_svg"]
    assert sign_in(app).response.status_code == 200  # not in force until confirmed

    wrong = owner_client.post("/auth/two-factor/confirm", json={"otp": "000000"})
    assert wrong.status_code == 400 and wrong.json["message"].startswith("otp:")
    confirmed = owner_client.post("/auth/two-factor/confirm", json={"otp": code(secret, clock)})
    assert confirmed.status_code == 200
    codes = confirmed.json["recovery_codes"]
    assert len(codes) == len(set(codes)) == 10
    with app.app_context():  # stored hashed only
        stored = str(db.query("SELECT * FROM user_recovery_codes"))
        assert not any(c in stored or c.replace("-", "") in stored for c in codes)
    state = owner_client.get("/auth/two-factor").json
    assert state["enabled"] and state["recovery_codes_left"] == 10

    missing = sign_in(app).response
    assert missing.status_code == 401 and missing.headers["X-Shop-OTP"] == "required"
    assert "Two-factor code required" in missing.json["message"]
    assert "shop_admin_session" not in str(missing.headers.getlist("Set-Cookie"))
    replay = sign_in(app, code(secret, clock)).response  # the code that confirmed
    assert replay.status_code == 401 and replay.headers["X-Shop-OTP"] == "required"
    assert replay.json["message"] == "Invalid two-factor code."

    clock.advance(30)
    client = sign_in(app, code(secret, clock))
    assert client.response.status_code == 200
    assert client.get("/auth/me").json["email"] == EMAIL
    assert sign_in(app, code(secret, clock)).response.status_code == 401  # never twice
    # Wrong password with a right code: the plain answer, no header.
    bad = sign_in(app, code(secret, clock, 1), password="wrong password")
    assert bad.response.status_code == 401 and "X-Shop-OTP" not in bad.response.headers


def test_one_step_either_side_is_accepted_and_no_further(app, owner_client, clock):
    secret, _ = turn_on(owner_client, clock)
    clock.advance(300)
    assert sign_in(app, code(secret, clock, -2)).response.status_code == 401
    assert sign_in(app, code(secret, clock, -1)).response.status_code == 200
    assert sign_in(app, code(secret, clock, 2)).response.status_code == 401
    assert sign_in(app, code(secret, clock, 1)).response.status_code == 200
    # After step +1 was used, now's code (an earlier step) is refused too.
    assert sign_in(app, code(secret, clock)).response.status_code == 401


def test_a_recovery_code_signs_in_once(app, owner_client, clock):
    _, codes = turn_on(owner_client, clock)
    client = sign_in(app, codes[3].upper())
    assert client.response.status_code == 200
    assert sign_in(app, codes[3]).response.status_code == 401
    assert client.get("/auth/two-factor").json["recovery_codes_left"] == 9
    (entry, *_) = owner_client.get("/audit-log?event=login.succeeded").json["items"]
    assert entry["details"]["second_factor"] == "recovery_code"


def test_wrong_codes_count_towards_the_lockout(app, owner_client, clock):
    secret, _ = turn_on(owner_client, clock)
    for _ in range(10):
        assert sign_in(app, "123456").response.status_code == 401
    clock.advance(30)
    locked = sign_in(app, code(secret, clock)).response
    assert locked.status_code == 401 and "X-Shop-OTP" not in locked.headers


def test_a_customer_with_the_same_email_cannot_reset_the_count_of_wrong_codes(
    app, owner_client, clock
):
    """Issue 22: wrong codes, each ninth followed by a sign-in of a customer registered with
    the administrator's email: the tenth wrong code still locks the administrator."""
    secret, _ = turn_on(owner_client, clock)
    own = {"email": EMAIL, "password": "the customer's own passphrase", "name": "Mallory"}
    assert app.test_client().post("/auth/register", json=own).status_code == 201
    for _ in range(2):
        for _ in range(9):
            assert sign_in(app, "123456").response.status_code == 401
        customer = sign_in(app, password=own["password"]).response
        assert customer.status_code == 200 and customer.json["kind"] == "customer"
    clock.advance(30)
    locked = sign_in(app, code(secret, clock)).response
    assert locked.status_code == 401 and "X-Shop-OTP" not in locked.headers


def test_turn_off_needs_the_password_and_a_code(app, owner_client, clock):
    secret, codes = turn_on(owner_client, clock)
    clock.advance(30)
    body = {"password": "wrong password", "otp": code(secret, clock)}
    wrong = owner_client.post("/auth/two-factor/disable", json=body)
    assert wrong.status_code == 400 and wrong.json["message"].startswith("password:")
    body = {"password": PASSWORD, "otp": "000000"}
    wrong = owner_client.post("/auth/two-factor/disable", json=body)
    assert wrong.status_code == 400 and wrong.json["message"].startswith("otp:")
    body = {"password": PASSWORD, "otp": codes[0]}
    assert owner_client.post("/auth/two-factor/disable", json=body).status_code == 204
    assert sign_in(app).response.status_code == 200
    assert owner_client.get("/auth/two-factor").json["enabled"] is False
    events = [e["event"] for e in owner_client.get("/audit-log").json["items"]]
    assert {"two_factor.enabled", "two_factor.disabled"} <= set(events)


def console_with_code(app, secret, clock):
    """A test client signed in through the console's two steps (password, then a code)."""
    browser = app.test_client()
    first = submit(browser, "/admin/login", "/admin/login", email=EMAIL, password=PASSWORD)
    done = browser.post(
        "/admin/login/code", data={**_fields(first.text), "code": code(secret, clock)}
    )
    assert done.status_code == 303, done.text
    return browser


def test_turning_off_shares_one_rate_limit_between_the_console_and_the_api(make_app, clock):
    """Issue 22: wrong passwords at the console's turn-off form count with the API's: the
    sixth try within a minute, on either, is a 429."""
    import secrets

    from shop.auth.users import create_user

    app = make_app(RATELIMIT_ENABLED=True, RATELIMIT_KEY_PREFIX=secrets.token_hex(6))
    with app.app_context():
        create_user(EMAIL, "Owner", PASSWORD, "owner")
    api = sign_in(app)
    secret, _ = turn_on(api, clock)
    clock.advance(30)
    console = console_with_code(app, secret, clock)
    form = {**_fields(console.get("/admin/two-factor").text), "password": "wrong", "code": "1"}
    wrong = {"password": "wrong password", "otp": "000000"}
    for _ in range(3):
        assert console.post("/admin/two-factor/disable", data=form).status_code == 400
    for _ in range(2):
        assert api.post("/auth/two-factor/disable", json=wrong).status_code == 400
    refused = console.post("/admin/two-factor/disable", data=form)
    assert refused.status_code == 429 and "Too many requests" in refused.text
    assert api.post("/auth/two-factor/disable", json=wrong).status_code == 429
    assert api.get("/auth/two-factor").json["enabled"] is True


def test_turning_it_on_ends_every_other_session(app, owner_client, clock):
    """Issue 22: a session opened before two-factor sign-in was on never passed it; turning
    it on ends the others (as a password change does), the one that turned it on goes on."""
    from tests.admin_helpers import console_client

    earlier = sign_in(app)
    console = console_client(app, EMAIL)
    assert earlier.get("/auth/me").status_code == 200
    turn_on(owner_client, clock)
    assert earlier.get("/auth/me").status_code == 401
    assert console.get("/admin/two-factor").status_code in (302, 303)
    assert owner_client.get("/auth/me").status_code == 200
    (entry,) = owner_client.get("/audit-log?event=two_factor.enabled").json["items"]
    assert entry["details"]["other_sessions_ended"] == 2


def test_set_up_again_while_on_is_a_conflict(owner_client, clock):
    turn_on(owner_client, clock)
    assert owner_client.post("/auth/two-factor/setup").status_code == 409
    assert owner_client.post("/auth/two-factor/confirm", json={"otp": "1"}).status_code == 409


def test_customers_and_keys_have_no_two_factor(customer_client, make_key):
    assert customer_client.post("/auth/two-factor/setup").status_code == 403
    key = make_key("read:product")
    assert key.post("/auth/two-factor/setup").status_code == 403


def test_the_shop_can_require_it_of_administrators(app, owner_client, make_admin, clock):
    editor = make_admin("editor", email="ed@example.com")
    changed = owner_client.patch("/settings", json={"require_two_factor": True})
    assert changed.status_code == 200 and changed.json["require_two_factor"] is True
    refused = editor.get("/products")
    assert refused.status_code == 403 and "/auth/two-factor/setup" in refused.json["message"]
    assert owner_client.get("/users").status_code == 403  # the owner too
    assert editor.get("/auth/me").status_code == 200
    assert editor.get("/auth/two-factor").json["required"] is True
    secret, codes = turn_on(editor, clock)
    assert editor.get("/products").status_code == 200
    body = {"password": PASSWORD, "otp": codes[0]}
    off = editor.post("/auth/two-factor/disable", json=body)
    assert off.status_code == 409 and "require" in off.json["message"]
    clock.advance(30)
    assert sign_in(app, code(secret, clock), email="ed@example.com").response.status_code == 200
    # The console sends an administrator without it to the set-up page.
    assert owner_client.get("/admin/api-keys").location.endswith("/admin/two-factor")


def test_the_login_401_and_its_header_are_documented(client):
    spec = client.get("/openapi.json").json
    login = spec["paths"]["/auth/login"]["post"]
    assert "X-Shop-OTP" in login["responses"]["401"]["headers"]
    assert "otp" in spec["components"]["schemas"]["Login"]["properties"]
    ids = {
        op.get("operationId")
        for item in spec["paths"].values()
        for op in item.values()
        if isinstance(op, dict)
    }
    expected = {"getTwoFactor", "setUpTwoFactor", "confirmTwoFactor", "turnOffTwoFactor"}
    assert expected | {"requestPasswordReset", "confirmPasswordReset", "unlockUser"} <= ids


# The console ---------------------------------------------------------------------------------


def test_the_console_sets_it_up_and_asks_for_the_code_on_a_second_step(app, owner_client, clock):
    from tests.admin_helpers import console_client

    console = console_client(app, EMAIL)
    page = console.get("/admin/two-factor")
    assert b"is <strong>off</strong>" in page.data
    started = submit(console, "/admin/two-factor", "/admin/two-factor/setup")
    assert started.status_code == 303 and started.location.endswith("/admin/two-factor")
    shown = console.get("/admin/two-factor")
    assert shown.status_code == 200 and b"<svg" in shown.data
    secret = re.search(r'<code id="secret">([A-Z2-7]+)</code>', shown.text).group(1)
    wrong = console.post(
        "/admin/two-factor/confirm",
        data={"csrf_token": re.search(r'name="csrf_token" value="(\w+)"', shown.text).group(1),
              "code": "000000"},
    )  # fmt: skip
    assert wrong.status_code == 400 and b"not accepted" in wrong.data
    confirmed = console.post(
        "/admin/two-factor/confirm",
        data={"csrf_token": re.search(r'name="csrf_token" value="(\w+)"', shown.text).group(1),
              "code": code(secret, clock)},
    )  # fmt: skip
    assert confirmed.status_code == 200
    codes = re.findall(r"<li><code>([a-z2-7-]+)</code></li>", confirmed.text)
    assert len(codes) == 10

    clock.advance(30)
    browser = app.test_client()
    first = submit(browser, "/admin/login", "/admin/login", email=EMAIL, password=PASSWORD)
    assert first.status_code == 200 and b'name="code"' in first.data
    assert browser.get_cookie("shop_admin_session") is None
    second = browser.post("/admin/login/code", data={**_fields(first.text), "code": "000000"})
    assert second.status_code == 401 and b"not right" in second.data
    ok = browser.post("/admin/login/code", data={**_fields(first.text), "code": codes[0]})
    assert ok.status_code == 303 and ok.location.endswith("/admin/")
    assert browser.get("/admin/sessions").status_code == 200
    replay = app.test_client()
    again = submit(replay, "/admin/login", "/admin/login", email=EMAIL, password=PASSWORD)
    used = replay.post("/admin/login/code", data={**_fields(again.text), "code": codes[0]})
    assert used.status_code == 401


def _secret_shown(page) -> str | None:
    found = re.search(r'<code id="secret">([A-Z2-7]+)</code>', page.text)
    return found.group(1) if found else None


def test_the_console_keeps_the_set_up_until_confirmed_or_cancelled(app, owner_client, clock):
    """A wrong code, a reload or "Set up" again keep the secret already scanned, and the page
    says what happened; only cancelling drops it (audited), and then a new one is made."""
    from tests.admin_helpers import console_client

    console = console_client(app, EMAIL)
    submit(console, "/admin/two-factor", "/admin/two-factor/setup")
    secret = _secret_shown(console.get("/admin/two-factor"))
    wrong = submit(console, "/admin/two-factor", "/admin/two-factor/confirm", code="000000")
    assert wrong.status_code == 400 and _secret_shown(wrong) == secret
    assert "still off" in wrong.text and "unchanged" in wrong.text
    assert "otp:" not in wrong.text and b'aria-describedby="form-error"' in wrong.data
    again = submit(console, "/admin/two-factor", "/admin/two-factor/setup")
    assert again.status_code == 303
    assert _secret_shown(console.get("/admin/two-factor")) == secret  # not a new one
    cancelled = submit(console, "/admin/two-factor", "/admin/two-factor/cancel")
    page = console.get(cancelled.location)
    assert _secret_shown(page) is None and "Set-up cancelled" in page.text
    assert "is <strong>off</strong>" in page.text
    stale = submit(
        console, "/admin/two-factor", "/admin/two-factor/confirm", code=code(secret, clock)
    )
    assert stale.status_code == 409 and "no set-up to confirm" in stale.text
    submit(console, "/admin/two-factor", "/admin/two-factor/setup")
    fresh = _secret_shown(console.get("/admin/two-factor"))
    assert fresh and fresh != secret
    done = submit(
        console, "/admin/two-factor", "/admin/two-factor/confirm", code=code(fresh, clock)
    )
    assert done.status_code == 200 and "Recovery codes" in done.text
    assert console.get("/audit-log?event=two_factor.setup_cancelled").json["total"] == 1


def test_the_second_step_expires(app, owner_client, clock):
    turn_on(owner_client, clock)
    browser = app.test_client()
    first = submit(browser, "/admin/login", "/admin/login", email=EMAIL, password=PASSWORD)
    clock.advance(301)
    late = browser.post("/admin/login/code", data={**_fields(first.text), "code": "123456"})
    assert late.status_code == 400 and b"took too long" in late.data


def _fields(html):
    from tests.admin_helpers import hidden_fields

    return hidden_fields(html)


@pytest.fixture
def device_client(app):
    from shop.auth.users import create_user

    with app.app_context():
        create_user("d@example.com", "D", PASSWORD, "owner")
    client = app.test_client()
    client.environ_base["HTTP_USER_AGENT"] = (
        "Mozilla/5.0 (Macintosh; Intel Mac OS X 10.15; rv:120.0) Gecko/20100101 Firefox/120.0"
    )
    client.post("/auth/login", json={"email": "d@example.com", "password": PASSWORD})
    return client


def test_sessions_name_their_devices(device_client):
    (session,) = device_client.get("/auth/sessions").json["items"]
    assert session["device"] == "Firefox on Mac OS X"
    page = device_client.get("/admin/sessions")
    assert b">Firefox on Mac OS X</span>" in page.data


def test_the_owner_resets_a_lost_second_factor_from_the_cli(app, owner_client, clock):
    """``flask users reset-two-factor EMAIL``: the factor goes, every session of the user
    ends, the audit log says who did it; the user signs in with the password alone."""
    turn_on(owner_client, clock)
    runner = app.test_cli_runner()
    missing = runner.invoke(args=["users", "reset-two-factor", "nobody@example.com"])
    assert missing.exit_code == 1 and "No administrator" in missing.output
    reset = runner.invoke(args=["users", "reset-two-factor", EMAIL.upper()])
    assert reset.exit_code == 0, reset.output
    assert f"Two-factor sign-in of {EMAIL} removed" in reset.output
    assert owner_client.get("/auth/me").status_code == 401  # its sessions ended
    again = sign_in(app)
    assert again.response.status_code == 200, again.response.json
    assert again.get("/auth/two-factor").json["enabled"] is False
    entry = again.get("/audit-log?event=two_factor.reset").json["items"][0]
    assert entry["actor"]["kind"] == "cli" and entry["details"]["was_on"] is True
