"""Administrators (``users``): each has one role and may hold extra permissions.

Rules beyond the permission on each route:
- nobody grants a permission they do not hold, by role or by extra permission (403);
- nobody changes or deletes an administrator who holds a permission they do not (403), so
  an admin cannot lock out an owner;
- the last active owner cannot be deleted, demoted or deactivated (409);
- deactivating, deleting or re-passwording an administrator ends their sessions at once;
  deleting one also revokes their API keys.
"""

from flask import g
from flask.views import MethodView
from marshmallow import Schema, fields, validate

from shop.api.common import (
    LIKE,
    Blueprint,
    ChangedSinceQuerySchema,
    Where,
    changed_since,
    like_pattern,
    page_schema,
    paginate,
)
from shop.api.store_input import UserCreateSchema, UserUpdateSchema
from shop.auth import staff
from shop.auth.users import USER_SELECT, get_user
from shop.http.decorators import require_permission
from shop.http.openapi import responds

blp = Blueprint("users", __name__, url_prefix="/users", description="Administrators.")


class UserSchema(Schema):
    id = fields.String(required=True)
    email = fields.String(required=True)
    name = fields.String(required=True)
    role = fields.String(required=True)
    permissions = fields.List(
        fields.String(),
        required=True,
        metadata={"description": "Extra permissions held beyond the role's."},
    )
    effective_permissions = fields.List(fields.String(), required=True)
    active = fields.Boolean(required=True)
    created_at = fields.String(required=True)
    updated_at = fields.String(required=True)


class UserQuerySchema(ChangedSinceQuerySchema):
    q = fields.String(
        validate=validate.Length(max=200),
        metadata={"description": "Part of the email or name, any case."},
    )
    role = fields.String(validate=validate.Length(max=64))
    active = fields.Boolean()


@blp.route("")
class Users(MethodView):
    @blp.doc(operationId="listUsers")
    @blp.arguments(UserQuerySchema, location="query")
    @blp.response(200, page_schema(UserSchema))
    @require_permission("users.read")
    def get(self, args):
        """List administrators, by email"""
        where = Where()
        if args.get("q"):
            where.add(f"(LOWER(u.email) {LIKE} OR LOWER(u.name) {LIKE})", q=like_pattern(args["q"]))
        if args.get("role"):
            where.add("r.name = :role", role=args["role"])
        if "active" in args:
            where.add("u.active = :active", active=args["active"])
        order = changed_since(where, args, "u.") or " ORDER BY u.email"
        return paginate(
            USER_SELECT,
            "users u JOIN roles r ON r.id = u.role_id",
            where,
            order,
            args,
            convert=staff.present,
        )

    @blp.doc(operationId="createUser")
    @responds(409, e409="The email is taken.")
    @blp.arguments(UserCreateSchema)
    @blp.response(201, UserSchema)
    @require_permission("users.create")
    def post(self, data):
        """Create an administrator"""
        return staff.create(data, g.caller)


@blp.route("/<id:user_id>")
class UserById(MethodView):
    @blp.doc(operationId="getUser")
    @blp.response(200, UserSchema)
    @require_permission("users.read")
    def get(self, user_id):
        """One administrator"""
        return staff.present(get_user(user_id))

    @blp.doc(operationId="updateUser")
    @responds(409, e409="The email is taken, or this would leave no active owner.")
    @blp.arguments(UserUpdateSchema)
    @blp.response(200, UserSchema)
    @require_permission("users.update")
    def patch(self, data, user_id):
        """Change an administrator

        Fields left out stay as they are. A new password, or `active: false`, ends the
        administrator's sessions.
        """
        return staff.update_user(user_id, data, g.caller)

    @blp.doc(operationId="deleteUser")
    @responds(409, e409="The last active owner.")
    @blp.response(204)
    @require_permission("users.delete")
    def delete(self, user_id):
        """Delete an administrator

        Their sessions end and their API keys are revoked at once.
        """
        staff.delete_user(user_id, g.caller)


@blp.route("/<id:user_id>/unlock")
class UserUnlock(MethodView):
    @blp.response(204)
    @blp.doc(operationId="unlockUser")
    @require_permission("users.update", sessions_only=True)
    def post(self, user_id):
        """Lift an administrator's sign-in lockout

        Forgets the failed sign-ins counted for their account (not a customer's with the same
        email) and the repeats that lengthen the next cool-down. Answers 204 whether or not
        a lockout was in force (audited).
        """
        staff.unlock_user(user_id, g.caller)
