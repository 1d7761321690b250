"""Webhooks (issue 15): endpoints that receive signed events, their delivery log, replay,
ping and secret rotation. The machinery lives in ``shop/webhooks``; ``docs/webhooks.md`` is
the guide.
"""

from flask import current_app, g
from flask.views import MethodView
from marshmallow import Schema, fields, validate

from shop.api.common import (
    Blueprint,
    ChangedSinceQuerySchema,
    StrictBoolean,
    page_schema,
)
from shop.auth.decorators import require_permission
from shop.extensions import limiter
from shop.openapi import enum_field
from shop.webhooks import store
from shop.webhooks.events import ALL_EVENTS

blp = Blueprint(
    "webhooks", __name__, url_prefix="/webhooks", description="Webhooks: signed event delivery."
)

DELIVERY_STATUSES = ["pending", "succeeded", "failed", "skipped"]

Url = validate.Length(min=1, max=2000)

# Ping and replay send during the request: counted together per caller (the key or the
# administrator), besides the few at once ``store`` lets run.
SENDING_LIMIT = "10 per minute"


def _caller_key() -> str:
    caller = g.get("caller")
    who = f"{caller.kind}:{caller.id}" if caller else "anonymous"
    return f"{current_app.config['RATELIMIT_KEY_PREFIX']}:webhook-send:{who}"


Description = validate.Length(max=500)


def events_field(**kwargs) -> fields.List:
    """A list of event names (checked by ``store.check_events``, whose message names one)."""
    return fields.List(
        enum_field(
            "WebhookEvent", ALL_EVENTS, validate_input=False, validate=validate.Length(max=64)
        ),
        metadata={"minItems": 1, "description": "One or more of: " + ", ".join(ALL_EVENTS)},
        **kwargs,
    )


class CreatorSchema(Schema):
    kind = enum_field("WebhookCreatorKind", ["admin", "api_key"], required=True)
    id = fields.String(required=True, allow_none=True)


class WebhookSchema(Schema):
    id = fields.String(required=True)
    url = fields.String(required=True)
    description = fields.String(required=True)
    events = fields.List(enum_field("WebhookEvent", ALL_EVENTS), required=True)
    enabled = fields.Boolean(required=True)
    disabled_reason = fields.String(required=True, allow_none=True)
    disabled_at = fields.String(required=True, allow_none=True)
    created_at = fields.String(required=True)
    updated_at = fields.String(required=True)
    last_success_at = fields.String(required=True, allow_none=True)
    failing_since = fields.String(
        required=True,
        allow_none=True,
        metadata={"description": "First failed attempt since the last success."},
    )
    previous_secret_expires_at = fields.String(
        required=True,
        allow_none=True,
        metadata={"description": "Until then the secret before the last rotation signs too."},
    )
    created_by = fields.Nested(CreatorSchema, required=True)


class WebhookCreatedSchema(WebhookSchema):
    secret = fields.String(
        required=True,
        metadata={"description": "The signing secret (`whsec_...`): shown this once, never again."},
    )


class WebhookCreateSchema(Schema):
    url = fields.String(required=True, validate=Url)
    events = events_field(required=True)
    description = fields.String(load_default="", validate=Description)


class WebhookUpdateSchema(Schema):
    url = fields.String(validate=Url)
    events = events_field()
    description = fields.String(allow_none=True, validate=Description)
    enabled = StrictBoolean()


class AttemptSchema(Schema):
    at = fields.String(required=True)
    kind = enum_field(
        "WebhookAttemptKind", ["scheduled", "replay", "ping", "skipped"], required=True
    )
    status_code = fields.Integer(required=True, allow_none=True)
    duration_ms = fields.Integer(required=True)
    response_excerpt = fields.String(required=True, allow_none=True)
    error = fields.String(required=True, allow_none=True)


class DeliverySchema(Schema):
    id = fields.String(required=True)
    webhook_id = fields.String(required=True)
    message_id = fields.String(
        required=True, metadata={"description": "The `webhook-id` header of every attempt."}
    )
    event_id = fields.String(required=True)
    event_type = fields.String(required=True)
    status = enum_field("WebhookDeliveryStatus", DELIVERY_STATUSES, required=True)
    attempt_count = fields.Integer(required=True)
    next_attempt_at = fields.String(required=True, allow_none=True)
    created_at = fields.String(required=True)
    updated_at = fields.String(required=True)
    attempts = fields.List(fields.Nested(AttemptSchema), required=True)


class DeliveryQuerySchema(ChangedSinceQuerySchema):
    status = enum_field("WebhookDeliveryStatus", DELIVERY_STATUSES)


