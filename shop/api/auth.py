"""Human authentication: sign in, register, sign out, me, password and sessions (spec 4.1, 5.1).

Signing in itself (lockout, two-factor codes, the session) is ``shop/auth/signin.py``, shared
with the console.
"""

from flask import g
from flask.views import MethodView
from marshmallow import Schema, fields, validate

from shop import audit, db
from shop.api.common import Blueprint, ErrorSchema, PageQuerySchema, page_schema, paginate_rows
from shop.auth import sessions
from shop.auth.passwords import MAX_LENGTH, MIN_LENGTH, check_password, hash_password
from shop.auth.signin import (
    LOGIN_LIMIT,
    LOGIN_SCOPE,
    SecondFactorNeeded,
    end_session,
    sign_in,
    sign_out,
)
from shop.clock import now_iso
from shop.customers import signup
from shop.http.context import clear_cookies, current_actor, keep_cookie, origin
from shop.http.decorators import require_auth
from shop.http.errors import abort
from shop.http.extensions import limiter
from shop.http.openapi import HEADERS, enum_field, responds, sets_cookie

blp = Blueprint("auth", __name__, url_prefix="/auth", description="Sign-in and sessions.")

# The header of a 401 that asks for a two-factor code (after a right password).
OTP_HEADER = "X-Shop-OTP"

Password = validate.Length(min=MIN_LENGTH, max=MAX_LENGTH)


class LoginSchema(Schema):
    email = fields.String(required=True, validate=validate.Length(min=1, max=320))
    password = fields.String(required=True, validate=validate.Length(min=1, max=MAX_LENGTH))
    kind = enum_field("HumanKind", ["admin", "customer"])
    otp = fields.String(
        validate=validate.Length(min=1, max=64),
        metadata={
            "description": "The 6-digit code of an administrator's authenticator app, or one"
            f" of their recovery codes, when two-factor sign-in is on (see `{OTP_HEADER}`)."
        },
    )


class RegisterSchema(Schema):
    email = fields.Email(required=True, validate=validate.Length(max=320))
    password = fields.String(required=True, validate=Password)
    name = fields.String(required=True, validate=validate.Length(min=1, max=200))


class HumanSchema(Schema):
    """The signed-in human."""

    id = fields.String(required=True)
    email = fields.String(required=True)
    name = fields.String(required=True)
    kind = enum_field("HumanKind", ["admin", "customer"], required=True)
    role = fields.String(required=True, allow_none=True)
    permissions = fields.List(fields.String(), required=True)


class MeUpdateSchema(Schema):
    name = fields.String(required=True, validate=validate.Length(min=1, max=200))


class PasswordChangeSchema(Schema):
    current_password = fields.String(required=True, validate=validate.Length(max=MAX_LENGTH))
    new_password = fields.String(required=True, validate=Password)


class SessionSchema(Schema):
    id = fields.String(required=True)
    created_at = fields.String(required=True)
    last_seen_at = fields.String(required=True)
    expires_at = fields.String(required=True)
    user_agent = fields.String(required=True)
    device = fields.String(
        required=True, metadata={"description": 'The user agent in words: "Firefox on macOS".'}
    )
    ip = fields.String(required=True, allow_none=True)
    current = fields.Boolean(required=True)


def human(kind: str, row: dict, role: str | None = None, permissions=()) -> dict:
    """What the API says about a signed-in human."""
    return {
        "id": row["id"],
        "email": row["email"],
        "name": row["name"],
        "kind": kind,
        "role": role,
        "permissions": sorted(permissions),
    }


def _admin_role_and_permissions(user_id: str) -> tuple[str, list[str]]:
    row = db.one(
        "SELECT r.name AS role,"
        " (SELECT string_agg(rp.permission, ' ') FROM role_permissions rp"
        "   WHERE rp.role_id = u.role_id) AS role_permissions,"
        " (SELECT string_agg(up.permission, ' ') FROM user_permissions up"
        "   WHERE up.user_id = u.id) AS extra_permissions"
        " FROM users u JOIN roles r ON r.id = u.role_id WHERE u.id = :id",
        {"id": user_id},
    )
    perms = f"{row['role_permissions'] or ''} {row['extra_permissions'] or ''}".split()
    return row["role"], sorted(set(perms))


