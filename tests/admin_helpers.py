"""Helpers for the admin console tests: sign in through the HTML form, post forms with their
hidden fields, as a browser would."""

import re

from conftest import PASSWORD

_HIDDEN = re.compile(r'<input type="hidden" name="([a-z_]+)" value="([^"]*)">')


def hidden_fields(html: str) -> dict:
    """The hidden inputs of a page (the last one wins when several forms share a name)."""
    return dict(_HIDDEN.findall(html))


def console_client(app, email, password=PASSWORD, user_agent="console-test"):
    """A test client signed in through ``/admin/login``."""
    client = app.test_client()
    client.environ_base["HTTP_USER_AGENT"] = user_agent
    response = submit(client, "/admin/login", "/admin/login", email=email, password=password)
    assert response.status_code == 303, response.text
    return client


def submit(client, page, action, **fields):
    """GET ``page``, then POST ``action`` with its hidden fields plus ``fields``."""
    shown = client.get(page)
    assert shown.status_code == 200, shown.text
    return client.post(action, data={**hidden_fields(shown.text), **fields})


def create_key(client, label="ci", scopes=("read:product", "write:content"), expires_at=""):
    """Post the create form; answer the response (the reveal page when it worked)."""
    return submit(
        client,
        "/admin/api-keys/new",
        "/admin/api-keys",
        label=label,
        scopes=list(scopes),
        expires_at=expires_at,
    )


def secret_in(html: str) -> str:
    """The secret shown on a reveal page."""
    return re.search(r'id="secret" readonly value="(eck_[A-Za-z0-9_-]{43})"', html).group(1)
