"""The admin console under ``/admin``: sign-in (with a second step for two-factor codes),
password reset, API keys, one's own sessions and two-factor sign-in, as HTML.

It applies the JSON API's rules through the same functions (``shop/api/api_keys.py``,
``shop/api/auth.py``, ``shop/auth``), so a page can never allow what the API refuses. Only a
signed-in administrator gets past the sign-in page: a customer cookie or an API key never
reaches the console. Every POST carries a CSRF token derived from the session cookie (or,
before sign-in, from a short-lived sign-in cookie), so nothing extra is stored. Errors are
pages, never JSON. A new key's secret is in the body of the one response that created it.
"""

import hashlib
import hmac
import re
import secrets
from urllib.parse import urlencode

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
from marshmallow import ValidationError
from werkzeug.exceptions import HTTPException, NotFound

from shop import audit, db
from shop.api import two_factor as two_factor_api
from shop.api.api_keys import ApiKeyCreateSchema, issue, roll
from shop.auth import api_keys, password_reset, sessions, signin
from shop.auth.passwords import MAX_LENGTH, MIN_LENGTH
from shop.auth.permissions import ALL_SCOPES
from shop.auth.signin import LOGIN_LIMIT, LOGIN_SCOPE, end_session, sign_out
from shop.auth.two_factor import TURN_OFF_LIMIT, TURN_OFF_SCOPE
from shop.clock import iso_in, now, now_iso, parse
from shop.errors import abort, error_response, fold_messages
from shop.extensions import limiter
from shop.hooks import SECURITY_HEADERS

bp = Blueprint(
    "admin",
    __name__,
    url_prefix="/admin",
    template_folder="templates",
    static_folder="static",
)

LOGIN_COOKIE = "shop_admin_signin"
CUSTOMER_HERE = (
    "That is a customer account: this console is for the shop's administrators. Customers"
    " sign in through the shop itself."
)
# Pages before sign-in: their forms carry a token derived from the sign-in cookie.
_SIGN_IN_ENDPOINTS = frozenset({"admin.login", "admin.login_code"})
# The reset page's form carries the reset token itself, which no other site can know.
_PUBLIC_ENDPOINTS = _SIGN_IN_ENDPOINTS | {"admin.password_reset_page"}
CHALLENGE_SECONDS = 300
PAGE_SIZE = 25
_NEXT_RE = re.compile(r"/admin(/[A-Za-z0-9_\-/]*)?")
_ID_RE = re.compile(r"[0-9a-f]{24}")
_NUMBER_RE = re.compile(r"[0-9]{1,7}")  # ASCII digits only: str.isdigit() also takes '²'


def _sign(secret: str, label: str) -> str:
    """An HMAC-SHA256 of ``label`` keyed with a cookie value the browser holds."""
    return hmac.new(secret.encode(), label.encode(), hashlib.sha256).hexdigest()


def csrf_token() -> str:
    """This browser's form token: derived from its session cookie, or its sign-in cookie."""
    if request.endpoint in _SIGN_IN_ENDPOINTS:
        return _sign(g.signin_cookie or "", "shop admin sign-in csrf")
    return _sign(request.cookies.get(sessions.ADMIN.cookie, ""), "shop admin console csrf")


@bp.context_processor
def _template_helpers() -> dict:
    return {"csrf_token": csrf_token}