@blp.route("/login")
class Login(MethodView):
    @blp.doc(operationId="login")
    @sets_cookie
    @limiter.shared_limit(LOGIN_LIMIT, scope=LOGIN_SCOPE)
    @blp.arguments(LoginSchema)
    @blp.response(200, HumanSchema)
    @blp.alt_response(
        401,
        schema=ErrorSchema,
        description=(
            f"Wrong email or password, or a locked account (the same answer). With the header"
            f" `{OTP_HEADER}: required` the password was right and the account needs a"
            " two-factor code: send the same request again with `otp`."
        ),
        headers={
            "WWW-Authenticate": HEADERS["WWW-Authenticate"],
            OTP_HEADER: {
                "description": "`required`: send `otp` (a TOTP or recovery code) as well.",
                "schema": {"type": "string", "enum": ["required"]},
            },
        },
    )
    def post(self, data):
        """Sign in with email and password

        Sets the `shop_admin_session` or `shop_customer_session` cookie (HttpOnly, Secure,
        SameSite=Strict). Limited to 5 requests a minute per client address. After 10 failures
        within 15 minutes an account is locked for a cool-down that doubles on each repeat
        (without `kind`, a failure counts against both kinds' accounts of the email); an
        administrator with two-factor sign-in on also sends `otp` (docs/accounts.md).
        """
        kinds = [data["kind"]] if "kind" in data else ["admin", "customer"]
        try:
            found = sign_in(data["email"], data["password"], kinds, data.get("otp"), origin())
        except SecondFactorNeeded as needed:
            message = (
                "Invalid two-factor code."
                if needed.wrong
                else "Two-factor code required: send otp with your email and password."
            )
            abort(401, message, {OTP_HEADER: "required"})
        if found is None:
            abort(401, "Invalid email or password.")
        kind, row, cookie = found
        keep_cookie(cookie)
        if kind == "admin":
            return human(kind, row, *_admin_role_and_permissions(row["id"]))
        return human(kind, row)


@blp.route("/register")
class Register(MethodView):
    @blp.doc(operationId="registerCustomer")
    @responds(409, e409="A customer with this email exists.")
    @sets_cookie
    @limiter.limit("3 per minute")
    @blp.arguments(RegisterSchema)
    @blp.response(201, HumanSchema)
    def post(self, data):
        """Register a customer account

        Signs the new customer in (sets `shop_customer_session`). Limited to 3 requests a
        minute per client address.
        """
        row, token = signup.register(data["email"], data["name"], data["password"], origin())
        keep_cookie((sessions.CUSTOMER, token))
        return human("customer", row)


@blp.route("/logout")
class Logout(MethodView):
    @blp.doc(operationId="logout")
    @sets_cookie
    @blp.response(204)
    def post(self):
        """Sign out

        Ends the server-side session and clears the cookie. Answers 204 even when no session
        was open.
        """
        clear_cookies(sign_out(g.caller))


@blp.route("/me")
class Me(MethodView):
    @blp.doc(operationId="getMe")
    @blp.response(200, HumanSchema)
    @require_auth("admin", "customer")
    def get(self):
        """The signed-in human"""
        caller = g.caller
        # The session query already loaded the human: no second statement.
        row = {"id": caller.id, "email": caller.email, "name": caller.name}
        return human(caller.kind, row, caller.role, caller.permissions)

    @blp.doc(operationId="updateMe")
    @blp.arguments(MeUpdateSchema)
    @blp.response(200, HumanSchema)
    @require_auth("admin", "customer")
    def patch(self, data):
        """Change your own name"""
        caller = g.caller
        table = "users" if caller.kind == "admin" else "customers"
        name = data["name"].strip()
        db.execute(
            f"UPDATE {table} SET name = :name, updated_at = :now WHERE id = :id",
            {"name": name, "now": now_iso(), "id": caller.id},
        )
        row = {"id": caller.id, "email": caller.email, "name": name}
        return human(caller.kind, row, caller.role, caller.permissions)


@blp.route("/password")
class PasswordChange(MethodView):
    @blp.doc(operationId="changePassword")
    @limiter.limit("5 per minute")
    @blp.arguments(PasswordChangeSchema)
    @blp.response(204)
    @require_auth("admin", "customer")
    def post(self, data):
        """Change your password

        Ends every other session of yours. Limited to 5 requests a minute per address.
        """
        caller = g.caller
        table = "users" if caller.kind == "admin" else "customers"
        stored = db.value(f"SELECT password_hash FROM {table} WHERE id = :id", {"id": caller.id})
        if not check_password(stored, data["current_password"]):
            abort(400, "current_password: does not match your password.")
        new_hash = hash_password(data["new_password"])
        with db.transaction():
            db.execute(
                f"UPDATE {table} SET password_hash = :hash, updated_at = :now WHERE id = :id",
                {"hash": new_hash, "now": now_iso(), "id": caller.id},
            )
            ended = sessions.end_all(sessions.KINDS[caller.kind], caller.id, caller.session_id)
            audit.record("password.changed", {"other_sessions_ended": ended}, actor=current_actor())


@blp.route("/sessions")
class Sessions(MethodView):
    @blp.doc(operationId="listSessions")
    @blp.arguments(PageQuerySchema, location="query")
    @blp.response(200, page_schema(SessionSchema))
    @require_auth("admin", "customer")
    def get(self, args):
        """Your live sessions, most recently used first"""
        caller = g.caller
        rows = sessions.live(sessions.KINDS[caller.kind], caller.id)
        page = paginate_rows(rows, args)
        page["items"] = [
            {**row, "current": row["id"] == caller.session_id} for row in page["items"]
        ]
        return page


@blp.route("/sessions/<id:session_id>")
class SessionById(MethodView):
    @blp.doc(operationId="endSession")
    @blp.response(204)
    @require_auth("admin", "customer")
    def delete(self, session_id):
        """End one of your sessions

        Ending the current session signs you out.
        """
        cleared = end_session(g.caller, session_id)
        if cleared is None:
            abort(404, "Session not found.")
        clear_cookies(cleared)
