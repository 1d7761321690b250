"""The admin console under ``/admin``: its frame. The blueprint, the gate every page passes,
the CSRF token of its forms, its security headers, its error pages and its template filters;
the pages are in ``signin``, ``keys``, ``account`` and ``webhooks`` beside this module.

The console applies the JSON API's rules through the same functions (``shop/auth``,
``shop/webhooks/store.py``), never through a blueprint, so a page can never allow what the
API refuses. Only a signed-in administrator gets past the sign-in page: a customer cookie or
an API key never reaches the console. Every POST carries a CSRF token derived from the
session cookie (or, before sign-in, from a short-lived sign-in cookie), so nothing extra is
stored. Errors are pages, never JSON. A new key's secret is in the body of the one response
that created it.
"""

import hashlib
import hmac
import re
import secrets

from flask import (
    Blueprint,
    current_app,
    g,
    make_response,
    redirect,
    render_template,
    request,
    url_for,
)
from markupsafe import Markup
from werkzeug.exceptions import HTTPException, NotFound

from shop import db
from shop.admin import nav
from shop.auth import sessions
from shop.auth.caller import require
from shop.clock import now, parse
from shop.http.errors import abort, error_response
from shop.http.hooks import SECURITY_HEADERS

bp = Blueprint(
    "admin",
    __name__,
    url_prefix="/admin",
    template_folder="templates",
    static_folder="static",
)

LOGIN_COOKIE = "shop_admin_signin"
# Pages before sign-in: their forms carry a token derived from the sign-in cookie.
_SIGN_IN_ENDPOINTS = frozenset({"admin.login", "admin.login_code"})
# The reset page's form carries the reset token itself, which no other site can know; a
# forged request for a reset link only mails the account's owner (the API asks no token).
_NO_TOKEN_ENDPOINTS = frozenset({"admin.password_reset_page", "admin.password_reset_request"})
_PUBLIC_ENDPOINTS = _SIGN_IN_ENDPOINTS | _NO_TOKEN_ENDPOINTS
PAGE_SIZE = 25
NEXT_RE = re.compile(r"/admin(/[A-Za-z0-9_\-/]*)?")
ID_RE = db.ID_RE  # the one id format (shop/db/ids.py)
NUMBER_RE = re.compile(r"[0-9]{1,7}")  # ASCII digits only: str.isdigit() also takes '²'


def sign(secret: str, label: str) -> str:
    """An HMAC-SHA256 of ``label`` keyed with a cookie value the browser holds."""
    return hmac.new(secret.encode(), label.encode(), hashlib.sha256).hexdigest()


def csrf_token() -> str:
    """This browser's form token: derived from its session cookie, or its sign-in cookie."""
    if request.endpoint in _SIGN_IN_ENDPOINTS:
        return sign(g.signin_cookie or "", "shop admin sign-in csrf")
    return sign(request.cookies.get(sessions.ADMIN.cookie, ""), "shop admin console csrf")


@bp.context_processor
def _template_helpers() -> dict:
    return {"csrf_token": csrf_token}


@bp.app_context_processor
def _navigation() -> dict:
    # App-wide: the routing error page under /admin renders the frame outside the blueprint.
    return {"nav_links": lambda: nav.links(g.caller)}


@bp.before_request
def gate():
    """Only administrators past this point; every POST must carry this browser's token."""
    g.signin_cookie = request.cookies.get(LOGIN_COOKIE)
    if request.endpoint == "admin.static":
        return None
    caller = g.caller
    if request.endpoint not in _PUBLIC_ENDPOINTS:
        if caller is None or caller.kind == "customer":
            target = request.path if NEXT_RE.fullmatch(request.path) else None
            query = {"next": target} if target and request.method == "GET" else {}
            return redirect(url_for("admin.login", **query), 303)
        if caller.kind != "admin":
            abort(403, "The admin console is for signed-in administrators, not API keys.")
    if request.method == "POST" and request.endpoint not in _NO_TOKEN_ENDPOINTS:
        if request.endpoint in _SIGN_IN_ENDPOINTS and not g.signin_cookie:
            return login_page("Your sign-in form had expired: please sign in again.", status=400)
        sent = request.form.get("csrf_token", "")
        if not hmac.compare_digest(sent, csrf_token()):
            abort(403, "This form did not come from this console: reload the page and try again.")
    return None


