"""The audit log, newest first (``audit.read``; never through an API key)."""

from flask.views import MethodView
from marshmallow import Schema, fields, validate

from shop import audit
from shop.api.common import Blueprint, PageQuerySchema, page_schema, paginate
from shop.api.schemas import ActorSchema
from shop.auth.decorators import require_permission

blp = Blueprint("audit", __name__, url_prefix="/audit-log", description="The audit log.")


class AuditEntrySchema(Schema):
    id = fields.String(required=True)
    at = fields.String(required=True)
    event = fields.String(required=True)
    actor = fields.Nested(ActorSchema, required=True, allow_none=True)
    ip = fields.String(required=True, allow_none=True)
    user_agent = fields.String(required=True, allow_none=True)
    details = fields.Dict(required=True)


class AuditQuerySchema(PageQuerySchema):
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
        clause, params = "", {}
        if args.get("event"):
            clause, params = " WHERE event = :event", {"event": args["event"]}
        return paginate(
            "SELECT * FROM audit_log" + clause + " ORDER BY at DESC, id DESC",
            "SELECT COUNT(*) FROM audit_log" + clause,
            params,
            args,
            convert=audit.present,
        )
