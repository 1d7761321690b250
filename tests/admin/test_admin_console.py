"""The admin console (issue 7) through the test client: the same rules as the JSON API,
errors as pages, CSRF on every form, a secret in exactly one response."""

import re

import pytest
from admin_helpers import console_client, create_key, hidden_fields, secret_in, submit
from conftest import PASSWORD

CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; frame-ancestors 'none';"
    " form-action 'self'"
)


@pytest.fixture
def owner(app, owner_client):
    """The owner, signed in to the console."""
    return console_client(app, owner_client.email)


def key_total(owner_client) -> int:
    return owner_client.get("/api-keys").json["total"]


def test_anonymous_visitors_are_sent_to_the_sign_in_page(client):
    response = client.get("/admin/api-keys")
    assert response.status_code == 303
    assert response.headers["Location"] == "/admin/login?next=/admin/api-keys"
    page = client.get("/admin/login?next=/admin/api-keys")
    assert page.status_code == 200
    assert page.mimetype == "text/html"
    assert 'name="next" value="/admin/api-keys"' in page.text


def test_sign_in_lands_on_the_page_asked_for_and_never_elsewhere(app, owner_client):
    client = app.test_client()
    response = submit(
        client,
        "/admin/login?next=/admin/sessions",
        "/admin/login",
        email="OWNER@example.com",
        password=PASSWORD,
    )
    assert response.status_code == 303
    assert response.headers["Location"] == "/admin/sessions"
    assert "shop_admin_session=" in " ".join(response.headers.getlist("Set-Cookie"))
    other = app.test_client()
    response = submit(
        other,
        "/admin/login",
        "/admin/login",
        email=owner_client.email,
        password=PASSWORD,
        next="//evil.example/admin",
    )
    assert response.headers["Location"] == "/admin/"


def test_a_wrong_password_is_shown_on_the_form_not_as_json(client, owner_client):
    response = submit(
        client, "/admin/login", "/admin/login", email=owner_client.email, password="wrong one"
    )
    assert response.status_code == 401
    assert response.mimetype == "text/html"
    assert "Invalid email or password." in response.text
    assert f'value="{owner_client.email}"' in response.text
    assert client.get("/auth/me").status_code == 401


def test_customers_cannot_sign_in_or_reach_the_console(app, make_customer):
    customer = make_customer(email="buyer@example.com")
    response = customer.get("/admin/api-keys")
    assert response.status_code == 303
    assert response.headers["Location"].startswith("/admin/login")
    page = customer.get("/admin/login")
    assert "customer accounts cannot sign in here" in page.text
    response = submit(
        app.test_client(),
        "/admin/login",
        "/admin/login",
        email="buyer@example.com",
        password=PASSWORD,
    )
    assert response.status_code == 403  # their own password: told where they are
    assert "That is a customer account" in response.text
    assert "shop_admin_session" not in response.headers.get("Set-Cookie", "")
    response = submit(
        app.test_client(),
        "/admin/login",
        "/admin/login",
        email="buyer@example.com",
        password="not the password",
    )
    assert response.status_code == 401
    assert "Invalid email or password." in response.text
    assert "customer account" not in response.text  # nothing said without the password


def test_an_api_key_never_reaches_the_console(make_key):
    key = make_key("read:product")
    response = key.get("/admin/api-keys")
    assert response.status_code == 403
    assert response.mimetype == "text/html"
    assert "not API keys" in response.text
    response = key.post("/admin/api-keys", data={"label": "x", "scopes": "read:product"})
    assert response.status_code == 403
    bad = key.get("/admin/", headers={"Authorization": "Bearer eck_" + "A" * 43})
    assert bad.status_code == 401
    assert bad.mimetype == "text/html"


def test_every_console_page_is_uncached_unframeable_and_without_inline_script(
    client, owner, owner_client
):
    created = create_key(owner)
    key_id = re.search(r'id="key-([0-9a-f]+)"', owner.get("/admin/api-keys").text).group(1)
    pages = [
        client.get("/admin/login"),
        owner.get("/admin/api-keys"),
        owner.get("/admin/api-keys?status=revoked"),
        owner.get("/admin/api-keys/new"),
        owner.get(f"/admin/api-keys/{key_id}/revoke"),
        owner.get("/admin/sessions"),
        owner.get("/admin/no-such-page"),
        owner.get("/admin/static/admin.css"),
        created,
    ]
    for response in pages:
        assert response.headers["Cache-Control"] == "no-store", response.request.path
        assert response.headers["X-Frame-Options"] == "DENY"
        assert response.headers["Content-Security-Policy"] == CSP
        assert "unsafe-inline" not in response.headers["Content-Security-Policy"]
        if response.mimetype == "text/html":
            assert "<script>" not in response.text and " on" + "click=" not in response.text
            assert "<style" not in response.text and "style=" not in response.text
    assert pages[6].status_code == 404 and pages[6].mimetype == "text/html"


