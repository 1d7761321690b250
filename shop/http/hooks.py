"""The HTTP plumbing of every request: hooks that know nothing of who is calling.

``create_app`` registers them around the caller's resolution (``shop/http/context.py``):
time and count every request (``shop/metrics.py``), refuse requests while the schema is
older than the code, count SQL statements when asked, and finish every response (caching,
``nosniff``, relative redirects, ``Connection: close``).
The security headers of the HTML pages we serve (the console, Swagger UI) are defined here
once.
"""

import base64
import hashlib
import re
import time
from functools import wraps
from inspect import iscoroutinefunction
from types import FunctionType
from urllib.parse import urlsplit, urlunsplit

from flask import Flask, current_app, g, request
from werkzeug.exceptions import HTTPException

from shop import db, metrics
from shop.http import json_output, routing
from shop.http.context import ANONYMOUS_ENDPOINTS
from shop.http.errors import abort
from shop.schema import migrate


class App(Flask):
    """Flask, asking once per function whether it is ``async`` rather than on every call
    (docs/performance.md, "Cheap reads: the keyed read and the lists").

    The answer is kept per plain function (a bound method by its function); anything else
    (a partial, a callable object) is asked as Flask asks it. At most ``KEPT`` answers are
    kept, so functions made per request (``after_this_request``) cannot grow it.
    """

    KEPT = 4096
    json_provider_class = json_output.Provider  # orjson, the same bytes (shop/http/json_output)
    url_rule_class = routing.Rule  # URL builders written on first use (shop/http/routing)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._coroutine: dict[FunctionType, bool] = {}

    def ensure_sync(self, func):
        """Flask's ``ensure_sync``, its answer kept per plain function."""
        code = getattr(func, "__func__", func)
        if type(code) is not FunctionType:
            return super().ensure_sync(func)
        coroutine = self._coroutine.get(code)
        if coroutine is None:
            coroutine = iscoroutinefunction(func)
            if len(self._coroutine) < self.KEPT:
                self._coroutine[code] = coroutine
        return self.async_to_sync(func) if coroutine else func


# The console's policy: this origin only, no inline script or style, never in a frame.
_CSP = {
    "default-src": "'self'",
    "script-src": "'self'",
    "style-src": "'self'",
    "frame-ancestors": "'none'",
    "form-action": "'self'",
}


def page_headers(**sources: str) -> dict[str, str]:
    """The headers of an HTML page we serve: never cached, never framed, no referrer.

    ``sources`` widen or add CSP directives (``script_src="'self' 'sha256-...'"``).
    """
    policy = {**_CSP, **{name.replace("_", "-"): value for name, value in sources.items()}}
    return {
        "Cache-Control": "no-store",
        "X-Frame-Options": "DENY",
        "Content-Security-Policy": "; ".join(f"{k} {v}" for k, v in policy.items()),
        "Referrer-Policy": "no-referrer",
    }


# Every console response (shop/admin/views.py).
SECURITY_HEADERS = page_headers()

_INLINE_SCRIPT = re.compile(r"<script>(.*?)</script>", re.DOTALL)


SWAGGER_ENDPOINT = "api-docs.openapi_swagger_ui"


def swagger_page_headers(app: Flask) -> None:
    """The console's headers on /swagger, its CSP allowing Swagger UI: set by the page's own
    view (wrapped here), not by an after_request hook that every other request would run.

    The page's one inline script (flask-smorest's start-up of Swagger UI) is allowed by its
    hash, so no other inline script runs; Swagger UI sets inline styles and data: images.
    ``X-Content-Type-Options`` goes first, where ``finish_response`` put it when a hook set
    these headers, so the page's headers keep their order.
    """
    view = app.view_functions.get(SWAGGER_ENDPOINT)
    if view is None:  # no OPENAPI_SWAGGER_UI_PATH: no page
        return

    @wraps(view)
    def page(*args, **kwargs):
        response = app.make_response(view(*args, **kwargs))
        if response.status_code != 200:
            return response
        hashes = " ".join(
            "'sha256-" + base64.b64encode(hashlib.sha256(script.encode()).digest()).decode() + "'"
            for script in _INLINE_SCRIPT.findall(response.get_data(as_text=True))
        )
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers.update(
            page_headers(
                script_src=f"'self' {hashes}",
                style_src="'self' 'unsafe-inline'",
                img_src="'self' data:",
                connect_src="'self'",
                base_uri="'none'",
            )
        )
        return response

    app.view_functions[SWAGGER_ENDPOINT] = page


def require_current_schema() -> None:
    """before_request: 503 with Retry-After while the schema is older than the code."""
    app = current_app._get_current_object()
    if request._get_current_object().endpoint in ANONYMOUS_ENDPOINTS or migrate.schema_ready(app):
        return
    version = migrate.current_version(app.extensions["shop.db"])
    code = migrate.code_version(app.config["MIGRATIONS_DIR"])
    abort(
        503,
        f"The database schema is at version {version} and this release needs {code}:"
        " the service is being upgraded. Operators: run `flask db upgrade`.",
        {"Retry-After": str(migrate.RETRY_AFTER)},
    )


