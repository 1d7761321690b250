"""The request hooks that load the caller into ``g.caller`` and keep session cookies fresh.

A ``Bearer`` Authorization header is an API key and the cookies are then ignored; a bad key
is a 401 on every route. Otherwise the administrator cookie, then the customer cookie, is
resolved; a stale cookie leaves the caller anonymous and is cleared in the response.
"""

import logging

from flask import current_app, g, redirect, request, url_for
from limits import RateLimitItemPerMinute

from shop.actor import Actor
from shop.auth import sessions
from shop.auth.keys import bearer as api_keys
from shop.errors import Throttled
from shop.http import limit_windows
from shop.http.errors import abort
from shop.http.extensions import limiter

log = logging.getLogger("shop")

# Endpoints that never need to know who is calling.
ANONYMOUS_ENDPOINTS = frozenset(
    {
        "static",
        "admin.static",
        "swagger_ui_assets",
        "favicon",
        "service.index",
        "health.healthz",
        "health.readyz",
        "health.metrics_page",
        "api-docs.openapi_json",
        "api-docs.openapi_swagger_ui",
    }
)


def load_caller() -> None:
    """before_request: resolve the API key or session of the request, if any."""
    # The request and ``g`` found once (each use of a proxy looks its context up again).
    req = request._get_current_object()
    state = g._get_current_object()
    state.caller = None
    state.auth_problem = None
    state.stale_cookies = []
    if req.endpoint in ANONYMOUS_ENDPOINTS:
        return
    # An empty header carries no credential: a generated client typed for keys then signs in
    # with its cookie (docs/openapi.md). Read from the WSGI environ, as ``request.headers``
    # would read it, and the cookies parsed only when there are some: every request runs this.
    environ = req.environ
    header = environ.get("HTTP_AUTHORIZATION", "").strip()
    if header:
        scheme, _, credentials = header.partition(" ")
        if scheme.lower() != "bearer":
            abort(
                401,
                "Unsupported Authorization scheme: send 'Bearer eck_...' with an API key.",
                {"WWW-Authenticate": 'Bearer realm="shop"'},
            )
        state.caller = api_keys.resolve(
            credentials.strip(),
            _origin_of(environ),
            _note_key_use,
            _key_limit if current_app.config["RATELIMIT_ENABLED"] else None,
        )
        return
    if not environ.get("HTTP_COOKIE"):
        return
    for kind in (sessions.ADMIN, sessions.CUSTOMER):
        token = req.cookies.get(kind.cookie)
        if token is None:
            continue
        found = sessions.resolve(kind, token, _origin_of(environ))
        if found.caller is not None:
            state.caller = found.caller
            if found.renew:
                keep_cookie((kind, token))
            return
        if found.problem:
            state.auth_problem = found.problem
        state.stale_cookies.append(kind)


def origin() -> Actor:
    """The request's address and User-Agent, naming nobody (an anonymous caller).

    Read from the WSGI environ, where ``request.remote_addr`` and ``request.headers`` read
    them (``REMOTE_ADDR`` made canonical by ``shop/http/client_address.py``): every keyed
    or signed-in request runs this.
    """
    return _origin_of(request.environ)


def _origin_of(environ: dict) -> Actor:
    return Actor(ip=environ.get("REMOTE_ADDR"), user_agent=environ.get("HTTP_USER_AGENT", "")[:512])


def current_actor() -> Actor:
    """The request's caller as the audit log names it, or nobody from the request's address."""
    caller = g.get("caller")
    return caller.actor if caller is not None else origin()


def keep_cookie(cookie: tuple) -> None:
    """Set this session cookie (``(kind, token)``) on the response."""
    g.set_session_cookie = cookie


def clear_cookies(kinds) -> None:
    """Clear these session cookies on the response."""
    g.clear_session_cookies = kinds


def _note_key_use(use: list) -> None:
    """Keep the key's use of this request for ``keys.usage``'s after-request count."""
    g.api_key_use = use


def _key_limit(key_id: str, per_minute: int) -> None:
    """429 with Retry-After once the key made ``per_minute`` requests in its window.

    Counted in the rate limiter's storage: Redis (exact across workers and nodes) when
    REDIS_URL is set, else this process's memory. When that storage fails the request goes
    through (logged): a key's own limit is a budget, not a defence of the service.
    """
    item = RateLimitItemPerMinute(per_minute, namespace="api-key")
    prefix = current_app.config["RATELIMIT_KEY_PREFIX"]
    try:
        strategy = limiter.limiter
        if strategy.hit(item, prefix, key_id):
            return
    except Exception:  # noqa: BLE001 - storage down: the key's budget is not enforced
        log.warning("API key limit not checked: rate-limit storage failed", exc_info=True)
        return
    retry = limit_windows.retry_after() or 1  # the window the hit saw (shop/http/limit_windows.py)
    raise Throttled(
        f"This API key's limit of {per_minute} requests per minute is used up: retry in {retry} s.",
        {"Retry-After": str(retry)},
    )


# What an administrator without two-factor sign-in may still do when the shop requires it.
_SETUP_ENDPOINTS = frozenset(
    {
        "auth.Logout",
        "auth.Me",
        "admin.login",
        "admin.logout",
        "admin.static",
        "admin.two_factor",
        "admin.two_factor_setup",
        "admin.two_factor_confirm",
        "admin.two_factor_cancel",
    }
)


def require_two_factor():
    """before_request: while ``require_two_factor`` is on, an administrator signed in without
    two-factor sign-in can only set it up (403 in the API, the set-up page in the console)."""
    caller = g._get_current_object().get("caller")  # one proxy lookup: every request runs this
    if caller is None or not caller.needs_two_factor:
        return None
    endpoint = request.endpoint or ""
    if endpoint in _SETUP_ENDPOINTS or endpoint.startswith("two_factor."):
        return None
    if request.blueprint == "admin":
        return redirect(url_for("admin.two_factor"), 303)
    abort(
        403,
        "Two-factor sign-in is required of administrators: set it up first"
        " (POST /auth/two-factor/setup).",
    )


def session_cookies(response):
    """after_request: set or clear session cookies (shop/http/hooks.py finishes the response)."""
    state = g._get_current_object()  # once, not per attribute
    pending = state.get("set_session_cookie")
    if pending is not None:
        kind, token = pending
        sessions.set_cookie(response, kind, token)
    for kind in state.get("stale_cookies", ()):
        if pending is None or pending[0] is not kind:
            sessions.clear_cookie(response, kind)
    for kind in state.get("clear_session_cookies", ()):
        sessions.clear_cookie(response, kind)
    return response