@bp.after_request
def security_headers(response):
    """No caching, no framing, no inline script, on every console response."""
    for name, value in SECURITY_HEADERS.items():
        response.headers[name] = value
    return response


@bp.errorhandler(HTTPException)
def error_page(error):
    """Every error of the console as a small HTML page, with the API's message and status."""
    body, status, headers = error_response(error)
    message = for_people(body["message"])
    needed = g.get("needed_permission") if status == 403 else None
    page = render_template(
        "admin/error.html", status=status, message=message, needed=needed, csrf_token=csrf_token
    )
    return page, status, headers


def routing_error_page(error):
    """A console address that matched no page (404) or not this method (405): the same
    page and headers, though no route, and so none of this blueprint's hooks, ran."""
    if isinstance(error, NotFound):
        error = NotFound("There is no such page in the admin console.")
    return security_headers(make_response(error_page(error)))


@bp.app_template_filter("when")
def relative_time(stamp: str | None, empty: str = "never") -> str:
    """``3 hours ago`` or ``in 5 days`` for a stored timestamp."""
    if not stamp:
        return empty
    seconds = int((parse(stamp) - now()).total_seconds())
    future, seconds = seconds > 0, abs(seconds)
    if seconds < 60:
        return "just now" if not future else "in under a minute"
    units = (("year", 365 * 86400), ("month", 30 * 86400), ("day", 86400), ("hour", 3600))
    for unit, size in (*units, ("minute", 60)):
        if seconds >= size:
            count = seconds // size
            text = f"{count} {unit}{'' if count == 1 else 's'}"
            return f"in {text}" if future else f"{text} ago"
    return stamp  # unreachable: seconds >= 60 here


@bp.app_template_filter("minute")
def minute_time(stamp: str | None) -> Markup:
    """A stored timestamp to the minute, shown beside the relative one: ``2027-01-31 00:00
    UTC``, the date and the time each kept on one line."""
    if not stamp:
        return Markup("")
    moment = parse(stamp)
    return Markup("<span>{}</span> <span>{}</span>").format(
        moment.strftime("%Y-%m-%d"), moment.strftime("%H:%M UTC")
    )


@bp.app_template_filter("exact")
def exact_time(stamp: str | None) -> str:
    """A stored timestamp to the second, for a tooltip: ``2027-01-31 00:00:00 UTC``."""
    return parse(stamp).strftime("%Y-%m-%d %H:%M:%S UTC") if stamp else ""


_FIELD_PREFIX = re.compile(r"(^|; )([a-z_][a-z0-9_.\[\]]*): (\S)")


def for_people(message: str, labels: dict[str, str] | None = None) -> str:
    """An API message as the console says it: the field name the JSON API puts first becomes
    the form's label for it (``expires_at: must be`` -> ``Expires on: must be``), or goes
    (``scopes: give at least one scope`` -> ``Give at least one scope``)."""

    def said(match: re.Match) -> str:
        label = (labels or {}).get(match.group(2))
        if label:
            return f"{match.group(1)}{label}: {match.group(3).lower()}"
        return match.group(1) + match.group(3).upper()

    return _FIELD_PREFIX.sub(said, message)


def _require(permission: str) -> None:
    """403 unless the signed-in administrator holds ``permission`` (a page of the console):
    the error page then names it and says who can grant it."""
    if not g.caller.can(permission):
        g.needed_permission = permission
    require(g.caller, permission)


def login_page(error: str | None = None, email: str = "", status: int = 200):
    if not g.signin_cookie:
        g.signin_cookie = secrets.token_urlsafe(32)
        g.new_signin_cookie = True
    page = render_template(
        "admin/login.html",
        error=error,
        email=email,
        next=request.values.get("next", ""),
        customer=g.caller is not None and g.caller.kind == "customer",
    )
    response = current_app.make_response((page, status))
    if g.get("new_signin_cookie"):
        response.set_cookie(
            LOGIN_COOKIE,
            g.signin_cookie,
            max_age=3600,
            path=url_for("admin.login"),
            secure=current_app.config["COOKIE_SECURE"],
            httponly=True,
            samesite="Strict",
        )
    return response


def page_number() -> int:
    """The ``page`` of the query string (1 when missing or not a page number)."""
    page = request.args.get("page", "1")
    return int(page) if NUMBER_RE.fullmatch(page) and 0 < int(page) < 10**6 else 1
