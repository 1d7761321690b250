"""API keys, managed by signed-in administrators only (spec 4.5, 5.3).

An administrator sees and revokes only their own keys; the owner role sees and revokes all,
CLI-made ones included. Someone else's key is a 404, not a 403. A Bearer key can never reach
these routes, not even to manage itself.
"""

from flask import g
from flask.views import MethodView
from marshmallow import Schema, ValidationError, fields, pre_load, validate

from shop.api.common import Blueprint, CreatedSinceQuerySchema, page_schema
from shop.auth.keys import rules as key_rules
from shop.auth.keys import store as key_store
from shop.auth.keys import usage as key_usage
from shop.http.context import origin
from shop.http.decorators import require_permission
from shop.http.errors import abort
from shop.http.extensions import limiter
from shop.http.openapi import enum_field
from shop.permissions import ALL_SCOPES

KEY_STATUSES = ("active", "expired", "revoked")

blp = Blueprint("api_keys", __name__, url_prefix="/api-keys", description="Machine API keys.")


class OwnerSchema(Schema):
    id = fields.String(required=True)
    email = fields.String(required=True, allow_none=True)


class ApiKeySchema(Schema):
    id = fields.String(required=True)
    label = fields.String(required=True)
    scopes = fields.List(fields.String(), required=True)
    created_at = fields.String(required=True)
    expires_at = fields.String(required=True, allow_none=True)
    last_used_at = fields.String(required=True, allow_none=True)
    last_used_ip = fields.String(required=True, allow_none=True)
    revoked_at = fields.String(required=True, allow_none=True)
    status = enum_field("ApiKeyStatus", KEY_STATUSES, required=True)
    source = enum_field("ApiKeySource", ["admin", "cli"], required=True)
    owner = fields.Nested(
        OwnerSchema, required=True, allow_none=True, metadata={"description": "null: CLI-made."}
    )
    expired_reason = enum_field(
        "ApiKeyExpiredReason",
        ["expires_at", "rolled", "unused"],
        validate_input=False,
        required=True,
        allow_none=True,
        metadata={
            "description": "Why an expired key expired: its date passed (`expires_at`), the"
            " grace window after a roll ended (`rolled`), or it went unused for"
            " SHOP_API_KEY_IDLE_DAYS days (`unused`). Null unless `status` is `expired`.",
        },
    )
    idle_expires_at = fields.String(
        required=True,
        allow_none=True,
        metadata={
            "description": "When an active key expires unused if nobody uses it before"
            " (null when idle expiry is off or the key is not active)."
        },
    )
    allowed_ips = fields.List(
        fields.String(),
        required=True,
        allow_none=True,
        metadata={"description": "Addresses and CIDR ranges it is accepted from; null: any."},
    )
    rate_limit_per_minute = fields.Integer(
        required=True,
        allow_none=True,
        metadata={"description": "Its own limit per minute; null: none."},
    )
    rolled_from = fields.String(
        required=True, allow_none=True, metadata={"description": "The key it replaced."}
    )
    rolled_to = fields.String(
        required=True, allow_none=True, metadata={"description": "Its successor."}
    )


class ApiKeyUsageDaySchema(Schema):
    date = fields.String(required=True)
    requests = fields.Integer(required=True)
    unauthorized = fields.Integer(required=True, metadata={"description": "401 answers"})
    forbidden = fields.Integer(required=True, metadata={"description": "403 answers"})
    rate_limited = fields.Integer(required=True, metadata={"description": "429 answers"})


class ApiKeyUsageSchema(Schema):
    since = fields.String(required=True, metadata={"description": "The first day counted."})
    days = fields.List(fields.Nested(ApiKeyUsageDaySchema), required=True)
    requests = fields.Integer(required=True)
    unauthorized = fields.Integer(required=True)
    forbidden = fields.Integer(required=True)
    rate_limited = fields.Integer(required=True)


