"""Password reset by e-mail through a real SMTP server on 127.0.0.1: the same 202 for every
email, a single-use link valid 30 minutes, every session ended, limits per address and per
account; the console's reset page for administrators."""

from urllib.parse import parse_qs, urlsplit

import pytest

from shop import db
from tests.conftest import PASSWORD, login
from tests.mail_helpers import deliver, html_of, link_in, text_of

NEW_PASSWORD = "a brand new passphrase"


@pytest.fixture
def mail_app(make_app, smtp):
    return make_app(SMTP_URL=smtp.url, PUBLIC_URL="https://shop.example")


def token_of(link: str) -> str:
    return parse_qs(urlsplit(link).query)["token"][0]


def register(app, email="casey@example.com"):
    client = app.test_client()
    body = {"email": email, "password": PASSWORD, "name": "Casey"}
    assert client.post("/auth/register", json=body).status_code == 201
    return client


def test_reset_by_email_then_the_link_works_once_and_ends_every_session(mail_app, smtp):
    first = register(mail_app)
    second = mail_app.test_client()
    login(second, "casey@example.com")
    asked = mail_app.test_client().post("/auth/password-reset", json={"email": "Casey@Example.com"})
    unknown = mail_app.test_client().post(
        "/auth/password-reset", json={"email": "nobody@example.com"}
    )
    assert asked.status_code == unknown.status_code == 202
    assert asked.json == unknown.json and "30 minutes" in asked.json["message"]
    assert smtp.messages == []  # nothing sent from the web request
    assert deliver(mail_app) == 1
    (message,) = smtp.messages
    assert message["To"] == "casey@example.com" and message.rcpt_tos == ["casey@example.com"]
    assert "My Shop" in message["From"]
    link = link_in(message)
    assert link.startswith("https://shop.example/store/account/password-reset?token=")
    assert link in html_of(message).replace("&amp;", "&")
    token = token_of(link)
    with mail_app.app_context():  # stored hashed, and the sent bodies are blanked
        assert db.value("SELECT token_hash FROM password_resets") == db.sha256(token)
        assert db.value("SELECT text_body FROM mail_outbox") == ""
        assert token not in str(db.query("SELECT * FROM audit_log"))

    confirm = {"token": token, "new_password": NEW_PASSWORD}
    client = mail_app.test_client()
    assert client.post("/auth/password-reset/confirm", json=confirm).status_code == 204
    assert first.get("/auth/me").status_code == 401
    assert second.get("/auth/me").status_code == 401
    login(client, "casey@example.com", NEW_PASSWORD)
    again = client.post("/auth/password-reset/confirm", json={**confirm, "new_password": "x" * 9})
    assert again.status_code == 400 and again.json["message"].startswith("token:")
    login(mail_app.test_client(), "casey@example.com", NEW_PASSWORD)


def test_the_link_expires_after_30_minutes(mail_app, smtp, clock):
    register(mail_app)
    mail_app.test_client().post("/auth/password-reset", json={"email": "casey@example.com"})
    deliver(mail_app)
    token = token_of(link_in(smtp.messages[0]))
    clock.advance(30 * 60)
    response = mail_app.test_client().post(
        "/auth/password-reset/confirm", json={"token": token, "new_password": NEW_PASSWORD}
    )
    assert response.status_code == 400
    login(mail_app.test_client(), "casey@example.com")


def test_an_account_gets_at_most_three_mails_an_hour(mail_app, smtp, clock):
    register(mail_app)
    for _ in range(5):
        response = mail_app.test_client().post(
            "/auth/password-reset", json={"email": "casey@example.com"}
        )
        assert response.status_code == 202
    assert deliver(mail_app) == 3
    # A new link does not revoke the earlier ones; using one uses up all of them.
    tokens = [token_of(link_in(m)) for m in smtp.messages]
    client = mail_app.test_client()
    body = {"token": tokens[1], "new_password": NEW_PASSWORD}
    assert client.post("/auth/password-reset/confirm", json=body).status_code == 204
    body = {"token": tokens[2], "new_password": PASSWORD}
    assert client.post("/auth/password-reset/confirm", json=body).status_code == 400
    clock.advance(3601)  # an hour later the account may ask again
    mail_app.test_client().post("/auth/password-reset", json={"email": "casey@example.com"})
    assert deliver(mail_app) == 1