def test_an_address_or_method_the_console_does_not_have_is_a_page_not_json(owner):
    for response, status in [
        (owner.get("/admin/no-such-page"), 404),
        (owner.delete("/admin/api-keys"), 405),
        (owner.put("/admin/login"), 405),
    ]:
        assert response.status_code == status, response.request.path
        assert response.mimetype == "text/html"
        assert response.headers["Cache-Control"] == "no-store"
        assert response.headers["Content-Security-Policy"] == CSP
        assert "Back to the console" in response.text
    assert set(response.headers["Allow"].split(", ")) == {"GET", "HEAD", "OPTIONS", "POST"}
    api = owner.delete("/products")
    assert api.status_code == 405 and api.json == {
        "message": "Method DELETE is not allowed on /products."
    }


def test_an_administrator_without_api_key_create_gets_no_form_and_403_posting_it(
    app, make_admin, owner_client
):
    reader = make_admin("support", permissions=["api_key.read"])
    console = console_client(app, reader.email)
    keys_page = console.get("/admin/api-keys")
    assert keys_page.status_code == 200
    assert "/admin/api-keys/new" not in keys_page.text
    assert 'action="/admin/api-keys"' not in keys_page.text
    refused = console.get("/admin/api-keys/new")
    assert refused.status_code == 403
    assert "api_key.create" in refused.text
    before = key_total(owner_client)
    form = hidden_fields(keys_page.text)  # a valid CSRF token of this session
    posted = console.post(
        "/admin/api-keys",
        data={**form, "label": "sneaky", "scopes": ["read:product"], "key_id": "0" * 24},
    )
    assert posted.status_code == 403
    assert posted.mimetype == "text/html"
    assert key_total(owner_client) == before
    # The JSON API says the same.
    assert (
        reader.post("/api-keys", json={"label": "x", "scopes": ["read:product"]}).status_code == 403
    )


def test_each_administrator_lands_where_their_permissions_lead(app, make_admin, owner_client):
    """Who may read orders lands on the dashboard; anyone else on their first usable link
    (an editor: the catalogue's; a clerk who may read customers: the customers); one with no
    page of their own on their sessions (issue 37)."""
    from shop.admin import nav

    support = console_client(app, make_admin("support").email)
    home = support.get("/admin/")
    assert home.status_code == 200 and "<h1>Dashboard</h1>" in home.text
    assert support.get("/admin/api-keys").status_code == 403
    editor = console_client(app, make_admin("editor").email)
    landing = editor.get("/admin/")
    assert landing.status_code == 303 and landing.headers["Location"] != "/admin/"
    assert editor.get(landing.headers["Location"]).status_code == 200
    with app.test_request_context():
        from flask import url_for

        links = [link for link in nav.CATALOGUE if "products" in link.endpoint]
        expected = url_for(links[0].endpoint) if links else "/admin/api-keys"
    assert landing.headers["Location"] == expected
    assert "/admin/orders" not in editor.get(landing.headers["Location"]).text
    role = {"name": "clerk", "permissions": ["customers.read"]}
    assert owner_client.post("/roles", json=role).status_code == 201
    clerk = console_client(app, make_admin("clerk").email)
    assert clerk.get("/admin/").headers["Location"] == "/admin/customers"  # their one page
    role = {"name": "auditor", "permissions": ["audit.read"]}  # no console page of its own
    assert owner_client.post("/roles", json=role).status_code == 201
    auditor = console_client(app, make_admin("auditor").email)
    assert auditor.get("/admin/").headers["Location"] == "/admin/sessions"
    refused = clerk.get("/admin/orders")
    assert refused.status_code == 403 and 'id="needed-permission"' in refused.text
    assert "<code>orders.read</code>" in refused.text


