"""The audit log, newest first (``audit.read``; never through an API key)."""

from flask.views import MethodView
from marshmallow import Schema, fields, validate

from shop import audit
from shop.api.common import (
    Blueprint,
    CreatedSinceQuerySchema,
    Where,
    changed_since,
    page_schema,
    paginate,
)
from shop.api.schemas import ActorSchema
from shop.http.decorators import require_permission

blp = Blueprint("audit", __name__, url_prefix="/audit-log", description="The audit log.")


class AuditEntrySchema(Schema):
    id = fields.String(required=True)
    at = fields.String(required=True)
    event = fields.String(required=True)
    actor = fields.Nested(ActorSchema, required=True, allow_none=True)
    ip = fields.String(required=True, allow_none=True)
    user_agent = fields.String(required=True, allow_none=True)
    details = fields.Dict(required=True)


class AuditQuerySchema(CreatedSinceQuerySchema):
    event = fields.String(
        validate=validate.Length(max=100),
        metadata={"description": "Only entries of this event, such as `login.failed`."},
    )


@blp.route("")
class AuditLog(MethodView):
    @blp.doc(operationId="listAuditLog")
    @blp.arguments(AuditQuerySchema, location="query")
    @blp.response(200, page_schema(AuditEntrySchema))
    @require_permission("audit.read")
    def get(self, args):
        """The audit log, newest first"""
        where = Where()
        if args.get("event"):
            where.add("event = :event", event=args["event"])
        changed_since(where, args, updated=False, created="at")  # an entry never changes
        return paginate(
            "SELECT * FROM audit_log",
            "audit_log",
            where,
            "at DESC, id DESC",
            args,
            convert=audit.present,
        )
