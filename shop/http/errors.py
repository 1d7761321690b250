"""The one error handler: every error, expected or not, becomes ``{"message": "..."}``.

The domain's refusals (``shop.errors``) become their HTTP status here, once (``as_http``).
"""

import logging
import sys
from typing import NoReturn

from flask import current_app, g, request
from flask_limiter.errors import RateLimitExceeded
from werkzeug.exceptions import Conflict, HTTPException, default_exceptions

from shop import db, errors, metrics
from shop.http import limit_windows
from shop.outages import RETRY_AFTER_UNAVAILABLE, Unavailable, note_outage

log = logging.getLogger("shop")

_MESSAGES = {
    400: "Invalid request.",
    401: "Authentication required.",
    403: "Access denied.",
    404: "Not found.",
    405: "Method not allowed.",
    409: "Conflict.",
    415: "Unsupported media type: send JSON.",
    429: "Too many requests.",
    500: "Internal server error.",
}


def unavailable_response(error: BaseException):
    """503 ``{"message"}`` with Retry-After for a dependency that cannot be reached."""
    if not isinstance(error, Unavailable):
        error = _as_unavailable(error)
    note_outage(error.dependency, error)
    metrics.count_outage(error.dependency)
    message = f"Service unavailable: {error}. Try again shortly."
    return {"message": message}, 503, {"Retry-After": str(RETRY_AFTER_UNAVAILABLE)}


def _as_unavailable(error: BaseException) -> Unavailable:
    wrapped = Unavailable("rate-limit storage (Redis)")
    wrapped.__cause__ = error
    return wrapped


def _dependency_errors() -> tuple:
    """Exceptions that mean a dependency is unreachable, whoever let them through: Redis's
    once the redis package is loaded (only a shop with ``REDIS_URL`` loads it; ~4 MB that a
    one-node shop's processes do not hold)."""
    if "redis" not in sys.modules:
        return (Unavailable,)
    import redis.exceptions

    return (Unavailable, redis.exceptions.ConnectionError, redis.exceptions.TimeoutError)


RETRY_AFTER_CONFLICT = 1  # seconds: the other transaction has finished by then


def rolled_back_response(error: BaseException):
    """503 with Retry-After for a transaction PostgreSQL rolled back to break a deadlock or a
    serialization conflict with another: nothing of it was written, and the same request
    again succeeds (the lock order of stock writes, ``services/stock.lock_products``,
    keeps this rare; this is the backstop, not a 500)."""
    log.warning("a transaction was rolled back by the database: %s", type(error).__name__)
    message = "The request collided with another one and was not applied. Try again."
    return {"message": message}, 503, {"Retry-After": str(RETRY_AFTER_CONFLICT)}


_STATUS = {
    errors.Invalid: 400,
    errors.Unauthenticated: 401,
    errors.Forbidden: 403,
    errors.NotFound: 404,
    errors.Conflict: 409,
    errors.TooLarge: 413,
    errors.Unsupported: 415,
    errors.Throttled: 429,
    errors.Deferred: 503,
}


def as_http(error: BaseException) -> HTTPException:
    """The HTTP error a domain refusal is answered with (an HTTP error as it is)."""
    if isinstance(error, HTTPException):
        return error
    if isinstance(error, errors.ProviderRefused):
        status = 502 if error.ours else 409
    else:
        status = next(code for kind, code in _STATUS.items() if isinstance(error, kind))
    http = default_exceptions[status](description=error.message)
    http.shop_headers = dict(error.headers)
    http.shop_withheld = error.withheld
    return http


def _refusal(error: errors.ShopError):
    # As any HTTP error: JSON from the API, a page from the console (its blueprint's handler).
    return current_app.handle_http_exception(as_http(error))


def register(app) -> None:
    """Answer a domain refusal with its status; 503 for an unreachable dependency, raised
    anywhere in a request, and for a transaction the database rolled back to break a
    deadlock."""
    app.register_error_handler(errors.ShopError, _refusal)
    if app.config.get("REDIS_URL"):
        import redis  # noqa: F401 - loaded now, so that its errors get their handler below
    for kind in _dependency_errors():
        app.register_error_handler(kind, unavailable_response)
    if app.extensions["shop.db"].engine == "postgresql":
        import psycopg.errors

        for kind in (psycopg.errors.DeadlockDetected, psycopg.errors.SerializationFailure):
            app.register_error_handler(kind, rolled_back_response)