def test_one_permission_check_says_the_same_in_the_console_the_api_and_a_view(
    app, make_admin, make_key
):
    """The 403 of a missing permission is one function's: a route guard, a console page and a
    view's further check (content sync, order reads) answer the same words."""
    import html

    support = make_admin("support")
    console = console_client(app, support.email)
    needed = "Access denied: this needs the permission api_key.read."
    assert support.get("/api-keys").json["message"] == needed  # the route guard
    page = console.get("/admin/api-keys")
    assert page.status_code == 403 and needed in html.unescape(page.text)  # the console
    editor = make_admin("editor")
    assert editor.get("/orders").json["message"] == (
        "Access denied: this needs the permission orders.read."
    )
    key = make_key("read:product")
    refused = key.get("/orders")
    assert refused.status_code == 403
    assert refused.json["message"] == "Access denied: this API key needs the scope read:order."
    cases = 0
    from shop.auth.caller import Caller, require
    from shop.errors import Forbidden

    reader = Caller(kind="admin", id="x", permissions=frozenset({"content.read"}))
    key_caller = Caller(
        kind="api_key", id="k", permissions=frozenset(), scopes=frozenset({"read:content"})
    )
    for caller, kwargs, message in (
        (reader, {}, "Access denied: this needs the permission content.delete."),
        (
            reader,
            {"purpose": "prune entries"},
            "Access denied: to prune entries this needs the permission content.delete.",
        ),
        (key_caller, {}, "Access denied: this API key needs the scope write:content."),
    ):
        with pytest.raises(Forbidden) as refused_here:
            require(caller, "content.delete", **kwargs)
        assert refused_here.value.message == message
        cases += 1
    assert cases == 3
    require(
        Caller(kind="admin", id="x", permissions=frozenset({"content.delete"})), "content.delete"
    )


def test_forged_posts_without_the_csrf_token_are_refused(app, owner, owner_client):
    new_form = hidden_fields(owner.get("/admin/api-keys/new").text)
    forged = {k: v for k, v in new_form.items() if k != "csrf_token"}
    before = key_total(owner_client)
    response = owner.post(
        "/admin/api-keys", data={**forged, "label": "forged", "scopes": ["read:product"]}
    )
    assert response.status_code == 403
    assert response.mimetype == "text/html"
    assert "did not come from this console" in response.text
    # Another session's token is worth nothing here either.
    other = console_client(app, owner_client.email, user_agent="another browser")
    other_token = hidden_fields(other.get("/admin/api-keys/new").text)["csrf_token"]
    response = owner.post(
        "/admin/api-keys",
        data={**forged, "csrf_token": other_token, "label": "forged", "scopes": ["read:product"]},
    )
    assert response.status_code == 403
    assert key_total(owner_client) == before

    key = owner_client.post("/api-keys", json={"label": "k", "scopes": ["read:product"]}).json
    assert owner.post(f"/admin/api-keys/{key['id']}/revoke").status_code == 403
    assert owner_client.get(f"/api-keys/{key['id']}").json["status"] == "active"
    assert owner.post("/admin/logout").status_code == 403
    assert owner.post("/admin/sessions/end-others").status_code == 403
    assert owner.get("/admin/api-keys").status_code == 200  # still signed in
    # The sign-in form is protected too (against signing a victim into another account).
    fresh = app.test_client()
    fresh.get("/admin/login")
    response = fresh.post("/admin/login", data={"email": owner_client.email, "password": PASSWORD})
    assert response.status_code == 403
    assert "shop_admin_session=" not in " ".join(response.headers.getlist("Set-Cookie"))


def test_the_secret_appears_in_exactly_one_response(app, owner, owner_client):
    responses = []
    new_page = owner.get("/admin/api-keys/new")
    form = {
        **hidden_fields(new_page.text),
        "label": "deploy bot",
        "scopes": ["read:product", "write:content"],
        "expires_at": "2099-01-31",
    }
    created = owner.post("/admin/api-keys", data=form)
    assert created.status_code == 200
    assert "cannot be shown again" in created.text
    secret = secret_in(created.text)
    responses.append(owner.post("/admin/api-keys", data=form))  # reload = resubmitting
    assert responses[-1].status_code == 409
    assert "already created" in responses[-1].text
    key_id = form["key_id"]
    for path in (
        "/admin/api-keys",
        "/admin/api-keys/new",
        f"/admin/api-keys/{key_id}/revoke",
        "/admin/sessions",
        "/admin/",
    ):
        responses.append(owner.get(path))
    responses.append(owner_client.get("/api-keys"))
    responses.append(owner_client.get(f"/api-keys/{key_id}"))
    for response in responses:
        assert secret not in response.get_data(as_text=True)
        assert secret not in str(response.headers)
    assert secret not in str(created.headers)
    assert created.text.count(secret) == 1
    assert created.headers["Cache-Control"] == "no-store"
    # One key, made by this form, holding the secret.
    record = owner_client.get(f"/api-keys/{key_id}").json
    assert record["scopes"] == ["read:product", "write:content"]
    assert record["expires_at"] == "2099-01-31T00:00:00.000000Z"
    assert record["owner"]["email"] == owner_client.email
    assert key_total(owner_client) == 1
    me = app.test_client()
    me.environ_base["HTTP_AUTHORIZATION"] = f"Bearer {secret}"
    assert me.get("/users").status_code == 403  # authenticated, but out of its scopes


