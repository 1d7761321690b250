"""The only module that talks to Stripe, through the official ``stripe`` package (16.1.0).

Every call is made outside any database transaction, with no automatic retries, its own
connect and read timeouts, through the app's ``Circuit`` (a concurrency bound and a breaker),
with idempotency keys derived from our ids. It raises ``Unavailable`` (may work later: 503
with ``Retry-After``) or ``Refused`` (Stripe said no): docs/payments.md, "When Stripe says
no". ``STRIPE_API_BASE`` is for the test suite's fake (tests/fake_stripe.py) only.
"""

import json
import re
import time
from typing import TYPE_CHECKING

from flask import current_app

from shop import metrics
from shop.errors import Deferred, Invalid
from shop.net.circuit import Circuit, NotCalled

if TYPE_CHECKING:
    import stripe

RETRY_AFTER = 30
BUSY_RETRY_AFTER = 5
_KEY = re.compile(r"\b[a-z]{2,4}_(?:live|test)_[A-Za-z0-9*]+")


class Unavailable(Exception):
    """Stripe could not be reached, failed (5xx), asked us to slow down (429, 409), or is
    not called now (this process's slots are busy, the breaker is open): the same request
    may succeed after ``retry_after`` seconds."""

    def __init__(self, why: str, retry_after: int = RETRY_AFTER):
        super().__init__(why)
        self.retry_after = retry_after


class Refused(Exception):
    """Stripe answered no (a 4xx): the same request will be refused again.

    ``status`` is what the shop answers: 409 when the request does not fit what Stripe holds
    or allows (``amount_too_large``, ``charge_already_refunded``...), 502 when Stripe refuses
    the shop's own key or its permissions (401, 403: the operator must act). ``reason``
    names Stripe's code and message, never the key.
    """

    def __init__(self, status: int, code: str, message: str):
        self.status, self.code = status, code
        self.reason = f"{code}: {message}" if message else code
        super().__init__(self.reason)


def configured(config=None) -> bool:
    """Whether both the API key and the webhook secret are set."""
    config = config if config is not None else current_app.config
    return bool(config.get("STRIPE_API_KEY") and config.get("STRIPE_WEBHOOK_SECRET"))


def _sdk():
    """The ``stripe`` package, imported when first called: with the httpx it brings, ~10 MB
    that a shop without Stripe, and a worker that has not called it yet, does not hold."""
    import stripe

    return stripe


def _client() -> "stripe.StripeClient":
    stripe = _sdk()
    config = current_app.config
    client = current_app.extensions.get("shop.stripe")
    if client is None:
        base = config.get("STRIPE_API_BASE")
        # requests takes (connect, read): a Stripe that never accepts is given up on after
        # the connect timeout, one that accepts and never answers after the read timeout.
        timeout = (config["STRIPE_CONNECT_TIMEOUT"], config["STRIPE_TIMEOUT"])
        client = stripe.StripeClient(
            config["STRIPE_API_KEY"],
            base_addresses={"api": base} if base else None,
            max_network_retries=0,
            http_client=stripe.RequestsClient(timeout=timeout),
        )
        current_app.extensions["shop.stripe"] = client
    return client


def circuit() -> Circuit:
    """This app's (this process's) slots and breaker for calls to Stripe."""
    found = current_app.extensions.get("shop.stripe_circuit")
    if found is None:
        config = current_app.config
        clock = config.get("CLOCK")
        found = current_app.extensions.setdefault(
            "shop.stripe_circuit",
            Circuit(
                "Stripe",
                slots=config["STRIPE_CONCURRENCY"],
                failures=config["STRIPE_BREAKER_FAILURES"],
                cooldown=config["STRIPE_BREAKER_COOLDOWN"],
                busy_retry_after=BUSY_RETRY_AFTER,
                **({"clock": lambda: clock().timestamp()} if clock else {}),
            ),
        )
    return found


def _call(method, params: dict, key: str | None = None):
    options = {"idempotency_key": key} if key else {}
    stripe = _sdk()
    try:
        with circuit().call((stripe.APIConnectionError,)):
            return method(params=params, options=options)
    except NotCalled as error:
        raise Unavailable(f"not called: {error.reason}", error.retry_after) from error
    except stripe.StripeError as error:
        raise _classified(error) from error


def _classified(error: "stripe.StripeError") -> Exception:
    """``Unavailable`` or ``Refused`` for an error of the stripe package (logged once)."""
    status = error.http_status
    kind = type(error).__name__
    if status is None or not 400 <= status < 500 or status in (409, 429):
        current_app.logger.warning("stripe call failed: %s (%s)", kind, status)
        cooldown = max(1, round(current_app.config["STRIPE_BREAKER_COOLDOWN"]))
        return Unavailable(kind, min(RETRY_AFTER, cooldown))
    details = error.error
    code = (
        error.code
        or {401: "authentication_error", 403: "permission_error"}.get(status)
        or (details.get("type") if details else None)
        or f"http_{status}"
    )
    if status in (401, 403):
        current_app.logger.error(
            "Stripe refused the shop's API key (%s %s): check STRIPE_API_KEY", status, code
        )
        message = "Stripe refused the shop's API key or its permissions; the operator must fix it."
        return Refused(502, code, message)
    message = _KEY.sub("[key]", (error.user_message or "").strip())[:300]
    current_app.logger.warning("stripe refused the call: %s (%s %s)", kind, status, code)
    return Refused(409, code, message)


