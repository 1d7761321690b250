"""A customer's e-mail verification (``shop/auth/email_verification.py`` holds the rules):
verifying attaches the guest orders placed with the address (``orders/guests.attach``)."""

from flask import g
from flask.views import MethodView
from marshmallow import Schema, fields, validate

from shop.api.common import Blueprint
from shop.auth import email_verification
from shop.http.context import origin
from shop.http.decorators import require_auth
from shop.http.errors import abort
from shop.http.extensions import limiter
from shop.orders import guests

blp = Blueprint(
    "email_verification",
    __name__,
    url_prefix="/auth/email-verification",
    description="A customer's e-mail verification.",
)


class EmailVerificationConfirmSchema(Schema):
    token = fields.String(required=True, validate=validate.Length(min=1, max=100))


@blp.route("")
class EmailVerificationRequest(MethodView):
    @blp.doc(operationId="requestEmailVerification")
    @limiter.limit("5 per minute")
    @blp.response(204)
    @require_auth("customer")
    def post(self):
        """Mail yourself an e-mail verification link

        The link carries a token valid 24 hours, once (`SHOP_EMAIL_VERIFICATION_URL` is
        the storefront page that sends it to `POST /auth/email-verification/confirm`). At
        most 3 e-mails an hour (429 beyond).
        """
        caller = g.caller
        email_verification.request(caller.id, caller.email, caller.name, origin())


@blp.route("/confirm")
class EmailVerificationConfirm(MethodView):
    @blp.doc(operationId="confirmEmailVerification", security=[])
    @limiter.limit("10 per minute")
    @blp.arguments(EmailVerificationConfirmSchema)
    @blp.response(204)
    def post(self, data):
        """Confirm an e-mail address with the token of its verification e-mail

        The address is verified, and the orders placed as a guest with it become the
        customer's: `GET /orders` lists them from then on (docs/orders.md, "Guest
        orders").
        """
        if not email_verification.confirm(data["token"], origin(), guests.attach):
            abort(400, "token: this verification link is invalid, used or expired.")