def test_an_address_may_ask_five_times_a_minute(make_app):
    app = make_app(RATELIMIT_ENABLED=True)
    client = app.test_client()
    for number in range(5):
        body = {"email": f"someone-{number}@example.com"}
        assert client.post("/auth/password-reset", json=body).status_code == 202
    refused = client.post("/auth/password-reset", json={"email": "more@example.com"})
    assert refused.status_code == 429 and "Retry-After" in refused.headers


def test_bad_input_names_the_field(client):
    response = client.post("/auth/password-reset", json={"email": "a@example.com", "kind": "x"})
    assert response.status_code == 400 and response.json["message"].startswith("kind:")
    short = client.post("/auth/password-reset/confirm", json={"token": "t", "new_password": "x"})
    assert short.status_code == 400 and "new_password" in short.json["message"]


def test_an_administrator_follows_the_link_to_the_console(mail_app, smtp, make_admin):
    admin = make_admin("admin", email="ada@example.com")
    mail_app.test_client().post(
        "/auth/password-reset", json={"email": "ada@example.com", "kind": "admin"}
    )
    deliver(mail_app)
    link = link_in(smtp.messages[0])
    assert link.startswith("https://shop.example/admin/password-reset?token=")
    browser = mail_app.test_client()
    page = browser.get(link.removeprefix("https://shop.example"))
    assert page.status_code == 200 and b'name="new_password"' in page.data
    token = token_of(link)
    short = browser.post("/admin/password-reset", data={"token": token, "new_password": "x"})
    assert short.status_code == 400
    form = {"token": token, "new_password": NEW_PASSWORD}
    done = browser.post("/admin/password-reset", data=form)
    assert done.status_code == 303 and done.location.endswith("/admin/login?reset=1")
    assert b"Your password is changed" in browser.get("/admin/login?reset=1").data
    assert admin.get("/auth/me").status_code == 401
    login(mail_app.test_client(), "ada@example.com", NEW_PASSWORD)
    used = browser.post("/admin/password-reset", data=form)
    assert used.status_code == 400 and b"invalid, used or expired" in used.data
    events = [e["event"] for e in make_admin("owner").get("/audit-log").json["items"]]
    assert "password.reset" in events and "password_reset.requested" in events


def test_the_console_sign_in_page_leads_to_the_request_page(mail_app, smtp, make_admin):
    """ "Forgot password?" on the sign-in page; the request page answers as the API does (the
    same words for an unknown email, one mail for an administrator, none for a customer)."""
    make_admin("admin", email="ada@example.com")
    register(mail_app)
    browser = mail_app.test_client()
    assert b'href="/admin/password-reset/request"' in browser.get("/admin/login").data
    assert b'href="/admin/password-reset/request"' in browser.get("/admin/password-reset").data
    page = browser.get("/admin/password-reset/request")
    assert page.status_code == 200 and b'name="email"' in page.data
    answers = [
        browser.post("/admin/password-reset/request", data={"email": email})
        for email in ("ada@example.com", "nobody@example.com", "casey@example.com")
    ]
    assert [a.status_code for a in answers] == [200, 200, 200]
    assert (
        len({a.text for a in answers}) == 1 and "If an account with this email" in answers[0].text
    )
    assert deliver(mail_app) == 1  # the administrator's only: customers reset in the shop
    assert link_in(smtp.messages[0]).startswith("https://shop.example/admin/password-reset?")
    empty = browser.post("/admin/password-reset/request", data={"email": " "})
    assert empty.status_code == 400 and "Enter the email" in empty.text