class ApiKeyDetailSchema(ApiKeySchema):
    usage = fields.Nested(
        ApiKeyUsageSchema,
        required=True,
        metadata={
            "description": "Requests per day over the last 30 days and the refusals among"
            " them; written about once a minute (docs/api-keys.md)."
        },
    )


class ApiKeyCreatedSchema(ApiKeySchema):
    secret = fields.String(
        required=True, metadata={"description": "The key itself: shown this once, never again."}
    )


def _allowed_ips_field():
    return fields.List(
        fields.String(
            validate=validate.Length(max=64),
            metadata={"pattern": r"^[0-9A-Fa-f:.]+(/[0-9]{1,3})?$"},
        ),
        allow_none=True,
        metadata={
            "maxItems": key_rules.MAX_ALLOWED_IPS,
            "description": "Optional: the addresses and CIDR ranges (IPv4 and IPv6) the key is"
            " accepted from, such as `203.0.113.7` or `2001:db8::/32`; null or empty: any."
            " The address is the client's as SHOP_TRUSTED_PROXIES lets the service see it.",
        },
    )


def _rate_limit_field():
    return fields.Integer(
        strict=True,
        allow_none=True,
        validate=validate.Range(min=1, max=100_000),
        metadata={"description": "Optional: at most this many requests a minute (429 beyond)."},
    )


class ApiKeyCreateSchema(Schema):
    label = fields.String(required=True, validate=validate.Length(min=1, max=100))
    # Checked by key_rules.parse_scopes, whose message names the offending scope.
    scopes = fields.List(
        enum_field("ScopeName", ALL_SCOPES, validate_input=False, validate=validate.Length(max=64)),
        required=True,
        metadata={"minItems": 1, "description": "One or more of: " + ", ".join(ALL_SCOPES)},
    )
    expires_at = fields.String(
        allow_none=True,
        validate=validate.Length(max=64),
        metadata={"description": "Optional; a future ISO 8601 date or date-time (UTC by default)."},
    )
    allowed_ips = _allowed_ips_field()
    rate_limit_per_minute = _rate_limit_field()


class ApiKeyUpdateSchema(Schema):
    label = fields.String(validate=validate.Length(min=1, max=100))
    allowed_ips = _allowed_ips_field()
    rate_limit_per_minute = _rate_limit_field()

    @pre_load
    def scopes_are_fixed(self, data, **kwargs):
        """Name the way to other scopes rather than calling them an unknown field."""
        if isinstance(data, dict) and "scopes" in data:
            raise ValidationError(
                {"scopes": ["a key's scopes are fixed: roll it with new scopes instead."]}
            )
        return data


class ApiKeyRollSchema(Schema):
    grace_seconds = fields.Integer(
        strict=True,
        load_default=key_rules.DEFAULT_GRACE_SECONDS,
        validate=validate.Range(min=0, max=key_rules.MAX_GRACE_SECONDS),
        metadata={
            "description": "How long the old key keeps working: 0 to 604800 (7 days);"
            " default 86400 (1 day). Its expiry becomes the earlier of its own and this."
        },
    )
    scopes = fields.List(
        enum_field("ScopeName", ALL_SCOPES, validate_input=False, validate=validate.Length(max=64)),
        metadata={
            "description": "Optional: other scopes for the successor, within the key owner's"
            " current permissions."
        },
    )


class ApiKeyQuerySchema(CreatedSinceQuerySchema):
    status = enum_field("ApiKeyStatus", KEY_STATUSES)


class LeakReportSchema(Schema):
    secret = fields.String(required=True, validate=validate.Length(max=200))


class AcceptedSchema(Schema):
    message = fields.String(required=True)