def start_sql_count() -> None:
    """before_request (SHOP_DEBUG_SQL_COUNT=1): remember the thread's counters."""
    g.sql_stats_start = db.get_db().stats()


def sql_count_headers(response):
    """after_request (SHOP_DEBUG_SQL_COUNT=1): statements and writes this request ran."""
    start = g.get("sql_stats_start")
    if start is not None:
        stats = db.get_db().stats()
        response.headers["X-Shop-SQL-Statements"] = str(stats["statements"] - start["statements"])
        response.headers["X-Shop-SQL-Writes"] = str(stats["writes"] - start["writes"])
    return response


def finish_response(response):
    """after_request, after the session cookies are set: never let a proxy cache a private
    answer, never let a browser sniff a type, never send back the client's Host, and read
    away a refused body (or close the connection when it cannot be)."""
    headers = response.headers
    # One pass over the few headers the view set: werkzeug answers ``get``, ``in`` and
    # ``setdefault`` of an absent header by raising and catching a ``BadRequestKeyError``,
    # three of them per answer here (issue 29: every request paid them).
    cache_control = location = None
    cookie = sniff = False
    for name, value in headers:
        lowered = name.lower()
        if lowered == "cache-control":
            cache_control = value if cache_control is None else cache_control
        elif lowered == "set-cookie":
            cookie = True
        elif lowered == "x-content-type-options":
            sniff = True
        elif lowered == "location":
            location = value if location is None else location
    # A public answer (an image's bytes) is the same for everyone: a signed-in caller
    # does not make it private, a cookie set on it does.
    private = g._get_current_object().get("caller") is not None and not _declared_public(
        cache_control
    )
    if private or cookie:
        headers["Cache-Control"] = "no-store"
    if not sniff:
        headers["X-Content-Type-Options"] = "nosniff"
    if location:
        _relative_location(response, location)
    refused_body = response.status_code >= 400 and (
        request._get_current_object().content_length or _chunked()
    )
    if refused_body and not _read_rest_of_body():
        # The rest of the body is still in the socket: this connection cannot carry
        # another request (gunicorn.conf.py makes gunicorn honour this header).
        headers["Connection"] = "close"
    return response


_DRAIN_CHUNK = 64 * 1024


def _read_rest_of_body() -> bool:
    """Read away what is left of a refused request's body; whether the connection can
    carry another request.

    A request refused before its body was read (a 401 on an image upload) leaves the body
    in the socket. Closed with unread bytes in it, the connection is reset: the client, or
    nginx in front, may lose the answer to the reset and report a failure (a 502) instead
    of the 401. A body no larger than the route accepts is therefore read to its end, as
    serving the request would have; a larger or chunked one is left, and the connection
    closes.
    """
    length = request.content_length
    limit = request.max_content_length
    if length is None or (limit is not None and length > limit):
        return False
    try:
        stream = request.stream
        while stream.read(_DRAIN_CHUNK):
            pass
    except (OSError, HTTPException):  # the client went away or sent less than it said
        return False
    return True


def _declared_public(header: str | None) -> bool:
    """Whether the view declared the answer ``Cache-Control: public`` (``header``), read from
    the header text rather than ``response.cache_control``, which parses it on every access.
    """
    return header is not None and "public" in (d.strip().lower() for d in header.split(","))


def _chunked() -> bool:
    return "chunked" in request.headers.get("Transfer-Encoding", "").lower()


def _relative_location(response, location: str) -> None:
    """Make a redirect to this host relative: never send back a host the client named.

    werkzeug builds absolute redirects (such as ``/admin`` -> ``/admin/``) from the Host
    header, which is the client's to choose unless SHOP_TRUSTED_HOSTS restricts it.
    """
    parts = urlsplit(location)
    if parts.netloc and parts.netloc == request.host:
        response.headers["Location"] = urlunsplit(("", "", parts.path, parts.query, ""))


# -- metrics: requests and their latency by route template (shop/metrics.py) -------------

_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


def start_timer() -> None:
    """before_request (first of all): when the request began."""
    g._get_current_object().metrics_start = time.perf_counter()


# The labelled series by (route, method, status): ``labels()`` builds and locks its way to
# the same child on every call (issue 29). Routes are templates and methods a fixed set, so
# this stays as small as the series themselves.
_series: dict[tuple, tuple] = {}


def count_response(response):
    """after_request (last of all): count the response by its route template and status."""
    req = request._get_current_object()
    rule = req.url_rule
    method = req.method if req.method in _METHODS else "other"
    status = response.status_code
    labels = (rule.rule if rule is not None else "(no route)", method, status)
    series = _series.get(labels)
    if series is None:
        series = _series[labels] = (
            metrics.REQUESTS.labels(labels[0], method, str(status)),
            metrics.LATENCY.labels(labels[0], method),
        )
    series[0].inc()
    start = g._get_current_object().get("metrics_start")
    if start is not None:
        series[1].observe(time.perf_counter() - start)
    if status == 429:
        metrics.RATE_LIMITED.inc()
    return response
