"""A customer's account in the storefront: register, sign in and out, a new password by
e-mail, and their orders (docs/storefront.md, "Accounts").

Signing in is the API's (``shop/auth/signin.py``: the same lockout, the same per-address
budget) and opens the same server-side session, in the same cookie (HttpOnly, SameSite=
Strict, Secure by ``SHOP_COOKIE_SECURE``). The visitor's guest cart is then theirs, their
other open carts merged into it (``shop/carts/claiming.py``). A wrong e-mail or password is
one answer, never saying which was wrong.
"""

import functools
import re

from flask import current_app, redirect, render_template, request, url_for

from shop.auth import password_reset, sessions, signin
from shop.auth.passwords import MAX_LENGTH, MIN_LENGTH
from shop.carts import claiming
from shop.customers import signup
from shop.errors import Conflict
from shop.http.context import clear_cookies, keep_cookie, origin
from shop.http.extensions import limiter
from shop.orders import order_list
from shop.storefront import frame
from shop.storefront.frame import bp
from shop.storefront.i18n import gettext as _

ORDERS_PER_PAGE = 20
# Where a sign-in may lead back to: a page of the storefront, never another site.
_NEXT = re.compile(r"/[A-Za-z0-9/_\-]{0,200}")


def _next_page() -> str:
    target = request.values.get("next", "")
    prefix = current_app.config["STOREFRONT_PREFIX"] + "/"
    if _NEXT.fullmatch(target) and target.startswith(prefix) and "//" not in target:
        return target
    return url_for("store.account")


def _page(template: str, status: int = 200, **values):
    return render_template(f"store/{template}", shop=frame.shop_settings(), **values), status


def _signed_in(cookie: tuple, customer_id: str):
    """Keep the new session's cookie and the browser's cart (now the customer's), and go
    where the visitor was going."""
    keep_cookie(cookie)
    cart = claiming.take_over(frame.cart_id(), customer_id)
    response = redirect(_next_page(), 303)
    return frame.keep_cart(response, cart) if cart or frame.cart_id() else response


@bp.route("/account/sign-in", methods=["GET", "POST"], endpoint="account_sign_in")
@limiter.shared_limit(signin.LOGIN_LIMIT, scope=signin.LOGIN_SCOPE, methods=["POST"])
def sign_in():
    """The sign-in form; posted, it signs a customer in."""
    if request.method == "GET":
        if frame.store_caller() is not None:
            return redirect(_next_page(), 303)
        return _page("sign_in.html", email="", problem=None, notice=_notice())
    email = request.form.get("email", "")[:320]
    password = request.form.get("password", "")[:MAX_LENGTH]
    if not email.strip() or not password:
        problem = _("Enter your e-mail and your password.")
        return _page("sign_in.html", 400, email=email, problem=problem, notice=None)
    found = signin.sign_in(email, password, ["customer"], None, origin())
    if found is None:
        problem = _("That e-mail and password do not match an account.")
        return _page("sign_in.html", 401, email=email, problem=problem, notice=None)
    _kind, row, cookie = found
    return _signed_in(cookie, row["id"])


def _notice() -> str | None:
    if request.args.get("reset") == "1":
        return _("Your new password is set: sign in with it.")
    if request.args.get("signed_out") == "1":
        return _("You are signed out.")
    return None


@bp.route("/account/register", methods=["GET", "POST"], endpoint="account_register")
@limiter.limit("3 per minute", methods=["POST"])
def register():
    """The form that opens a customer account (and signs it in)."""
    if request.method == "GET":
        return _page("register.html", form={}, problem=None, min_length=MIN_LENGTH)
    form = {name: request.form.get(name, "").strip() for name in ("name", "email")}
    password = request.form.get("password", "")
    problem = None
    if not form["name"] or len(form["name"]) > 200:
        problem = _("Enter your name.")
    elif not re.fullmatch(r"[^@\s]+@[^@\s]+\.[^@\s]+", form["email"]) or len(form["email"]) > 320:
        problem = _("Enter a valid e-mail address.")
    elif not MIN_LENGTH <= len(password) <= MAX_LENGTH:
        problem = _("Choose a password of at least %(count)s characters.", count=MIN_LENGTH)
    if problem is None:
        try:
            row, token = signup.register(form["email"], form["name"], password, origin())
        except Conflict:
            problem = _("An account with this e-mail exists: sign in, or ask for a new password.")
    if problem is not None:
        return _page("register.html", 400, form=form, problem=problem, min_length=MIN_LENGTH)
    return _signed_in((sessions.CUSTOMER, token), row["id"])


@bp.post("/account/sign-out", endpoint="account_sign_out")
def sign_out():
    """End this session; the cart stays the customer's, so the browser forgets it. (The
    console's session, if any, is the console's to end.)"""
    caller = frame.store_caller()
    clear_cookies(signin.sign_out(caller) if caller else [sessions.CUSTOMER])
    return frame.keep_cart(redirect(url_for("store.account_sign_in", signed_out=1), 303), None)


@bp.route("/account/forgot", methods=["GET", "POST"], endpoint="account_forgot")
@limiter.shared_limit(
    password_reset.REQUEST_LIMIT, scope=password_reset.REQUEST_SCOPE, methods=["POST"]
)
def forgot():
    """Ask for a new password by e-mail: the same answer whether or not the account exists."""
    if request.method == "GET":
        return _page("forgot.html", sent=False, problem=None)
    email = request.form.get("email", "")[:320]
    if not email.strip():
        return _page("forgot.html", 400, sent=False, problem=_("Enter your e-mail."))
    password_reset.request_reset(email, "customer", origin())
    return _page("forgot.html", sent=True, problem=None)


@bp.route("/account/password-reset", methods=["GET", "POST"], endpoint="account_password_reset")
@limiter.limit("10 per minute", methods=["POST"])
def new_password():
    """Choose a new password with the link of a reset e-mail (``password_reset._link``)."""
    token = request.values.get("token", "")[:100]
    values = {"token": token, "min_length": MIN_LENGTH}
    if request.method == "GET":
        return _page("password_reset.html", problem=None, **values)
    password = request.form.get("new_password", "")
    if not MIN_LENGTH <= len(password) <= MAX_LENGTH:
        problem = _("Choose a password of at least %(count)s characters.", count=MIN_LENGTH)
        return _page("password_reset.html", 400, problem=problem, **values)
    if password_reset.confirm(token, password, origin()) is None:
        problem = _("This link is invalid, used or expired: ask for a new one.")
        return _page("password_reset.html", 400, problem=problem, **values)
    return redirect(url_for("store.account_sign_in", reset=1), 303)


def signed_in(view):
    """A page of the signed-in customer (``view(caller, ...)``); anybody else goes to the
    sign-in page, then back here."""

    @functools.wraps(view)
    def page(*args, **kwargs):
        caller = frame.store_caller()
        if caller is None:
            return redirect(url_for("store.account_sign_in", next=request.path), 303)
        return view(caller, *args, **kwargs)

    return page


@bp.get("/account", endpoint="account")
@signed_in
def orders(caller):
    """The account's page: the customer's orders, newest first, a page at a time."""
    raw = request.args.get("page", "1")
    number = int(raw) if raw.isascii() and raw.isdigit() and 0 < len(raw) < 6 else 1
    found = order_list.find(max(number, 1), ORDERS_PER_PAGE, customer_id=caller.id)
    return _page("account.html", caller=caller, orders=found)
