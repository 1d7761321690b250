"""The ``RateLimit`` and ``RateLimit-Policy`` response fields (draft-ietf-httpapi-ratelimit-
headers-10) on limited routes and on a limited key's answers: they count down, name the
policy, agree with ``Retry-After`` on the 429 and come back when the window moves on. Through
HTTP, on both engines, with the limits counted in memory and in Redis."""

import re
import secrets
import time
import types

import pytest

from tests.auth.test_api_key_controls import bearer, create, owned_app
from tests.conftest import REDIS_URL

FIELD = re.compile(r'"([^"]+)";r=(\d+);t=(\d+)')


@pytest.fixture(params=["memory", "redis"])
def limited(request, make_app):
    """A function building an app with limits on, counted in memory or in Redis."""
    overrides = {"RATELIMIT_ENABLED": True, "RATELIMIT_KEY_PREFIX": f"rl-{secrets.token_hex(6)}"}
    if request.param == "redis":
        if not REDIS_URL:
            pytest.skip("Redis case: SHOP_TEST_REDIS_URL is not set")
        overrides["REDIS_URL"] = REDIS_URL
    # One limiter serves every app of the process, enabled or not by the last one built: the
    # first app of a run may build the SQLite template (limits off) after itself.
    make_app()
    return lambda: owned_app(make_app, **overrides)


def state(response) -> dict:
    """``RateLimit``'s policies: name -> (r, t)."""
    return {n: (int(r), int(t)) for n, r, t in FIELD.findall(response.headers["RateLimit"])}


def later(monkeypatch, seconds: float) -> None:
    """Move the limits' clock (limits' memory storage and the shop's window reading) on."""
    import limits.storage.memory

    from shop.http import limit_windows

    shifted = types.SimpleNamespace(time=lambda: time.time() + seconds)
    monkeypatch.setattr(limits.storage.memory, "time", shifted)
    monkeypatch.setattr(limit_windows, "time", shifted)


def test_a_route_limit_counts_down_refuses_with_the_same_wait_and_comes_back(limited, monkeypatch):
    app, _owner = limited()
    client = app.test_client()
    seen = []
    for _ in range(10):  # anonymous checkouts are refused (401) and still count
        response = client.post("/payments/checkout", json={})
        assert response.status_code == 401
        assert response.headers["RateLimit-Policy"] == '"route";q=10;w=60'
        seen.append(state(response)["route"])
    assert [r for r, _ in seen] == list(range(9, -1, -1))
    assert all(55 <= t <= 60 for _, t in seen)
    later(monkeypatch, 30)  # half the window on: the first request ages out in ~30 s
    refused = client.post("/payments/checkout", json={})
    assert refused.status_code == 429
    remaining, wait = state(refused)["route"]
    assert remaining == 0 and 25 <= wait <= 31
    assert abs(int(refused.headers["Retry-After"]) - wait) <= 1
    # Another address has its own window; a route without a limit has no fields.
    other = client.post("/payments/checkout", json={}, environ_base={"REMOTE_ADDR": "10.9.9.9"})
    assert state(other)["route"][0] == 9
    assert "RateLimit" not in client.get("/products").headers
    later(monkeypatch, 61)  # the window has moved past every request
    back = client.post("/payments/checkout", json={})
    assert back.status_code == 401 and state(back)["route"][0] == 9


def test_a_keys_own_limit_is_a_policy_on_every_answer(limited, monkeypatch):
    app, owner = limited()
    key = create(owner, rate_limit_per_minute=3)
    client = bearer(app, key["secret"])
    answers = [client.get("/products") for _ in range(3)]
    assert [a.status_code for a in answers] == [200] * 3
    assert {a.headers["RateLimit-Policy"] for a in answers} == {'"api-key";q=3;w=60'}
    assert [state(a)["api-key"][0] for a in answers] == [2, 1, 0]
    refused = client.get("/products")
    assert refused.status_code == 429
    assert state(refused)["api-key"][0] == 0
    assert abs(int(refused.headers["Retry-After"]) - state(refused)["api-key"][1]) <= 1
    # A limited route asked with a limited key: both policies, each its own count.
    later(monkeypatch, 61)
    quote = client.post("/payments/quote", json={})
    assert quote.status_code == 400
    assert quote.headers["RateLimit-Policy"] == '"api-key";q=3;w=60, "route";q=60;w=60'
    assert {n: r for n, (r, _t) in state(quote).items()} == {"api-key": 2, "route": 59}
    # A key without a limit on an unlimited route: no fields.
    free = bearer(app, create(owner, label="free")["secret"])
    assert "RateLimit-Policy" not in free.get("/products").headers


def test_a_scope_with_two_windows_names_both(limited):
    app, _owner = limited()
    response = app.test_client().post("/auth/password-reset", json={"email": "x@example.com"})
    assert response.headers["RateLimit-Policy"] == (
        '"password-reset-request";q=5;w=60, "password-reset-request-3600";q=20;w=3600'
    )
    assert state(response) == {
        "password-reset-request": (4, state(response)["password-reset-request"][1]),
        "password-reset-request-3600": (19, state(response)["password-reset-request-3600"][1]),
    }


def test_openapi_documents_the_fields_on_limited_operations(make_app):
    spec = make_app().test_client().get("/openapi.json").json
    checkout = spec["paths"]["/payments/checkout"]["post"]["responses"]
    assert {"RateLimit", "RateLimit-Policy"} <= set(checkout["201"]["headers"])
    assert checkout["429"] == {"$ref": "#/components/responses/TooManyRequests"}
    too_many = spec["components"]["responses"]["TooManyRequests"]["headers"]
    assert {"Retry-After", "RateLimit", "RateLimit-Policy"} <= set(too_many)
    unlimited = spec["paths"]["/products"]["get"]["responses"]["200"]
    assert "RateLimit" not in unlimited.get("headers", {})