def test_the_form_shows_only_grantable_scopes_and_the_api_ceiling_holds(app, make_admin):
    editor = make_admin("editor")
    console = console_client(app, editor.email)
    page = console.get("/admin/api-keys/new").text
    offered = set(re.findall(r'name="scopes" value="([a-z:_]+)"', page))
    assert offered == {
        f"{action}:{resource}"
        for action in ("read", "write")
        for resource in ("product", "category", "collection", "content", "discount")
    }
    response = create_key(console, scopes=["read:product", "write:order"])
    assert response.status_code == 403
    assert "you cannot grant the scope write:order" in response.text
    assert 'value="read:product" checked' in response.text  # the form keeps what was typed
    assert editor.get("/api-keys").json["total"] == 0


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"scopes": []}, "Give at least one scope"),
        ({"label": ""}, "Label: "),
        ({"label": "x" * 101}, "Label: "),
        ({"expires_at": "2001-01-01"}, "Expires on: must be in the future."),
        ({"expires_at": "soon"}, "Expires on: use an ISO 8601 date"),
        ({"scopes": ["write:api_key"]}, "api_key is not a scopable resource"),
    ],
)
def test_bad_input_is_shown_on_the_form(owner, owner_client, fields, message):
    values = {"label": "ci", "scopes": ["read:product"], "expires_at": "", **fields}
    response = create_key(owner, **values)
    assert response.status_code == 400
    assert response.mimetype == "text/html"
    assert message in response.text
    assert not re.search(r'id="form-error">[a-z_]+: ', response.text)  # written for people
    assert key_total(owner_client) == 0


def test_each_administrator_sees_their_keys_and_the_owner_sees_all(app, owner, make_admin):
    alice = make_admin("admin")
    bob = make_admin("admin")
    alice.post("/api-keys", json={"label": "alice key", "scopes": ["read:product"]})
    bob.post("/api-keys", json={"label": "bob key", "scopes": ["read:order"]})
    with app.app_context():
        result = app.test_cli_runner().invoke(
            args=["api-keys", "create", "--name", "bootstrap", "--scopes", "read:product"]
        )
    assert result.exit_code == 0, result.output

    alice_page = console_client(app, alice.email).get("/admin/api-keys").text
    assert "alice key" in alice_page
    assert "bob key" not in alice_page and "bootstrap" not in alice_page
    assert ">Owner</th>" not in alice_page

    owner_page = owner.get("/admin/api-keys").text
    for label in ("alice key", "bob key", "bootstrap"):
        assert label in owner_page
    assert alice.email in owner_page and bob.email in owner_page
    assert '<span class="tag cli">CLI</span>' in owner_page

    bob_key = bob.get("/api-keys").json["items"][0]["id"]
    alice_console = console_client(app, alice.email, user_agent="alice")
    assert alice_console.get(f"/admin/api-keys/{bob_key}/revoke").status_code == 404
    refused = submit(alice_console, "/admin/api-keys", f"/admin/api-keys/{bob_key}/revoke")
    assert refused.status_code == 404
    assert bob.get(f"/api-keys/{bob_key}").json["status"] == "active"


