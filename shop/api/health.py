"""Health and metrics: ``/healthz`` (liveness), ``/readyz`` (readiness), ``/metrics``.

Public, cheap and never rate-limited; gunicorn logs them at DEBUG, not in the access log
(gunicorn.conf.py). ``/metrics`` answers 404 unless ``SHOP_METRICS`` (addresses) or
``SHOP_METRICS_TOKEN`` (a bearer token) allows the scraper (docs/operations.md).
"""

import hmac

from flask import Response, current_app, request
from marshmallow import Schema, fields

from shop import metrics
from shop.api.common import Blueprint
from shop.http import health
from shop.http.errors import abort
from shop.http.openapi import responds
from shop.net.addresses import address_allowed
from shop.outages import RETRY_AFTER_UNAVAILABLE
from shop.schema.migrate import RETRY_AFTER

blp = Blueprint("health", __name__, description="Liveness, readiness and metrics, for operators.")

NO_STORE = {"Cache-Control": "no-store"}


class LivenessSchema(Schema):
    status = fields.String(required=True, metadata={"enum": ["ok"]})


class ChecksSchema(Schema):
    database = fields.String(required=True, metadata={"description": '"ok", or why not.'})
    schema = fields.String(required=True, metadata={"description": '"ok", or its version.'})
    redis = fields.String(
        required=True,
        metadata={
            "description": (
                '"ok", "not configured", or why not. A Redis that does not answer does not'
                " make the node unready: the rate limits then count in each process's memory"
                f' and every request is served ("{health.REDIS_FALLBACK}").'
            )
        },
    )


class QueueSchema(Schema):
    pending = fields.Integer(required=True)
    oldest_pending_age_seconds = fields.Float(
        required=True, allow_none=True, metadata={"description": "null when none is pending."}
    )


class OutboxSchema(Schema):
    webhooks = fields.Nested(QueueSchema, required=True)
    mail = fields.Nested(QueueSchema, required=True)


class ReadinessSchema(Schema):
    status = fields.String(required=True, metadata={"enum": ["ready"]})
    checks = fields.Nested(ChecksSchema, required=True)
    outbox = fields.Nested(OutboxSchema, required=True)


@blp.route("/healthz")
@blp.doc(operationId="getLiveness")
@blp.response(200, LivenessSchema)
def healthz():
    """Liveness: the process answers. Calls no dependency."""
    return {"status": "ok"}, 200, NO_STORE


@blp.route("/readyz")
@blp.doc(operationId="getReadiness")
@blp.response(200, ReadinessSchema)
def readyz():
    """Readiness: the database answers and its schema is current.

    Also reports Redis (a Redis that does not answer is reported, `checks.redis`, and the
    node stays ready: rate limits then count in each process's memory) and the outbox:
    messages waiting and the oldest one's age, per queue. Not ready is the `default`
    response: 503 with `Retry-After`, the message naming each failing part
    (`Not ready: database cannot be reached (Unavailable), schema unknown: ...`).
    """
    checks, failing = health.readiness(current_app._get_current_object())
    if failing:
        parts = ", ".join(f"{name} {checks[name]}" for name in failing)
        retry = RETRY_AFTER if failing == ["schema"] else RETRY_AFTER_UNAVAILABLE
        abort(503, f"Not ready: {parts}.", {**NO_STORE, "Retry-After": str(retry)})
    body = {"status": "ready", "checks": checks, "outbox": health.outbox_backlog()}
    return body, 200, NO_STORE


@blp.route("/metrics")
@blp.doc(
    operationId="getMetrics",
    responses={
        "200": {
            "description": "The metrics in Prometheus' text format (docs/operations.md).",
            "content": {"text/plain": {"schema": {"type": "string"}}},
        }
    },
)
@responds(
    403,
    404,
    e403="This address may not scrape (`SHOP_METRICS`).",
    e404="Metrics are off: neither `SHOP_METRICS` nor `SHOP_METRICS_TOKEN` is set.",
)
def metrics_page():
    """Prometheus metrics, in its text format, for an allowed scraper."""
    _allow_scrape()
    text = metrics.render(health.OutboxCollector(current_app._get_current_object()))
    return Response(text, mimetype=metrics.CONTENT_TYPE, headers=NO_STORE)


def _allow_scrape() -> None:
    """Allow an address in ``SHOP_METRICS`` or the bearer of ``SHOP_METRICS_TOKEN``."""
    allowed = current_app.config["METRICS_ALLOW"]
    token = current_app.config["METRICS_TOKEN"]
    if not allowed and not token:
        abort(404, "Not found.")
    if allowed and address_allowed(allowed, request.remote_addr):
        return
    if token:
        scheme, _, sent = request.headers.get("Authorization", "").strip().partition(" ")
        if scheme.lower() == "bearer" and hmac.compare_digest(
            sent.strip().encode(), token.encode()
        ):
            return
        abort(
            401,
            "Send the metrics token: Authorization: Bearer <SHOP_METRICS_TOKEN>.",
            {"WWW-Authenticate": 'Bearer realm="metrics"'},
        )
    abort(403, "This address may not scrape the metrics (SHOP_METRICS).")
