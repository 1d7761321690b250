"""The console's sign-in pages: the password, the second step for two-factor codes, signing
out, and choosing a new password with the link of a reset e-mail."""

from flask import g, redirect, render_template, request, url_for

from shop.admin.views import LOGIN_COOKIE, NEXT_RE, bp, login_page
from shop.auth import password_reset, signin
from shop.auth.passwords import MAX_LENGTH, MIN_LENGTH
from shop.auth.signin import LOGIN_LIMIT, LOGIN_SCOPE, sign_out
from shop.http.context import clear_cookies, keep_cookie, origin
from shop.http.extensions import limiter

CUSTOMER_HERE = (
    "That is a customer account: this console is for the shop's administrators. Customers"
    " sign in through the shop itself."
)


def _next_page() -> str:
    target = request.values.get("next", "")
    return target if NEXT_RE.fullmatch(target) else url_for("admin.home")


@bp.route("/login", methods=["GET", "POST"])
@limiter.shared_limit(LOGIN_LIMIT, scope=LOGIN_SCOPE, methods=["POST"])
def login():
    """The sign-in form; posted, it signs in an administrator (never a customer)."""
    if request.method == "GET":
        if g.caller is not None and g.caller.kind == "admin":
            return redirect(_next_page(), 303)
        return login_page()
    email = request.form.get("email", "")[:320]
    password = request.form.get("password", "")[:1024]
    if not email.strip() or not password:
        return login_page("Enter your email and your password.", email, 400)
    # A customer's own email and password are told apart (they are theirs to know); an
    # administrator's are checked at the same cost, and anything else is the usual answer.
    found = signin.check_credentials(email, password, ["admin", "customer"], origin())
    if found is None:
        return login_page("Invalid email or password.", email, 401)
    kind, row = found
    if kind == "customer":
        return login_page(CUSTOMER_HERE, email, 403)
    try:
        used = signin.check_second_factor(kind, row, None, origin())
    except signin.SecondFactorNeeded:
        signin.remember_challenge(g.signin_cookie, row["id"])
        return _code_page()
    keep_cookie(signin.open_session(kind, row, used, origin()))
    return _signed_in()


def _signed_in():
    response = redirect(_next_page(), 303)
    response.delete_cookie(LOGIN_COOKIE, path=url_for("admin.login"))
    return response


def _code_page(error: str | None = None, status: int = 200):
    page = render_template(
        "admin/login_code.html", error=error, next=request.values.get("next", "")
    )
    return page, status


@bp.route("/login/code", methods=["POST"])
@limiter.shared_limit(LOGIN_LIMIT, scope=LOGIN_SCOPE)
def login_code():
    """The second sign-in step: a code of the app (or a recovery code) after the password."""
    row = signin.challenged_user(g.signin_cookie)
    if row is None or not row["active"]:
        return login_page("Your sign-in took too long: please sign in again.", status=400)
    code = request.form.get("code", "")[:64].strip()
    if not code:
        return _code_page("Enter the code of your authenticator app.", 400)
    if signin.is_locked("admin", row, origin()):
        return login_page("Invalid email or password.", row["email"], 401)
    try:
        used = signin.check_second_factor("admin", row, code, origin())
    except signin.SecondFactorNeeded:
        return _code_page("That code is not right, or was used already: try the next one.", 401)
    signin.forget_challenge(g.signin_cookie)
    keep_cookie(signin.open_session("admin", row, used, origin()))
    return _signed_in()


@bp.route("/logout", methods=["POST"])
def logout():
    """End this session and go back to the sign-in page."""
    clear_cookies(sign_out(g.caller))
    return redirect(url_for("admin.login", signed_out=1), 303)


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
    if password_reset.confirm(token, password, origin()) is None:
        error = "This link is invalid, used or expired: ask for a new one below."
        return render_template("admin/password_reset.html", token=token, error=error), 400
    return redirect(url_for("admin.login", reset=1), 303)


@bp.route("/password-reset/request", methods=["GET", "POST"])
@limiter.shared_limit(
    password_reset.REQUEST_LIMIT, scope=password_reset.REQUEST_SCOPE, methods=["POST"]
)
def password_reset_request():
    """Ask for a reset e-mail (an administrator's account), as ``POST /auth/password-reset``:
    the same answer whether or not the account exists."""
    if request.method == "GET":
        return render_template("admin/password_reset_request.html", error=None, sent=None)
    email = request.form.get("email", "")[:320]
    if not email.strip():
        error = "Enter the email you sign in with."
        return render_template("admin/password_reset_request.html", error=error, sent=None), 400
    password_reset.request_reset(email, "admin", origin())
    page = render_template(
        "admin/password_reset_request.html", error=None, sent=password_reset.ACCEPTED
    )
    return page