def test_dormant_and_expired_keys_stand_out_and_last_use_shows(
    app, owner, owner_client, make_key, clock
):
    tomorrow = clock.moment.date().isoformat()  # expires at the next midnight or so
    used = make_key("read:product", label="busy key")
    make_key("read:product", label="idle key")
    owner_client.post(
        "/api-keys",
        json={
            "label": "short key",
            "scopes": ["read:product"],
            "expires_at": f"{tomorrow}T23:59:59Z",
        },
    )
    used.get("/products")  # a request the key may make is a use (a refused one is not)
    page = owner.get("/admin/api-keys").text
    busy = _row(page, "busy key")
    assert "just now" in busy and "never" not in busy.split('class="last-used"')[1][:80]
    assert re.search(
        r'<span class="exact"><span>\d{4}-\d\d-\d\d</span> <span>\d\d:\d\d UTC</span></span>', busy
    )
    assert "never" in _row(page, "idle key").split('class="last-used"')[1][:80]

    clock.advance(31 * 86400)
    used.get("/products")
    page = console_client(app, owner_client.email).get("/admin/api-keys").text
    assert "tag dormant" in _row(page, "idle key")
    assert "is-dormant" in _row(page, "idle key")
    assert "tag dormant" not in _row(page, "busy key")
    assert "tag expired" in _row(page, "short key")
    assert "status-expired" in _row(page, "short key")
    assert "Revoke" in _row(page, "short key")  # expired keys stay revocable
    console = console_client(app, owner_client.email)
    assert console.delete(f"/api-keys/{used.key['id']}").status_code == 204
    page = console.get("/admin/api-keys").text
    assert re.search(
        r"revoked <time[^>]*>just now</time> <span class=\"exact\">\(<span>\d{4}-",
        _row(page, "busy key"),
    )


# The exact time shown beside a relative one, to the minute.
EXACT_MINUTE = r'<span class="exact"><span>\d{4}-\d\d-\d\d</span> <span>\d\d:\d\d UTC</span></span>'


def _row(page: str, label: str) -> str:
    """The table row of the key labelled ``label``."""
    for row in page.split("<tr ")[1:]:
        if f">{label}</th>" in row:
            return row.split("</tr>")[0]
    raise AssertionError(f"no row for {label}")


def test_revoking_from_the_console_refuses_the_key_at_once(owner, make_key):
    key = make_key("read:product", label="to revoke")
    key_id = key.key["id"]
    confirm = owner.get(f"/admin/api-keys/{key_id}/revoke")
    assert "cannot be undone" in confirm.text
    response = owner.post(f"/admin/api-keys/{key_id}/revoke", data=hidden_fields(confirm.text))
    assert response.status_code == 303
    listed = owner.get(response.headers["Location"]).text
    assert "Revoked “to revoke”" in listed
    assert "tag revoked" in _row(listed, "to revoke")
    assert "Revoke<" not in _row(listed, "to revoke")
    assert key.get("/users").status_code == 401


def test_my_sessions_sign_out_one_or_all_others(app, owner_client, make_admin):
    laptop = console_client(app, owner_client.email, user_agent="Laptop browser")
    phone = console_client(app, owner_client.email, user_agent="Phone browser")
    page = laptop.get("/admin/sessions").text
    assert "Laptop browser" in page and "Phone browser" in page
    assert page.count('class="tag active">this session') == 1

    phone_id = phone.get("/auth/sessions").json["items"]
    phone_id = next(s["id"] for s in phone_id if s["current"])
    response = laptop.post(f"/admin/sessions/{phone_id}/end", data=hidden_fields(page))
    assert response.status_code == 303
    assert phone.get("/admin/api-keys").status_code == 303  # back to the sign-in page

    # Someone else's session is not found, and stays.
    other = make_admin("admin")
    other_id = other.get("/auth/sessions").json["items"][0]["id"]
    response = laptop.post(f"/admin/sessions/{other_id}/end", data=hidden_fields(page))
    assert response.status_code == 404
    assert other.get("/auth/me").status_code == 200

    response = laptop.post("/admin/sessions/end-others", data=hidden_fields(page))
    assert response.headers["Location"] == "/admin/sessions?ended=1"  # the JSON client's
    assert owner_client.get("/auth/me").status_code == 401
    assert laptop.get("/admin/sessions?ended=1").status_code == 200

    response = laptop.post("/admin/logout", data=hidden_fields(page))
    assert response.headers["Location"] == "/admin/login?signed_out=1"
    assert "You are signed out." in laptop.get(response.headers["Location"]).text
    assert laptop.get("/admin/api-keys").status_code == 303


def test_session_buttons_say_which_session_and_times_are_shown_in_full(app, owner_client):
    laptop = console_client(app, owner_client.email, user_agent="Laptop browser")
    console_client(app, owner_client.email, user_agent="Phone browser")
    page = laptop.get("/admin/sessions").text
    names = re.findall(r"Sign out this session<span class=\"visually-hidden\">([^<]*)</span>", page)
    assert len(names) == 3 and len(set(names)) == 3  # the API's, the laptop's, the phone's
    assert names[0].startswith(" (session 1 of 3): ")
    assert re.search(
        r'<span class="exact"><span>\d{4}-\d\d-\d\d</span> <span>\d\d:\d\d UTC</span></span>', page
    )


