"""API keys, managed by signed-in administrators only (spec 4.5, 5.3).

An administrator sees and revokes only their own keys; the owner role sees and revokes all,
CLI-made ones included. Someone else's key is a 404, not a 403. A Bearer key can never reach
these routes, not even to manage itself.
"""

from datetime import datetime

from flask import g
from flask.views import MethodView
from marshmallow import Schema, fields, validate

from shop.api.common import Blueprint, PageQuerySchema, page_schema
from shop.auth import api_keys
from shop.auth.decorators import require_permission
from shop.auth.permissions import ALL_SCOPES
from shop.clock import iso, now, utc
from shop.errors import abort
from shop.extensions import limiter

blp = Blueprint("api_keys", __name__, url_prefix="/api-keys", description="Machine API keys.")


class OwnerSchema(Schema):
    id = fields.String(required=True)
    email = fields.String(allow_none=True)


class ApiKeySchema(Schema):
    id = fields.String(required=True)
    label = fields.String(required=True)
    scopes = fields.List(fields.String(), required=True)
    created_at = fields.String(required=True)
    expires_at = fields.String(allow_none=True)
    last_used_at = fields.String(allow_none=True)
    last_used_ip = fields.String(allow_none=True)
    revoked_at = fields.String(allow_none=True)
    status = fields.String(required=True, metadata={"enum": ["active", "expired", "revoked"]})
    source = fields.String(required=True, metadata={"enum": ["admin", "cli"]})
    owner = fields.Nested(OwnerSchema, allow_none=True)


class ApiKeyCreatedSchema(ApiKeySchema):
    secret = fields.String(
        required=True, metadata={"description": "The key itself: shown this once, never again."}
    )


def parse_expiry(value: str) -> str:
    """A future ISO 8601 date or date-time (UTC when no zone is given), as stored."""
    try:
        moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except (AttributeError, ValueError):
        raise ValueError(
            "expires_at: use an ISO 8601 date or date-time, such as 2027-01-31."
        ) from None
    try:
        moment = utc(moment)
    except ValueError as error:
        raise ValueError(f"expires_at: {error}") from None
    if moment <= now():
        raise ValueError("expires_at: must be in the future.")
    return iso(moment)


def issue(data: dict, caller, key_id: str | None = None) -> dict:
    """Create a key from ``ApiKeyCreateSchema`` input: the record plus its secret.

    The one path of the JSON API and the admin console: scopes and expiry are checked (400),
    then the rights ceiling (403).
    """
    try:
        scopes = api_keys.parse_scopes(data["scopes"])
        expires_at = parse_expiry(data["expires_at"]) if data.get("expires_at") else None
    except ValueError as error:
        abort(400, str(error))
    api_keys.check_ceiling(scopes, caller)
    record, secret = api_keys.create(
        data["label"].strip() or data["label"], scopes, expires_at, caller, key_id=key_id
    )
    return {**record, "secret": secret}


class ApiKeyCreateSchema(Schema):
    label = fields.String(required=True, validate=validate.Length(min=1, max=100))
    # Checked by api_keys.parse_scopes, whose message names the offending scope.
    scopes = fields.List(
        fields.String(validate=validate.Length(max=64), metadata={"enum": list(ALL_SCOPES)}),
        required=True,
        metadata={"minItems": 1, "description": "One or more of: " + ", ".join(ALL_SCOPES)},
    )
    expires_at = fields.String(
        allow_none=True,
        validate=validate.Length(max=64),
        metadata={"description": "Optional; a future ISO 8601 date or date-time (UTC by default)."},
    )


class ApiKeyQuerySchema(PageQuerySchema):
    status = fields.String(validate=validate.OneOf(["active", "expired", "revoked"]))


class LeakReportSchema(Schema):
    secret = fields.String(required=True, validate=validate.Length(max=200))


class AcceptedSchema(Schema):
    message = fields.String(required=True)


@blp.route("")
class ApiKeys(MethodView):
    @blp.arguments(ApiKeyQuerySchema, location="query")
    @blp.response(200, page_schema(ApiKeySchema))
    @require_permission("api_key.read", sessions_only=True)
    def get(self, args):
        """List the API keys you may see, newest first

        Never shows a secret or a hash.
        """
        return api_keys.list_page(g.caller, args.get("status"), args["page"], args["page_size"])

    @blp.arguments(ApiKeyCreateSchema)
    @blp.response(201, ApiKeyCreatedSchema)
    @require_permission("api_key.create", sessions_only=True)
    def post(self, data):
        """Create an API key

        The answer holds the secret (`eck_...`) this once; only its SHA-256 is stored. You
        can grant only scopes whose permissions you hold.
        """
        return issue(data, g.caller)


@blp.route("/<id:key_id>")
class ApiKeyById(MethodView):
    @blp.response(200, ApiKeySchema)
    @require_permission("api_key.read", sessions_only=True)
    def get(self, key_id):
        """One API key you may see"""
        record = api_keys.get(key_id, g.caller)
        if record is None:
            abort(404, "API key not found.")
        return record

    @blp.response(204)
    @require_permission("api_key.delete", sessions_only=True)
    def delete(self, key_id):
        """Revoke an API key at once

        The key stays listed with `revoked_at`. Revoking a revoked key answers 204 again.
        """
        if not api_keys.revoke(key_id, g.caller):
            abort(404, "API key not found.")


@blp.route("/revoke-leaked")
class RevokeLeaked(MethodView):
    @limiter.limit("10 per minute")
    @blp.arguments(LeakReportSchema)
    @blp.response(202, AcceptedSchema)
    def post(self, data):
        """Report a leaked API key

        Public: whoever finds a leaked secret can kill it. A matching key is revoked and
        audited; the answer is the same whether or not one matched. Limited to 10 requests
        a minute per address.
        """
        api_keys.revoke_leaked(data["secret"])
        return {"message": "Thank you. If this secret belonged to a live key, it is now revoked."}