def test_the_console_and_the_api_share_one_request_budget(make_app):
    app = make_app(RATELIMIT_ENABLED=True)
    client = app.test_client()
    for number in range(3):
        body = {"email": f"someone-{number}@example.com", "kind": "admin"}
        assert client.post("/auth/password-reset", json=body).status_code == 202
    for number in range(2):
        form = {"email": f"other-{number}@example.com"}
        assert client.post("/admin/password-reset/request", data=form).status_code == 200
    refused = client.post("/admin/password-reset/request", data={"email": "more@example.com"})
    assert refused.status_code == 429 and "Retry-After" in refused.headers
    assert client.post("/auth/password-reset", json={"email": "x@example.com"}).status_code == 429


def test_a_reset_lifts_the_sign_in_lockout(mail_app, smtp):
    register(mail_app)
    for _ in range(10):
        wrong = {"email": "casey@example.com", "password": "not the password"}
        assert mail_app.test_client().post("/auth/login", json=wrong).status_code == 401
    right = {"email": "casey@example.com", "password": PASSWORD}
    assert mail_app.test_client().post("/auth/login", json=right).status_code == 401
    mail_app.test_client().post("/auth/password-reset", json={"email": "casey@example.com"})
    deliver(mail_app)
    body = {"token": token_of(link_in(smtp.messages[0])), "new_password": NEW_PASSWORD}
    assert mail_app.test_client().post("/auth/password-reset/confirm", json=body).status_code == 204
    login(mail_app.test_client(), "casey@example.com", NEW_PASSWORD)


def test_a_customers_reset_leaves_an_administrators_lockout_with_the_same_email(
    mail_app, smtp, make_admin
):
    """Issue 22: the reset of a customer registered with an administrator's email lifts the
    customer's lockout only, never the administrator's."""
    admin = make_admin("editor")
    email = admin.email
    register(mail_app, email)
    wrong = {"email": email, "password": "not the password", "kind": "admin"}
    for _ in range(10):
        assert mail_app.test_client().post("/auth/login", json=wrong).status_code == 401
    mail_app.test_client().post("/auth/password-reset", json={"email": email})
    deliver(mail_app)
    body = {"token": token_of(link_in(smtp.messages[0])), "new_password": NEW_PASSWORD}
    assert mail_app.test_client().post("/auth/password-reset/confirm", json=body).status_code == 204
    right = {"email": email, "password": PASSWORD, "kind": "admin"}
    assert mail_app.test_client().post("/auth/login", json=right).status_code == 401


@pytest.mark.parametrize("kind", ["customer", "admin"])
def test_without_a_public_url_a_forged_host_never_reaches_the_link(
    make_app, make_admin, caplog, kind
):
    """Issue 22: without SHOP_PUBLIC_URL (development: mail goes to the log) the link is
    built from 127.0.0.1 and PORT, never from the request's Host header."""
    import logging

    app = make_app(PORT=8123)
    email = make_admin("editor").email if kind == "admin" else "casey@example.com"
    if kind == "customer":
        register(app, email)
    forged = {"Host": "attacker.example", "X-Forwarded-Host": "attacker.example"}
    asked = app.test_client().post(
        "/auth/password-reset", json={"email": email, "kind": kind}, headers=forged
    )
    assert asked.status_code == 202
    with caplog.at_level(logging.INFO, logger="shop.mail"):
        assert deliver(app) == 1
    text = caplog.text
    assert "attacker.example" not in text
    page = "/admin/password-reset" if kind == "admin" else "/store/account/password-reset"
    assert f"http://127.0.0.1:8123{page}?token=" in text


def test_reset_mail_text_names_the_shop(mail_app, smtp):
    from tests.orders_helpers import set_setting

    set_setting(mail_app, "shop_name", "Tea & Co")
    register(mail_app)
    mail_app.test_client().post("/auth/password-reset", json={"email": "casey@example.com"})
    deliver(mail_app)
    (message,) = smtp.messages
    assert "Tea & Co" in text_of(message) and "Tea &amp; Co" in html_of(message)
    assert message["From"].startswith('"Tea & Co"') or message["From"].startswith("Tea & Co")