def abort(
    status: int,
    message: str,
    headers: dict | None = None,
    *,
    withheld: tuple[str, str] | None = None,
) -> NoReturn:
    """Stop the request with ``status`` and ``{"message": message}``.

    ``withheld`` is ``(permission, message)`` when ``message`` discloses what only a holder
    of ``permission`` may read (an order's refundable amount, its units left, its status):
    any other caller is answered the second message, which does not (``error_response``
    chooses). Write does not imply read, for refusals as for bodies (``api.common.readable``).
    """
    error = default_exceptions[status](description=message)
    error.shop_headers = headers or {}
    error.shop_withheld = withheld
    raise error


def _for_caller(error: HTTPException, message: str) -> str:
    """``message``, or the words withheld from a caller who may not read what it says."""
    withheld = getattr(error, "shop_withheld", None)
    if withheld is None:
        return message
    permission, shorter = withheld
    caller = g.get("caller")
    return message if caller is not None and caller.can(permission) else shorter


_LOCATIONS = ("json", "query", "querystring", "form", "headers", "path", "view_args", "_schema")


def fold_messages(messages, prefix: str = "") -> list[str]:
    """Flatten webargs/marshmallow field errors into ``field: message`` lines."""
    if isinstance(messages, str):
        return [f"{prefix}: {messages}" if prefix else messages]
    if isinstance(messages, list | tuple):
        return [line for item in messages for line in fold_messages(item, prefix)]
    lines = []
    for key, value in messages.items():
        if key in _LOCATIONS:
            path = prefix
        else:
            path = f"{prefix}.{key}" if prefix else str(key)
        lines.extend(fold_messages(value, path))
    return lines


def error_response(error: HTTPException | errors.ShopError):
    """The JSON body, status and headers for any HTTP error or domain refusal."""
    error = as_http(error)
    code = error.code or 500
    headers = {}
    data = getattr(error, "data", None) or {}
    if code >= 500:
        original = getattr(error, "original_exception", None)
        if isinstance(original, _dependency_errors()):  # raised after the view (a teardown)
            return unavailable_response(original)
        # Any other unhandled exception was logged once, with its traceback, by Flask's
        # log_exception (on the "shop" logger) before it reached this handler.
        message = _MESSAGES[500] if code == 500 else (error.description or "Server error.")
    elif "messages" in data:
        code = 400  # webargs validation errors: 400, not 422
        message = " ".join(fold_messages(data["messages"])) or _MESSAGES[400]
    elif isinstance(error, RateLimitExceeded):
        message = f"Too many requests: the limit is {error.description}. Try again later."
        headers["Retry-After"] = str(_retry_after())
    elif code == 413 and error.description == default_exceptions[413].description:
        limit = request.max_content_length  # the route's own, where it has one
        message = f"Request body too large: the limit is {limit} bytes."
    elif code == 405:
        message = f"Method {request.method} is not allowed on {request.path}."
    elif code == 404 and error.description == default_exceptions[404].description:
        message = (
            f"Not found: {request.path}. The index of this API is at /; its documentation"
            " at /swagger."
        )
    else:
        description = error.description
        if description == default_exceptions.get(code, HTTPException).description:
            description = None
        message = _for_caller(error, description or _MESSAGES.get(code, error.name))
    if code == 405 and getattr(error, "valid_methods", None):
        headers["Allow"] = ", ".join(error.valid_methods)
    headers.update(data.get("headers") or {})
    headers.update(getattr(error, "shop_headers", {}))
    return {"message": message}, code, headers


def unique_violation(error):
    """Error handler for integrity errors: a lost race on a unique value is a 409."""
    column = db.unique_violation(error)
    if column is None:
        raise error
    # As any 409: JSON from the API, a page from the console (its blueprint's handler).
    conflict = Conflict(f"{column}: another record already has this value.")
    return current_app.handle_http_exception(conflict)


def _retry_after() -> int:
    """Seconds until the breached rate-limit window has room again (at least 1)."""
    seconds = limit_windows.retry_after()
    return 60 if seconds is None else seconds
