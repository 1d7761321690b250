"""Two-factor sign-in (TOTP) of the signed-in administrator: status, set up, confirm, turn off.

The use cases live in ``shop/auth/two_factor.py``; the console's page calls the same functions.
"""

from flask import g
from flask.views import MethodView
from marshmallow import Schema, fields, validate

from shop.api.common import Blueprint
from shop.auth import two_factor
from shop.auth.passwords import MAX_LENGTH
from shop.http.decorators import require_auth
from shop.http.extensions import limiter

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


class TwoFactorRecoveryCodesSchema(Schema):
    """Named so that no generated model's local variable shadows its one field."""

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


@blp.route("")
class TwoFactor(MethodView):
    @blp.response(200, TwoFactorSchema)
    @blp.doc(operationId="getTwoFactor")
    @require_auth("admin")
    def get(self):
        """Your two-factor sign-in"""
        return two_factor.status(g.caller.id)


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
        return two_factor.set_up(g.caller)


@blp.route("/confirm")
class TwoFactorConfirm(MethodView):
    @limiter.limit("10 per minute")
    @blp.arguments(TwoFactorConfirmSchema)
    @blp.response(200, TwoFactorRecoveryCodesSchema)
    @blp.doc(operationId="confirmTwoFactor")
    @require_auth("admin")
    def post(self, data):
        """Turn two-factor sign-in on with a code of the app

        Answers 10 recovery codes, each good for one sign-in instead of a code. They are
        shown this once and stored hashed. Ends every other session of yours.
        """
        return {"recovery_codes": two_factor.confirm_setup(g.caller, data["otp"])}


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
        two_factor.turn_off_with(g.caller, data["password"], data["otp"])
