"""Password reset by e-mail (``shop/auth/password_reset.py`` holds the rules)."""

from flask.views import MethodView
from marshmallow import Schema, fields, validate

from shop.api.common import Blueprint
from shop.auth import password_reset
from shop.auth.passwords import MAX_LENGTH, MIN_LENGTH
from shop.http.context import origin
from shop.http.errors import abort
from shop.http.extensions import limiter
from shop.http.openapi import enum_field

blp = Blueprint(
    "password_reset",
    __name__,
    url_prefix="/auth/password-reset",
    description="Password reset by e-mail.",
)


class PasswordResetRequestSchema(Schema):
    email = fields.String(required=True, validate=validate.Length(min=1, max=320))
    kind = enum_field(
        "HumanKind",
        ["admin", "customer"],
        load_default="customer",
        metadata={"description": "Which account: `customer` (the default) or `admin`."},
    )


class PasswordResetConfirmSchema(Schema):
    token = fields.String(required=True, validate=validate.Length(min=1, max=100))
    new_password = fields.String(
        required=True, validate=validate.Length(min=MIN_LENGTH, max=MAX_LENGTH)
    )


class MessageSchema(Schema):
    message = fields.String(required=True)


@blp.route("")
class PasswordResetRequest(MethodView):
    @limiter.shared_limit(password_reset.REQUEST_LIMIT, scope=password_reset.REQUEST_SCOPE)
    @blp.arguments(PasswordResetRequestSchema)
    @blp.response(202, MessageSchema)
    @blp.doc(operationId="requestPasswordReset", security=[])
    def post(self, data):
        """Ask for a password reset e-mail

        Always answers 202 with the same message, whether or not the account exists. An
        account gets at most 3 e-mails an hour; an address may ask 5 times a minute and 20
        times an hour.
        """
        password_reset.request_reset(data["email"], data["kind"], origin())
        return {"message": password_reset.ACCEPTED}


@blp.route("/confirm")
class PasswordResetConfirm(MethodView):
    @limiter.limit("10 per minute")
    @blp.arguments(PasswordResetConfirmSchema)
    @blp.response(204)
    @blp.doc(operationId="confirmPasswordReset", security=[])
    def post(self, data):
        """Choose a new password with the token of a reset e-mail

        The token works once, within 30 minutes of the request. Every session of the account
        ends; sign in with the new password.
        """
        if password_reset.confirm(data["token"], data["new_password"], origin()) is None:
            abort(400, "token: this reset link is invalid, used or expired; ask for a new one.")
