"""The only module that talks to Stripe, through the official ``stripe`` package (16.1.0).

Every call is made outside any database transaction, with a short timeout and no automatic
retries: a request that cannot reach Stripe raises ``Unavailable``, which the API answers as
a 503 with ``Retry-After``. Idempotency keys make every retry safe: the same key answers the
first result (Stripe keeps keys for 24 hours; ours are derived from our own ids).

``STRIPE_API_BASE`` points the client at another server; it exists for the test suite's
local fake (tests/fake_stripe.py) and must stay unset in production.
"""

import json
import time

import stripe
from flask import current_app

from shop.errors import abort

RETRY_AFTER = 30


class Unavailable(Exception):
    """Stripe could not be reached or answered with an error."""


def configured(config=None) -> bool:
    """Whether both the API key and the webhook secret are set."""
    config = config if config is not None else current_app.config
    return bool(config.get("STRIPE_API_KEY") and config.get("STRIPE_WEBHOOK_SECRET"))


def _client() -> stripe.StripeClient:
    config = current_app.config
    client = current_app.extensions.get("shop.stripe")
    if client is None:
        base = config.get("STRIPE_API_BASE")
        client = stripe.StripeClient(
            config["STRIPE_API_KEY"],
            base_addresses={"api": base} if base else None,
            max_network_retries=0,
            http_client=stripe.RequestsClient(timeout=config.get("STRIPE_TIMEOUT", 10)),
        )
        current_app.extensions["shop.stripe"] = client
    return client


def _call(method, params: dict, key: str | None = None):
    options = {"idempotency_key": key} if key else {}
    try:
        return method(params=params, options=options)
    except stripe.StripeError as error:
        current_app.logger.warning(
            "stripe call failed: %s (%s)", type(error).__name__, error.http_status
        )
        raise Unavailable(type(error).__name__) from error


def create_intent(order: dict):
    """The order's PaymentIntent: created once (the key is derived from the order id)."""
    params = {
        "amount": order["total_cents"],
        "currency": order["currency"].lower(),
        "metadata": {"order_id": order["id"], "order_number": order["number"]},
        "automatic_payment_methods": {"enabled": True},
    }
    return _call(_client().v1.payment_intents.create, params, f"order-{order['id']}-intent")


def retrieve_intent(intent_id: str):
    return _call(lambda params, options: _client().v1.payment_intents.retrieve(intent_id), {})


def list_intents(created_after: int | None = None) -> list:
    """Every PaymentIntent (created at or after ``created_after``, Unix time), all pages."""
    params = {"limit": 100}
    if created_after is not None:
        params["created"] = {"gte": created_after}
    found = []
    while True:
        page = _call(_client().v1.payment_intents.list, params)
        found.extend(page.data)
        if not page.has_more or not page.data:
            return found
        params["starting_after"] = page.data[-1].id


def create_refund(intent_id: str, amount_cents: int, refund_id: str, order_id: str):
    """Refund ``amount_cents`` of the intent; the key is our refund's id."""
    params = {
        "payment_intent": intent_id,
        "amount": amount_cents,
        "metadata": {"order_id": order_id, "refund_id": refund_id},
    }
    return _call(_client().v1.refunds.create, params, f"refund-{refund_id}")


def list_refunds(intent_id: str) -> list:
    return list(_call(_client().v1.refunds.list, {"payment_intent": intent_id, "limit": 100}).data)


def verify(payload: bytes, signature: str | None) -> dict:
    """The event of a webhook request, or a 400 if its signature is bad, its time more than
    the tolerance (5 min) away from now, in the past (the stripe package checks that) or in
    the future (we do: a signature dated ahead would stay replayable that long), or its body
    is not a JSON object."""
    if not signature:
        abort(400, "Missing Stripe-Signature header.")
    tolerance = current_app.config.get("STRIPE_WEBHOOK_TOLERANCE", 300)
    try:
        text = payload.decode("utf-8")
        stripe.WebhookSignature.verify_header(
            text, signature, current_app.config["STRIPE_WEBHOOK_SECRET"], tolerance
        )
        stamps = [item.split("=", 1) for item in signature.split(",")]
        signed_at = int(next(value for key, *value in stamps if key == "t")[0])
        if signed_at > time.time() + tolerance:  # the package's own clock, for the past
            raise ValueError("signed in the future")
    except (stripe.SignatureVerificationError, ValueError, UnicodeDecodeError):
        abort(400, "Bad or stale Stripe-Signature: the event was not accepted.")
    try:
        event = json.loads(text)
    except (ValueError, RecursionError):
        event = None
    if not isinstance(event, dict):
        abort(400, "Not a Stripe event: the body is not a JSON object.")
    return event


NOT_STARTED = (
    "The card payment could not be started: the payment provider cannot be reached."
    " The order is kept as pending; retry with POST /orders/{id}/payment."
)


def unavailable(message: str = NOT_STARTED) -> None:
    """Answer 503 with Retry-After: Stripe could not be reached."""
    abort(503, message, headers={"Retry-After": str(RETRY_AFTER)})