@blp.route("")
class ApiKeys(MethodView):
    @blp.doc(operationId="listApiKeys")
    @blp.arguments(ApiKeyQuerySchema, location="query")
    @blp.response(200, page_schema(ApiKeySchema))
    @require_permission("api_key.read", sessions_only=True)
    def get(self, args):
        """List the API keys you may see, newest first

        Never shows a secret or a hash.
        """
        return key_store.list_page(
            g.caller, args.get("status"), args["page"], args["page_size"], since=args
        )

    @blp.doc(operationId="createApiKey")
    @blp.arguments(ApiKeyCreateSchema)
    @blp.response(201, ApiKeyCreatedSchema)
    @require_permission("api_key.create", sessions_only=True)
    def post(self, data):
        """Create an API key

        The answer holds the secret (`eck_...`) this once; only its SHA-256 is stored. You
        can grant only scopes whose permissions you hold.
        """
        return key_store.issue(data, g.caller)


@blp.route("/<id:key_id>")
class ApiKeyById(MethodView):
    @blp.doc(operationId="getApiKey")
    @blp.response(200, ApiKeyDetailSchema)
    @require_permission("api_key.read", sessions_only=True)
    def get(self, key_id):
        """One API key you may see, with its usage

        `usage` counts its requests per day over the last 30 days and the 401, 403 and 429
        answers among them; `last_used_at` and `last_used_ip` are its last accepted use.
        """
        record = key_store.get(key_id, g.caller)
        if record is None:
            abort(404, "API key not found.")
        return {**record, "usage": key_usage.summary(key_id)}

    @blp.doc(operationId="updateApiKey")
    @blp.arguments(ApiKeyUpdateSchema)
    @blp.response(200, ApiKeySchema)
    @require_permission("api_key.create", sessions_only=True)
    def patch(self, data, key_id):
        """Change an API key's label, allowed_ips or rate limit

        Scopes stay fixed: roll the key to change them. `allowed_ips: null` (or `[]`) and
        `rate_limit_per_minute: null` remove the rule. A revoked key is 409.
        """
        changes = dict(data)
        if "label" in changes:
            changes["label"] = changes["label"].strip() or changes["label"]
        if "allowed_ips" in changes:
            changes["allowed_ips"] = key_rules.allowed_ips_input(changes["allowed_ips"])
        record = key_store.update(key_id, g.caller, changes)
        if record is None:
            abort(404, "API key not found.")
        return record

    @blp.doc(operationId="revokeApiKey")
    @blp.response(204)
    @require_permission("api_key.delete", sessions_only=True)
    def delete(self, key_id):
        """Revoke an API key at once

        The key stays listed with `revoked_at`. Revoking a revoked key answers 204 again.
        """
        if not key_store.revoke(key_id, g.caller):
            abort(404, "API key not found.")


@blp.route("/<id:key_id>/roll")
class RollApiKey(MethodView):
    @blp.doc(operationId="rollApiKey")
    @blp.arguments(ApiKeyRollSchema)
    @blp.response(201, ApiKeyCreatedSchema)
    @require_permission("api_key.delete", sessions_only=True)
    def post(self, data, key_id):
        """Roll an API key: a successor now, the old key for a grace window

        Creates a key with the same label, scopes (or the `scopes` given, within the key
        owner's current permissions: 403 beyond them), expiry, owner, allowed_ips and limit,
        and answers its secret this once. The old key keeps working for `grace_seconds`
        (default one day) and then expires; both show the link (`rolled_from`, `rolled_to`).
        Rolling a revoked, expired or already rolled key is 409. Needs the right to revoke the
        key.
        """
        return key_store.roll_from(key_id, data, g.caller)


@blp.route("/revoke-leaked")
class RevokeLeaked(MethodView):
    @blp.doc(operationId="reportLeakedApiKey")
    @limiter.limit("10 per minute")
    @blp.arguments(LeakReportSchema)
    @blp.response(202, AcceptedSchema)
    def post(self, data):
        """Report a leaked API key

        Public: whoever finds a leaked secret can kill it. A matching key is revoked and
        audited; the answer is the same whether or not one matched. Limited to 10 requests
        a minute per address.
        """
        key_store.revoke_leaked(data["secret"], origin())
        return {"message": "Thank you. If this secret belonged to a live key, it is now revoked."}
