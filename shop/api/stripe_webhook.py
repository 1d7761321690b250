"""``POST /payments/stripe/webhook``: Stripe's events (docs/payments.md).

Public (no session, no key): the ``Stripe-Signature`` over the raw body is the credential.
A bad signature, or one dated more than 5 minutes away (past or future), is a 400 and
writes nothing, as is a signed event whose fields are not Stripe's shape; a verified event
is applied once by the provider (``payments/stripe/intents.receive``) and answered 200,
duplicates too.
"""

from flask import request
from flask.views import MethodView
from marshmallow import Schema, fields

from shop.api.common import Blueprint
from shop.http.context import origin
from shop.payments import providers

blp = Blueprint(
    "stripe_webhook", __name__, url_prefix="/payments/stripe", description="Stripe's webhook."
)


class ReceivedSchema(Schema):
    received = fields.Boolean(required=True)
    duplicate = fields.Boolean(required=True)


EVENT_BODY = {
    "required": True,
    "content": {"application/json": {"schema": {"type": "object", "additionalProperties": True}}},
}


@blp.route("/webhook")
class StripeWebhook(MethodView):
    @blp.doc(operationId="receiveStripeEvent", requestBody=EVENT_BODY)
    @blp.response(200, ReceivedSchema)
    def post(self):
        """Receive a Stripe event

        Register this URL in Stripe's dashboard with the events
        `payment_intent.succeeded`, `payment_intent.payment_failed`,
        `payment_intent.canceled` and `charge.refunded`. 404 when Stripe is not configured;
        400 for a bad signature, one dated over 5 minutes from now either way, or a signed
        event whose fields are malformed (the message names the field; nothing is applied).
        """
        actor = origin().acting_as("system", label="Stripe")
        applied = providers.event("stripe", request.get_data(), request.headers, actor)
        return {"received": True, "duplicate": not applied}
