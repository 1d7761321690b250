"""Two-factor sign-in (TOTP) of the signed-in administrator: status, set up, confirm, turn off.

The rules live in ``shop/auth/two_factor.py``; the console's page calls the same functions.
"""

from flask import g
from flask.views import MethodView
from marshmallow import Schema, fields, validate

from shop import audit, db
from shop.api.common import Blueprint
from shop.auth import sessions, two_factor
from shop.auth.decorators import require_auth
from shop.auth.passwords import MAX_LENGTH, check_password
from shop.errors import abort
from shop.extensions import limiter

blp = Blueprint(
    "two_factor",
    __name__,
    url_prefix="/auth/two-factor",
    description="Two-factor sign-in (TOTP) for administrators.",
)


class TwoFactorSchema(Schema):
    enabled = fields.Boolean(required=True)
    enabled_at = fields.String(required=True, allow_none=True)
    recovery_codes_left = fields.Integer(required=True)
    required = fields.Boolean(
        required=True,
        metadata={"description": "Whether the shop's settings require it of administrators."},
    )


class TwoFactorSetupSchema(Schema):
    secret = fields.String(
        required=True, metadata={"description": "Base32, for typing into an app by hand."}
    )
    otpauth_uri = fields.String(required=True, metadata={"description": "`otpauth://totp/...`"})
    qr_svg = fields.String(required=True, metadata={"description": "The URI as a QR code (SVG)."})


class TwoFactorConfirmSchema(Schema):
    otp = fields.String(required=True, validate=validate.Length(min=1, max=16))


class RecoveryCodesSchema(Schema):
    recovery_codes = fields.List(
        fields.String(),
        required=True,
        metadata={"description": "10 one-time codes, shown this once: keep them safe."},
    )


class TwoFactorOffSchema(Schema):
    password = fields.String(required=True, validate=validate.Length(min=1, max=MAX_LENGTH))
    otp = fields.String(
        required=True,
        validate=validate.Length(min=1, max=64),
        metadata={"description": "A code of the app, or a recovery code."},
    )


def required_by_settings() -> bool:
    """Whether the site setting ``require_two_factor`` is on."""
    from shop import settings

    return bool(settings.current()["require_two_factor"])


def status(user_id: str) -> dict:
    """What the API says about a user's two-factor sign-in."""
    row = two_factor.state(user_id)
    enabled = bool(row and row["enabled_at"])
    return {
        "enabled": enabled,
        "enabled_at": row["enabled_at"] if enabled else None,
        "recovery_codes_left": two_factor.recovery_codes_left(user_id) if enabled else 0,
        "required": required_by_settings(),
    }


def set_up(caller) -> dict:
    """Start (or restart) setting up; 409 when already on."""
    if two_factor.is_enabled(caller.id):
        abort(409, "Two-factor sign-in is already on: turn it off first to set up another app.")
    with db.transaction():
        started = two_factor.start(caller.id, caller.email)
        audit.record("two_factor.setup_started", {"user_id": caller.id})
    return started


def confirm(caller, code: str) -> list[str]:
    """Turn two-factor sign-in on with a code of the new app; answer the recovery codes.

    Ends every other session of the caller, as a password change does: none of them passed
    the second factor."""
    row = two_factor.state(caller.id)
    if row is None or row["enabled_at"]:
        abort(409, "Nothing to confirm: set up two-factor sign-in first.")
    with db.transaction():
        if not two_factor.use_code(caller.id, code, pending=True):
            abort(400, "otp: this is not the app's current code; check the phone's clock.")
        codes = two_factor.confirm(caller.id)
        ended = sessions.end_all(sessions.ADMIN, caller.id, caller.session_id)
        audit.record("two_factor.enabled", {"user_id": caller.id, "other_sessions_ended": ended})
    return codes


def turn_off(caller, password: str, code: str) -> None:
    """Turn two-factor sign-in off with the password and a code; 400 naming what is wrong."""
    if not two_factor.is_enabled(caller.id):
        abort(409, "Two-factor sign-in is not on.")
    if required_by_settings():
        abort(409, "The shop's settings require two-factor sign-in of administrators.")
    stored = db.value("SELECT password_hash FROM users WHERE id = :id", {"id": caller.id})
    if not check_password(stored, password):
        abort(400, "password: does not match your password.")
    with db.transaction():
        if two_factor.check(caller.id, code) is None:
            abort(400, "otp: not a current code or an unused recovery code.")
        two_factor.turn_off(caller.id)
        audit.record("two_factor.disabled", {"user_id": caller.id})


@blp.route("")
class TwoFactor(MethodView):
    @blp.response(200, TwoFactorSchema)
    @blp.doc(operationId="getTwoFactor")
    @require_auth("admin")
    def get(self):
        """Your two-factor sign-in"""
        return status(g.caller.id)


@blp.route("/setup")
class TwoFactorSetup(MethodView):
    @limiter.limit("10 per minute")
    @blp.response(201, TwoFactorSetupSchema)
    @blp.doc(operationId="setUpTwoFactor")
    @require_auth("admin")
    def post(self):
        """Start setting up two-factor sign-in

        Answers a new secret as an `otpauth://` URI and its QR code (SVG) for an
        authenticator app. Nothing changes at sign-in until a code confirms it. Starting
        again replaces a set-up not yet confirmed; when two-factor sign-in is on, 409.
        """
        return set_up(g.caller)


@blp.route("/confirm")
class TwoFactorConfirm(MethodView):
    @limiter.limit("10 per minute")
    @blp.arguments(TwoFactorConfirmSchema)
    @blp.response(200, RecoveryCodesSchema)
    @blp.doc(operationId="confirmTwoFactor")
    @require_auth("admin")
    def post(self, data):
        """Turn two-factor sign-in on with a code of the app

        Answers 10 recovery codes, each good for one sign-in instead of a code. They are
        shown this once and stored hashed. Ends every other session of yours.
        """
        return {"recovery_codes": confirm(g.caller, data["otp"])}


@blp.route("/disable")
class TwoFactorOff(MethodView):
    @limiter.shared_limit(two_factor.TURN_OFF_LIMIT, scope=two_factor.TURN_OFF_SCOPE)
    @blp.arguments(TwoFactorOffSchema)
    @blp.response(204)
    @blp.doc(operationId="turnOffTwoFactor")
    @require_auth("admin")
    def post(self, data):
        """Turn two-factor sign-in off

        Needs your password and a code (or a recovery code). Refused (409) while the shop's
        settings require two-factor sign-in of administrators. Limited to 5 requests a
        minute per client address, shared with the console's form.
        """
        turn_off(g.caller, data["password"], data["otp"])