def create_intent(order: dict):
    """The order's PaymentIntent: created once (the key is derived from the order id), for
    its payment's amount (the total, less a draft order's credit: shop/drafts)."""
    params = {
        "amount": order["amount_cents"],
        "currency": order["currency"].lower(),
        "metadata": {"order_id": order["id"], "order_number": order["number"]},
        "automatic_payment_methods": {"enabled": True},
    }
    return _call(_client().v1.payment_intents.create, params, f"order-{order['id']}-intent")


def create_balance_intent(balance: dict, order: dict):
    """A PaymentIntent for a balance an edit left due (``payments/stripe/balance.py``):
    created once per balance payment (the key is derived from its id), for its amount, its
    metadata naming the order and that it is a balance."""
    params = {
        "amount": balance["amount_cents"],
        "currency": balance["currency"].lower(),
        "metadata": {
            "order_id": order["id"],
            "order_number": order["number"],
            "kind": "balance",
            "balance_payment_id": balance["id"],
        },
        "automatic_payment_methods": {"enabled": True},
    }
    return _call(_client().v1.payment_intents.create, params, f"balance-{balance['id']}-intent")


def cancel_balance_intent(intent_id: str, balance_id: str):
    """Cancel a balance's intent no longer asked for (the balance changed); answer it as
    ``cancel_intent`` does."""
    return _cancel(intent_id, "abandoned", f"balance-{balance_id}-cancel")


def retrieve_intent(intent_id: str):
    return _call(lambda params, options: _client().v1.payment_intents.retrieve(intent_id), {})


def cancel_intent(intent_id: str, order_id: str, reason: str):
    """Cancel the order's intent (the key is derived from the order); answer the intent as
    Stripe holds it then: ``canceled``, or, when Stripe refuses because it can no longer be
    cancelled (``payment_intent_unexpected_state``: succeeded, already canceled), as it is."""
    return _cancel(intent_id, reason, f"order-{order_id}-intent-cancel")


def _cancel(intent_id: str, reason: str, key: str):
    intents = _client().v1.payment_intents

    def cancel(params, options):
        try:
            return intents.cancel(intent_id, params=params, options=options)
        except _sdk().InvalidRequestError as error:
            if error.code != "payment_intent_unexpected_state":
                raise
            return intents.retrieve(intent_id)

    return _call(cancel, {"cancellation_reason": reason}, key)


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


def create_refund(intent_id: str, amount_cents: int, refund_id: str, order_id: str, part: int = 0):
    """Refund ``amount_cents`` of the intent; the key is our refund's id (and, past its first
    part, the part's number: a refund split over the order's intents)."""
    params = {
        "payment_intent": intent_id,
        "amount": amount_cents,
        "metadata": {"order_id": order_id, "refund_id": refund_id},
    }
    if part:
        params["metadata"]["part"] = str(part)
    key = f"refund-{refund_id}" + (f"-{part}" if part else "")
    return _call(_client().v1.refunds.create, params, key)


def list_refunds(intent_id: str) -> list:
    return list(_call(_client().v1.refunds.list, {"payment_intent": intent_id, "limit": 100}).data)


def verify(payload: bytes, signature: str | None) -> dict:
    """The event of a webhook request, or a 400 if its signature is bad, its time more than
    the tolerance (5 min) away from now, in the past (the stripe package checks that) or in
    the future (we do: a signature dated ahead would stay replayable that long), or its body
    is not a JSON object."""
    if not signature:
        raise Invalid("Missing Stripe-Signature header.")
    tolerance = current_app.config.get("STRIPE_WEBHOOK_TOLERANCE", 300)
    stripe = _sdk()
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
        raise Invalid("Bad or stale Stripe-Signature: the event was not accepted.") from None
    try:
        event = json.loads(text)
    except (ValueError, RecursionError):
        event = None
    if not isinstance(event, dict):
        raise Invalid("Not a Stripe event: the body is not a JSON object.")
    return event


NOT_STARTED = (
    "The card payment could not be started: the payment provider cannot be reached."
    " The order is kept as pending; retry with POST /orders/{id}/payment."
)


def unavailable(message: str = NOT_STARTED, error: Unavailable | None = None) -> None:
    """Answer 503 with Retry-After: Stripe could not be reached (or is not called now)."""
    retry_after = error.retry_after if error is not None else RETRY_AFTER
    metrics.count_outage("stripe")
    raise Deferred(message, headers={"Retry-After": str(retry_after)})