@blp.route("")
class Webhooks(MethodView):
    @blp.doc(operationId="listWebhooks")
    @blp.arguments(ChangedSinceQuerySchema, location="query")
    @blp.response(200, page_schema(WebhookSchema))
    @require_permission("webhooks.read")
    def get(self, args):
        """List webhooks, newest first, with their health"""
        return store.list_page(args["page"], args["page_size"], since=args)

    @blp.doc(operationId="createWebhook")
    @blp.arguments(WebhookCreateSchema)
    @blp.response(201, WebhookCreatedSchema)
    @require_permission("webhooks.create")
    def post(self, data):
        """Create a webhook

        The answer holds the signing secret (`whsec_...`) this once. Each event needs the
        read right of what it carries (`order.*`: `orders.read`, ...), within your ceiling.
        """
        return store.create(data, g.caller)


@blp.route("/<id:webhook_id>")
class WebhookById(MethodView):
    @blp.doc(operationId="getWebhook")
    @blp.response(200, WebhookSchema)
    @require_permission("webhooks.read")
    def get(self, webhook_id):
        """One webhook"""
        return store.found(webhook_id)

    @blp.doc(operationId="updateWebhook")
    @blp.arguments(WebhookUpdateSchema)
    @blp.response(200, WebhookSchema)
    @require_permission("webhooks.update")
    def patch(self, data, webhook_id):
        """Change a webhook's url, events, description or enabled

        Changing the url or the events makes you its creator: your rights must cover every
        event it keeps. Enabling a disabled webhook clears its failure record.
        """
        return store.update(webhook_id, data, g.caller)

    @blp.doc(operationId="deleteWebhook")
    @blp.response(204)
    @require_permission("webhooks.delete")
    def delete(self, webhook_id):
        """Delete a webhook and its delivery log"""
        store.delete(webhook_id)


@blp.route("/<id:webhook_id>/ping")
class WebhookPing(MethodView):
    @blp.doc(operationId="pingWebhook")
    @limiter.shared_limit(SENDING_LIMIT, scope="webhook-send", key_func=_caller_key)
    @blp.response(200, DeliverySchema)
    @require_permission("webhooks.update")
    def post(self, webhook_id):
        """Send a test event now

        A `webhook.ping` event is sent at once, signed like any other, and never retried;
        the answer is its delivery with the attempt's outcome. At most 10 pings and replays
        a minute per caller (429), and only a few at once per server: 503 with Retry-After
        while they are busy.
        """
        return store.ping(webhook_id, g.caller)


@blp.route("/<id:webhook_id>/rotate-secret")
class WebhookRotateSecret(MethodView):
    @blp.doc(operationId="rotateWebhookSecret")
    @blp.response(200, WebhookCreatedSchema)
    @require_permission("webhooks.update")
    def post(self, webhook_id):
        """Rotate the signing secret

        The answer holds the new secret this once. For 24 hours every delivery carries two
        signatures, with the new secret and the old, so receivers can switch without a gap.
        Whoever holds the secret can sign the webhook's events: you need the read right of
        every event it subscribes to, as for creating it (403 otherwise).
        """
        return store.rotate_secret(webhook_id, g.caller)


@blp.route("/<id:webhook_id>/deliveries")
class WebhookDeliveries(MethodView):
    @blp.doc(operationId="listWebhookDeliveries")
    @blp.arguments(DeliveryQuerySchema, location="query")
    @blp.response(200, page_schema(DeliverySchema))
    @require_permission("webhooks.read")
    def get(self, args, webhook_id):
        """A webhook's delivery log, newest first

        Each delivery with every attempt: time, status code, duration, a response excerpt
        and the next retry.
        """
        return store.deliveries_page(
            webhook_id, args.get("status"), args["page"], args["page_size"], since=args
        )


@blp.route("/<id:webhook_id>/deliveries/<id:delivery_id>/retry")
class WebhookDeliveryRetry(MethodView):
    @blp.doc(operationId="retryWebhookDelivery")
    @limiter.shared_limit(SENDING_LIMIT, scope="webhook-send", key_func=_caller_key)
    @blp.response(200, DeliverySchema)
    @require_permission("webhooks.update")
    def post(self, webhook_id, delivery_id):
        """Replay a delivery now

        Sent at once with the same `webhook-id` (receivers deduplicate on it) and a fresh
        timestamp and signature; a failed replay leaves the delivery's retries as they were.
        Limited as ping is: 429 past 10 a minute per caller, 503 with Retry-After while the
        server's few sending slots are busy.
        """
        return store.retry(webhook_id, delivery_id, g.caller)
