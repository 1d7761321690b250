"""Webhooks (issue 15): endpoints that receive signed events, their delivery log, replay,
ping and secret rotation. The machinery lives in ``shop/webhooks``; ``docs/webhooks.md`` is
the guide.
"""

from flask import g
from flask.views import MethodView
from marshmallow import Schema, fields, validate

from shop.api.common import (
    Blueprint,
    ChangedSinceQuerySchema,
    StrictBoolean,
    page_schema,
)
from shop.http.decorators import require_permission
from shop.http.extensions import caller_key, limiter
from shop.http.openapi import enum_field
from shop.webhooks import store
from shop.webhooks.events import ALL_EVENTS

blp = Blueprint(
    "webhooks", __name__, url_prefix="/webhooks", description="Webhooks: signed event delivery."
)

DELIVERY_STATUSES = ["pending", "succeeded", "failed", "skipped"]

Url = validate.Length(min=1, max=2000)

# Ping and replay are queued for the worker (``shop/webhooks/manual.py``): counted together
# per caller (the key or the administrator), besides the few a webhook may have waiting.
SENDING_LIMIT = "10 per minute"


_caller_key = caller_key("webhook-send")


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
    id = fields.String(required=True)
    at = fields.String(required=True)
    kind = enum_field(
        "WebhookAttemptKind", ["scheduled", "replay", "ping", "skipped"], required=True
    )
    status_code = fields.Integer(required=True, allow_none=True)
    duration_ms = fields.Integer(required=True)
    response_excerpt = fields.String(required=True, allow_none=True)
    error = fields.String(required=True, allow_none=True)


class QueuedSchema(Schema):
    id = fields.String(required=True, metadata={"description": "The attempt's id, once made."})
    kind = enum_field("WebhookRequestKind", ["ping", "replay"], required=True)
    requested_at = fields.String(required=True)


class QueuedAttemptSchema(QueuedSchema):
    webhook_id = fields.String(required=True)
    delivery_id = fields.String(required=True)
    expires_at = fields.String(
        required=True,
        metadata={"description": "Not taken by the worker by then, it is logged as not sent."},
    )


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
    queued = fields.List(
        fields.Nested(QueuedSchema),
        required=True,
        metadata={"description": "Pings and replays asked for and not yet made."},
    )


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
        store.delete(webhook_id, g.caller)


def _queued(request: dict):
    """202 with the queued attempt, and where its outcome will show."""
    where = f"/webhooks/{request['webhook_id']}/deliveries/{request['delivery_id']}"
    return request, 202, {"Location": where}


@blp.route("/<id:webhook_id>/ping")
class WebhookPing(MethodView):
    @blp.doc(operationId="pingWebhook")
    @limiter.shared_limit(SENDING_LIMIT, scope="webhook-send", key_func=_caller_key)
    @blp.response(202, QueuedAttemptSchema, headers={"Location": {"schema": {"type": "string"}}})
    @require_permission("webhooks.update")
    def post(self, webhook_id):
        """Queue a test event

        A `webhook.ping` event, signed like any other, is queued for the worker, which sends
        it within seconds (5 s timeout) and never retries it. The answer (202) is the
        attempt to come: its `id`, and its delivery (`Location`,
        `GET /webhooks/{webhook_id}/deliveries/{delivery_id}`), whose `attempts` show the
        outcome once made and `queued` until then. Not taken within 60 s (the worker down),
        it is logged as not sent. At most 10 pings and replays a minute per caller (429),
        and 3 waiting per webhook (503 with Retry-After).
        """
        return _queued(store.ping(webhook_id))


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


@blp.route("/<id:webhook_id>/deliveries/<id:delivery_id>")
class WebhookDelivery(MethodView):
    @blp.doc(operationId="getWebhookDelivery")
    @blp.response(200, DeliverySchema)
    @require_permission("webhooks.read")
    def get(self, webhook_id, delivery_id):
        """One delivery, with every attempt and the pings or replays still queued"""
        return store.delivery(webhook_id, delivery_id)


@blp.route("/<id:webhook_id>/deliveries/<id:delivery_id>/retry")
class WebhookDeliveryRetry(MethodView):
    @blp.doc(operationId="retryWebhookDelivery")
    @limiter.shared_limit(SENDING_LIMIT, scope="webhook-send", key_func=_caller_key)
    @blp.response(202, QueuedAttemptSchema, headers={"Location": {"schema": {"type": "string"}}})
    @require_permission("webhooks.update")
    def post(self, webhook_id, delivery_id):
        """Queue a replay of a delivery

        The worker sends it again within seconds with the same `webhook-id` (receivers
        deduplicate on it) and a fresh timestamp and signature; a failed replay leaves the
        delivery's retries as they were. The answer (202) is the attempt to come, as for a
        ping; limited as ping is.
        """
        return _queued(store.retry(webhook_id, delivery_id))