@bp.before_request
def gate():
    """Only administrators past this point; every POST must carry this browser's token."""
    g.signin_cookie = request.cookies.get(LOGIN_COOKIE)
    if request.endpoint == "admin.static":
        return None
    caller = g.caller
    if request.endpoint not in _PUBLIC_ENDPOINTS:
        if caller is None or caller.kind == "customer":
            target = request.path if _NEXT_RE.fullmatch(request.path) else None
            query = {"next": target} if target and request.method == "GET" else {}
            return redirect(url_for("admin.login", **query), 303)
        if caller.kind != "admin":
            abort(403, "The admin console is for signed-in administrators, not API keys.")
    if request.method == "POST" and request.endpoint != "admin.password_reset_page":
        if request.endpoint in _SIGN_IN_ENDPOINTS and not g.signin_cookie:
            return _login_page("Your sign-in form had expired: please sign in again.", status=400)
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
    page = render_template(
        "admin/error.html", status=status, message=body["message"], csrf_token=csrf_token
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


# Sign-in and sign-out ----------------------------------------------------------------------


def _next_page() -> str:
    target = request.values.get("next", "")
    return target if _NEXT_RE.fullmatch(target) else url_for("admin.home")


@bp.route("/login", methods=["GET", "POST"])
@limiter.shared_limit(LOGIN_LIMIT, scope=LOGIN_SCOPE, methods=["POST"])
def login():
    """The sign-in form; posted, it signs in an administrator (never a customer)."""
    if request.method == "GET":
        if g.caller is not None and g.caller.kind == "admin":
            return redirect(_next_page(), 303)
        return _login_page()
    email = request.form.get("email", "")[:320]
    password = request.form.get("password", "")[:1024]
    if not email.strip() or not password:
        return _login_page("Enter your email and your password.", email, 400)
    # A customer's own email and password are told apart (they are theirs to know); an
    # administrator's are checked at the same cost, and anything else is the usual answer.
    found = signin.check_credentials(email, password, ["admin", "customer"])
    if found is None:
        return _login_page("Invalid email or password.", email, 401)
    kind, row = found
    if kind == "customer":
        return _login_page(CUSTOMER_HERE, email, 403)
    try:
        used = signin.check_second_factor(kind, row, None)
    except signin.SecondFactorNeeded:
        _remember_challenge(row["id"])
        return _code_page()
    signin.open_session(kind, row, used)
    return _signed_in()


def _signed_in():
    response = redirect(_next_page(), 303)
    response.delete_cookie(LOGIN_COOKIE, path=url_for("admin.login"))
    return response


def _remember_challenge(user_id: str) -> None:
    """The password was right: this browser may send a code for ``user_id`` for 5 minutes."""
    db.execute("DELETE FROM two_factor_challenges WHERE expires_at < :now", {"now": now_iso()})
    db.execute(
        "INSERT INTO two_factor_challenges (token_hash, user_id, expires_at)"
        " VALUES (:hash, :user_id, :expires) ON CONFLICT (token_hash) DO UPDATE SET"
        " user_id = excluded.user_id, expires_at = excluded.expires_at",
        {
            "hash": db.sha256(g.signin_cookie),
            "user_id": user_id,
            "expires": iso_in(CHALLENGE_SECONDS),
        },
    )


def _code_page(error: str | None = None, status: int = 200):
    page = render_template(
        "admin/login_code.html", error=error, next=request.values.get("next", "")
    )
    return page, status


@bp.route("/login/code", methods=["POST"])
@limiter.shared_limit(LOGIN_LIMIT, scope=LOGIN_SCOPE)
def login_code():
    """The second sign-in step: a code of the app (or a recovery code) after the password."""
    row = db.one(
        "SELECT u.id, u.email, u.name, u.active FROM two_factor_challenges c"
        " JOIN users u ON u.id = c.user_id WHERE c.token_hash = :hash AND c.expires_at > :now",
        {"hash": db.sha256(g.signin_cookie), "now": now_iso()},
    )
    if row is None or not row["active"]:
        return _login_page("Your sign-in took too long: please sign in again.", status=400)
    code = request.form.get("code", "")[:64].strip()
    if not code:
        return _code_page("Enter the code of your authenticator app.", 400)
    if signin.is_locked("admin", row):
        return _login_page("Invalid email or password.", row["email"], 401)
    try:
        used = signin.check_second_factor("admin", row, code)
    except signin.SecondFactorNeeded:
        return _code_page("That code is not right, or was used already: try the next one.", 401)
    db.execute(
        "DELETE FROM two_factor_challenges WHERE token_hash = :hash",
        {"hash": db.sha256(g.signin_cookie)},
    )
    signin.open_session("admin", row, used)
    return _signed_in()


def _login_page(error: str | None = None, email: str = "", status: int = 200):
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


@bp.route("/logout", methods=["POST"])
def logout():
    """End this session and go back to the sign-in page."""
    sign_out(g.caller)
    return redirect(url_for("admin.login", signed_out=1), 303)


@bp.route("/")
def home():
    """The keys, or one's sessions for an administrator who may not read keys."""
    if g.caller.can("api_key.read"):
        return redirect(url_for("admin.keys"), 303)
    return redirect(url_for("admin.my_sessions"), 303)


# API keys ----------------------------------------------------------------------------------


def _require(permission: str) -> None:
    if not g.caller.can(permission):
        abort(403, f"Access denied: this needs the permission {permission}.")


@bp.route("/api-keys")
def keys():
    """The keys this administrator may see, newest first, dormant and expired ones marked."""
    _require("api_key.read")
    status = request.args.get("status")
    if status not in ("active", "expired", "revoked"):
        status = None
    page = request.args.get("page", "1")
    page = int(page) if _NUMBER_RE.fullmatch(page) and 0 < int(page) < 10**6 else 1
    result = api_keys.list_page(g.caller, status, page, PAGE_SIZE)
    days = current_app.config["KEY_DORMANT_DAYS"]
    moment = now()
    for key in result["items"]:
        key["dormant"] = api_keys.is_dormant(key, days, moment)
        key["idle_days_left"] = None
        if key["idle_expires_at"]:
            left = parse(key["idle_expires_at"]) - moment
            key["idle_days_left"] = max(0, left.days + (1 if left.seconds else 0))
    revoked = request.args.get("revoked", "")
    revoked = api_keys.get(revoked, g.caller) if _ID_RE.fullmatch(revoked) else None
    pages = max(1, -(-result["total"] // PAGE_SIZE))

    def page_url(number):
        query = {"status": status, "page": number}
        return url_for("admin.keys") + "?" + urlencode({k: v for k, v in query.items() if v})

    return render_template(
        "admin/keys.html",
        result=result,
        status=status,
        pages=pages,
        page_url=page_url,
        dormant_days=days,
        idle_days=current_app.config["API_KEY_IDLE_DAYS"],
        revoked=revoked,
    )


def _scope_groups() -> list[tuple[str, list[str]]]:
    """The scopes this administrator may grant, grouped by resource, in catalogue order."""
    grantable = set(api_keys.grantable_scopes(g.caller))
    groups = {}
    for scope in ALL_SCOPES:
        groups.setdefault(scope.split(":", 1)[1], [])
        if scope in grantable:
            groups[scope.split(":", 1)[1]].append(scope)
    return [(resource, scopes) for resource, scopes in groups.items() if scopes]


def _form_page(form: dict, error: str | None = None, status: int = 200):
    """The create form; ``form`` holds what was typed, and the id the key will take."""
    return (
        render_template(
            "admin/new_key.html",
            groups=_scope_groups(),
            form=form,
            error=error,
            today=now().date().isoformat(),
            key_sig=_sign(csrf_token(), "new key " + form["key_id"]),
        ),
        status,
    )


@bp.route("/api-keys/new")
def new_key():
    """The form to create a key: label, grantable scopes, optional expiry date."""
    _require("api_key.create")
    return _form_page({"label": "", "scopes": [], "expires_at": "", "key_id": db.new_id()})


@bp.route("/api-keys", methods=["POST"])
def create_key():
    """Create a key, and answer the only page that will ever show its secret."""
    _require("api_key.create")
    form = {
        "label": request.form.get("label", "")[:200],
        "scopes": request.form.getlist("scopes")[:50],
        "expires_at": request.form.get("expires_at", "")[:64],
        "key_id": request.form.get("key_id", ""),
    }
    sig = request.form.get("key_sig", "")
    if not _ID_RE.fullmatch(form["key_id"]) or not hmac.compare_digest(
        sig, _sign(csrf_token(), "new key " + form["key_id"])
    ):
        abort(400, "This form is incomplete: reload the page and try again.")
    if db.value("SELECT 1 FROM api_keys WHERE id = :id", {"id": form["key_id"]}):
        return _already_created(form["key_id"])
    try:
        data = ApiKeyCreateSchema().load(
            {
                "label": form["label"],
                "scopes": form["scopes"],
                "expires_at": form["expires_at"] or None,
            }
        )
        created = issue(data, g.caller, key_id=form["key_id"])
    except ValidationError as error:
        return _form_page(form, " ".join(fold_messages(error.messages)), 400)
    except HTTPException as error:
        if error.code == 409 and db.value(
            "SELECT 1 FROM api_keys WHERE id = :id", {"id": form["key_id"]}
        ):
            return _already_created(form["key_id"])
        body, status, _ = error_response(error)
        return _form_page(form, body["message"], status)
    return render_template("admin/created.html", key=created)


def _already_created(key_id: str):
    """409 for a form sent twice: the key it made, if this administrator may see it.

    The id comes from the form, so it is looked up as the viewer: another administrator's
    key (an id anyone can sign for their own form) is never named.
    """
    key = api_keys.get(key_id, g.caller)
    if key is None:
        abort(409, "This form was already used: open a new one to create another key.")
    return render_template("admin/already_created.html", key=key), 409


def _visible_key(key_id: str) -> dict:
    key = api_keys.get(key_id, g.caller) if _ID_RE.fullmatch(key_id) else None
    if key is None:
        abort(404, "API key not found.")
    return key


@bp.route("/api-keys/<id:key_id>/revoke")
def revoke_confirm(key_id):
    """Ask before revoking: the key stops working at once and for good."""
    _require("api_key.delete")
    return render_template("admin/revoke.html", key=_visible_key(key_id))


@bp.route("/api-keys/<id:key_id>/revoke", methods=["POST"])
def revoke_key(key_id):
    """Revoke a key at once, then back to the list."""
    _require("api_key.delete")
    if not _ID_RE.fullmatch(key_id) or not api_keys.revoke(key_id, g.caller):
        abort(404, "API key not found.")
    return redirect(url_for("admin.keys", revoked=key_id), 303)


GRACE_CHOICES = (
    (0, "none: the old key stops at once"),
    (3600, "1 hour"),
    (24 * 3600, "1 day"),
    (7 * 24 * 3600, "7 days"),
)


@bp.route("/api-keys/<id:key_id>/roll")
def roll_confirm(key_id):
    """Ask how long the old key may keep working, then roll."""
    _require("api_key.delete")
    return render_template("admin/roll.html", key=_visible_key(key_id), choices=GRACE_CHOICES)


@bp.route("/api-keys/<id:key_id>/roll", methods=["POST"])
def roll_key(key_id):
    """Roll a key, and answer the only page that will ever show its successor's secret."""
    _require("api_key.delete")
    grace = request.form.get("grace_seconds", "")
    if grace not in {str(seconds) for seconds, _ in GRACE_CHOICES}:
        abort(400, "Choose how long the old key keeps working.")
    old = _visible_key(key_id)
    created = roll(key_id, {"grace_seconds": int(grace)}, g.caller)
    return render_template(
        "admin/created.html", key=created, rolled=api_keys.get(old["id"], g.caller)
    )


# My sessions -------------------------------------------------------------------------------


@bp.route("/sessions")
def my_sessions():
    """This administrator's live sessions, most recently used first."""
    rows = sessions.live(sessions.ADMIN, g.caller.id)
    ended = request.args.get("ended", "")
    return render_template(
        "admin/sessions.html",
        rows=rows,
        ended=int(ended) if _NUMBER_RE.fullmatch(ended) else None,
        ended_one="one" in request.args,
    )


@bp.route("/sessions/<id:session_id>/end", methods=["POST"])
def end_one_session(session_id):
    """Sign out one session (this one too: then back to the sign-in page)."""
    if not end_session(g.caller, session_id):
        abort(404, "Session not found.")
    if session_id == g.caller.session_id:
        return redirect(url_for("admin.login"), 303)
    return redirect(url_for("admin.my_sessions", one=1), 303)


@bp.route("/sessions/end-others", methods=["POST"])
def end_other_sessions():
    """Sign out every session of this administrator but this one."""
    with db.transaction():
        ended = sessions.end_all(sessions.ADMIN, g.caller.id, g.caller.session_id)
        audit.record("session.ended_others", {"ended": ended})
    return redirect(url_for("admin.my_sessions", ended=ended), 303)


# Password reset (the link of the e-mail) --------------------------------------------------


@bp.route("/password-reset", methods=["GET", "POST"])
@limiter.limit("10 per minute", methods=["POST"])
def password_reset_page():
    """Choose a new password with the token of a reset e-mail, then sign in."""
    token = request.values.get("token", "")[:100]
    if request.method == "GET":
        return render_template("admin/password_reset.html", token=token, error=None)
    password = request.form.get("new_password", "")
    if not MIN_LENGTH <= len(password) <= MAX_LENGTH:
        error = f"Choose a password of at least {MIN_LENGTH} characters."
        return render_template("admin/password_reset.html", token=token, error=error), 400
    if password_reset.confirm(token, password) is None:
        error = "This link is invalid, used or expired: ask for a new one."
        return render_template("admin/password_reset.html", token=token, error=error), 400
    return redirect(url_for("admin.login", reset=1), 303)


# Two-factor sign-in ------------------------------------------------------------------------


@bp.route("/two-factor")
def two_factor():
    """This administrator's two-factor sign-in: on or off, and how to change that."""
    state = two_factor_api.status(g.caller.id)
    return render_template("admin/two_factor.html", state=state, setup=None, error=None)


@bp.route("/two-factor/setup", methods=["POST"])
def two_factor_setup():
    """A new secret and its QR code, with the form to confirm it with a code."""
    setup = two_factor_api.set_up(g.caller)
    state = two_factor_api.status(g.caller.id)
    return render_template("admin/two_factor.html", state=state, setup=setup, error=None)


@bp.route("/two-factor/confirm", methods=["POST"])
def two_factor_confirm():
    """Turn it on with a code of the app: the recovery codes, shown this once."""
    try:
        codes = two_factor_api.confirm(g.caller, request.form.get("code", "")[:16])
    except HTTPException as error:
        return _two_factor_refused(error)
    return render_template("admin/recovery_codes.html", codes=codes)


@bp.route("/two-factor/disable", methods=["POST"])
@limiter.shared_limit(TURN_OFF_LIMIT, scope=TURN_OFF_SCOPE)
def two_factor_disable():
    """Turn it off with the password and a code."""
    try:
        two_factor_api.turn_off(
            g.caller,
            request.form.get("password", "")[:MAX_LENGTH],
            request.form.get("code", "")[:64],
        )
    except HTTPException as error:
        return _two_factor_refused(error)
    return redirect(url_for("admin.two_factor"), 303)


def _two_factor_refused(error: HTTPException):
    """The two-factor page again, saying why the change was refused."""
    body, status, _ = error_response(error)
    state = two_factor_api.status(g.caller.id)
    page = render_template("admin/two_factor.html", state=state, setup=None, error=body["message"])
    return page, status