def test_console_and_api_sign_in_share_one_rate_limit(make_app, owner_client):
    import secrets

    app = make_app(RATELIMIT_ENABLED=True, RATELIMIT_KEY_PREFIX=secrets.token_hex(6))
    client = app.test_client()
    for _ in range(4):
        client.post("/auth/login", json={"email": owner_client.email, "password": "bad"})
    assert (
        submit(
            client, "/admin/login", "/admin/login", email=owner_client.email, password="bad"
        ).status_code
        == 401
    )
    response = submit(
        client, "/admin/login", "/admin/login", email=owner_client.email, password=PASSWORD
    )
    assert response.status_code == 429
    assert response.mimetype == "text/html"
    assert "Too many requests" in response.text


def test_rolling_from_the_console_reveals_the_successor_once(app, owner, make_key, clock):
    key = make_key("read:product", label="feed")
    url = f"/admin/api-keys/{key.key['id']}/roll"
    assert f'href="{url}"' in _row(owner.get("/admin/api-keys").text, "feed")
    confirm = owner.get(url)
    assert confirm.status_code == 200
    assert 'value="86400" checked' in confirm.text and 'value="0"' in confirm.text
    bad = owner.post(url, data={**hidden_fields(confirm.text), "grace_seconds": "5"})
    assert bad.status_code == 400
    assert key_total_of(app, owner) == 1
    rolled = owner.post(url, data={**hidden_fields(confirm.text), "grace_seconds": "3600"})
    assert rolled.status_code == 200
    assert "Key “feed” rolled" in rolled.text and "keeps working until" in rolled.text
    secret = secret_in(rolled.text)
    new = app.test_client()
    new.environ_base["HTTP_AUTHORIZATION"] = f"Bearer {secret}"
    assert new.get("/products").status_code == 200
    assert key.get("/products").status_code == 200  # within the grace period
    again = owner.post(url, data={**hidden_fields(confirm.text), "grace_seconds": "0"})
    assert again.status_code == 409 and "already rolled" in again.text
    page = owner.get("/admin/api-keys").text
    assert secret not in page
    old_row = page.split(f'id="key-{key.key["id"]}"')[1].split("</tr>")[0]
    assert "rolled: works until its grace ends" in old_row and "Roll<" not in old_row
    clock.advance(3601)
    assert key.get("/products").status_code == 401
    assert new.get("/products").status_code == 200


def key_total_of(app, owner) -> int:
    from shop import db

    with app.app_context():
        return db.value("SELECT COUNT(*) FROM api_keys")


def test_the_console_shows_the_last_address_and_when_a_dormant_key_expires(
    app, owner_client, make_key, clock
):
    used = make_key("read:product", label="busy key")
    make_key("read:product", label="idle key")
    used.get("/products", environ_base={"REMOTE_ADDR": "198.51.100.4"})
    clock.advance(31 * 86400)
    used.get("/products", environ_base={"REMOTE_ADDR": "198.51.100.4"})
    page = console_client(app, owner_client.email).get("/admin/api-keys").text
    busy = _row(page, "busy key").split('class="last-used"')[1].split("</td>")[0]
    assert "from <code>198.51.100.4</code>" in busy  # in the cell, not only in a tooltip
    idle = _row(page, "idle key")
    assert "tag dormant" in idle and "expires unused in 59 days" in idle
    clock.advance(59 * 86400 + 1)
    page = console_client(app, owner_client.email).get("/admin/api-keys").text
    idle = _row(page, "idle key")
    assert "tag expired" in idle and "unused for 90 days" in idle
    assert "Roll<" not in idle and "Revoke<" in idle


@pytest.mark.parametrize("allow_http", [False, True])
def test_the_new_webhook_hint_says_which_urls_this_shop_accepts(make_app, allow_http):
    app = make_app(WEBHOOKS_ALLOW_HTTP=allow_http)
    with app.app_context():
        from shop.auth.users import create_user

        create_user("o@example.com", "O", PASSWORD, "owner")
    page = console_client(app, "o@example.com").get("/admin/webhooks/new").text
    assert ("An https or http URL" in page) is allow_http
    assert ("An https URL" in page) is not allow_http
    assert 'id="url" name="url" type="url"' in page
