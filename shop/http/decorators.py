"""Route guards, named by what they require. Routes are public unless decorated.

A guard runs before anything else of the request's view: ``run_route_guard`` (a
before_request hook) finds it on the view and calls it, so an anonymous or unauthorised
caller gets 401/403 before the body is parsed or a rate limit is counted, whatever the order
of the decorators. The wrapper checks again when called, which costs a set lookup.

Each guard also documents itself in OpenAPI: the security schemes, and the permission and
scope in the operation's description (and in ``x-permission`` / ``x-scopes``).
"""

import functools

from flask import current_app, g, request
from werkzeug.exceptions import HTTPException

from shop.auth.caller import require
from shop.errors import ShopError
from shop.http.errors import abort
from shop.http.extensions import limiter
from shop.http.openapi import add_doc
from shop.permissions import scopes_for

ADMIN_COOKIE = {"adminSession": []}
CUSTOMER_COOKIE = {"customerSession": []}
BEARER = {"apiKey": []}

_KIND_WORDS = {
    "admin": "a signed-in administrator",
    "customer": "a signed-in customer",
    "api_key": "an API key",
}


def _guarded(func, check, **doc):
    """``func`` wrapped to run ``check`` first, found by ``run_route_guard``, documented."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        check()
        return func(*args, **kwargs)

    wrapper._shop_guard = check
    return add_doc(wrapper, **doc)


_SIGN_IN_AS = {"admin": "an administrator", "customer": "a customer"}


def _unauthenticated(keys_refused: str | None = None):
    """401; on a route that never accepts keys, the message says to sign in, not to send one."""
    if keys_refused is None:
        message = "Authentication required: sign in or send an API key."
    else:
        message = f"Authentication required: {keys_refused}"
    abort(401, g.get("auth_problem") or message)


def _keys_refused(kinds, permission: str | None = None) -> str:
    """What a route that never accepts API keys tells a key (403) and the anonymous (401)."""
    who = " or ".join(_SIGN_IN_AS[kind] for kind in kinds if kind in _SIGN_IN_AS)
    if permission and permission.split(".", 1)[0] == "api_key":
        return f"API keys cannot manage API keys; sign in as {who}."
    return f"API keys cannot be used here; sign in as {who}."


def _describe(func, sentence: str) -> str:
    """The docstring's description (after its summary line) followed by ``sentence``."""
    lines = (func.__doc__ or "").strip().splitlines()
    body = "\n".join(line.strip() for line in lines[1:]).strip()
    return f"{body}\n\n{sentence}".strip()


def _signed_in(keys_refused: str | None):
    """The caller: 401 when anonymous, 403 ``keys_refused`` for an API key where keys are
    refused."""
    caller = g.get("caller")
    if caller is None:
        _unauthenticated(keys_refused)
    if caller.kind == "api_key" and keys_refused:
        abort(403, keys_refused)
    return caller


def require_auth(*kinds: str):
    """Any authenticated caller (401 otherwise); with ``kinds``, only those kinds (403)."""
    kinds = kinds or ("admin", "customer", "api_key")
    keys_refused = None if "api_key" in kinds else _keys_refused(kinds)

    def check():
        caller = _signed_in(keys_refused)
        if caller.kind not in kinds:
            abort(403, f"Access denied: this needs {_either(kinds)}.")

    def decorator(func):
        security = []
        if "admin" in kinds:
            security.append(ADMIN_COOKIE)
        if "customer" in kinds:
            security.append(CUSTOMER_COOKIE)
        if "api_key" in kinds:
            security.append(BEARER)
        sentence = f"Requires {_either(kinds)}."
        if keys_refused:
            sentence += " An API key is refused with 403."
        description = _describe(func, sentence)
        return _guarded(func, check, security=security, description=description)

    return decorator


def require_permission(permission: str, *, key_scopes=None, sessions_only: bool = False):
    """A caller holding ``permission`` (401 when anonymous, 403 when lacking it).

    API keys hold a permission through their scopes (``key_scopes`` lists other scopes
    that are accepted instead). ``sessions_only`` (or a permission no scope carries) refuses
    API keys with 403 and a message that says to sign in.
    """
    scopes = () if sessions_only else tuple(key_scopes or scopes_for(permission))
    keys_refused = None if scopes else _keys_refused(("admin",), permission)

    def check():
        caller = _signed_in(keys_refused)
        require(caller, permission, key_scopes=tuple(key_scopes or ()))

    def decorator(func):
        if scopes:
            sentence = (
                f"Requires the permission `{permission}`, or an API key with the scope "
                + " or ".join(f"`{s}`" for s in scopes)
                + "."
            )
            security = [ADMIN_COOKIE, BEARER]
        else:
            sentence = (
                f"Requires the permission `{permission}` in a signed-in administrator's"
                " session; an API key is refused with 403."
            )
            security = [ADMIN_COOKIE]
        doc = {"security": security, "description": _describe(func, sentence)}
        doc["x-permission"] = permission
        doc["x-scopes"] = list(scopes)
        return _guarded(func, check, **doc)

    return decorator


def shows_more_with(permission: str, what: str):
    """A public route that shows ``what`` more to a caller holding ``permission``.

    No guard: it only documents the credentials as optional (``security: [{}, ...]``), so
    Swagger UI and generated clients send them.
    """
    scopes = scopes_for(permission)

    def decorator(func):
        sentence = (
            f"Public. A caller holding `{permission}` (or an API key with the scope "
            + " or ".join(f"`{s}`" for s in scopes)
            + f") also sees {what}."
        )
        doc = {"security": [{}, ADMIN_COOKIE, BEARER], "description": _describe(func, sentence)}
        return add_doc(func, **doc)

    return decorator


def run_route_guard() -> None:
    """before_request: run the guard of the view about to handle the request, if any."""
    view, guard = _handler()
    if guard is not None:
        try:
            guard()
        except (HTTPException, ShopError):
            limiter.count_refused(view)  # a refused request counts too (429 once over)
            raise


def request_view():
    """The function that handles this request: a MethodView's method (HEAD: its GET)."""
    return _handler()[0]


def _handler() -> tuple:
    """``(view, guard)`` of this request (``_guard_of``)."""
    req = request._get_current_object()
    return _guard_of(current_app._get_current_object(), req.endpoint, req.method)


# Methods whose guard is kept per endpoint (a request with another never matched a route).
_KEPT_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


def _guard_of(app, endpoint: str | None, method: str) -> tuple:
    """``(view, guard)`` of the function that handles ``method`` at ``endpoint`` (a
    MethodView's method; HEAD: its GET), found once per endpoint and method and kept on the
    app: the views are fixed once the app serves."""
    kept = app.extensions.setdefault("shop.route_guards", {})
    found = kept.get((endpoint, method))
    if found is not None:
        return found
    view = app.view_functions.get(endpoint)
    view_class = getattr(view, "view_class", None)
    if view_class is not None:
        name = method.lower()
        view = getattr(view_class, name, None)
        if view is None and name == "head":
            view = getattr(view_class, "get", None)
    found = (view, getattr(view, "_shop_guard", None))
    if method in _KEPT_METHODS:
        kept[(endpoint, method)] = found
    return found


def _either(kinds) -> str:
    words = [_KIND_WORDS[k] for k in kinds]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]
