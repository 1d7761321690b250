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

from shop import audit, db
from shop.api.common import (
    LIKE,
    Blueprint,
    ChangedSinceQuerySchema,
    StrictBoolean,
    Where,
    changed_since,
    like_pattern,
    page_schema,
    paginate,
)
from shop.api.schemas import Permissions
from shop.auth import lockout, sessions
from shop.auth.keys import cache as key_cache
from shop.auth.passwords import MAX_LENGTH, MIN_LENGTH, hash_password
from shop.auth.roles import check_grant
from shop.auth.users import USER_SELECT, create_user, get_user, role_named, set_extra_permissions
from shop.clock import now_iso
from shop.http.context import current_actor
from shop.http.decorators import require_permission
from shop.http.errors import abort
from shop.http.openapi import responds
from shop.permissions import OWNER_ROLE

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


class UserCreateSchema(Schema):
    email = fields.Email(required=True, validate=validate.Length(max=320))
    name = fields.String(required=True, validate=validate.Length(min=1, max=200))
    password = fields.String(
        required=True, validate=validate.Length(min=MIN_LENGTH, max=MAX_LENGTH)
    )
    role = fields.String(required=True, validate=validate.Length(min=1, max=64))
    permissions = Permissions
    active = StrictBoolean(load_default=True)


class UserUpdateSchema(Schema):
    email = fields.Email(validate=validate.Length(max=320))
    name = fields.String(validate=validate.Length(min=1, max=200))
    password = fields.String(validate=validate.Length(min=MIN_LENGTH, max=MAX_LENGTH))
    role = fields.String(validate=validate.Length(min=1, max=64))
    permissions = Permissions
    active = StrictBoolean()


class UserQuerySchema(ChangedSinceQuerySchema):
    q = fields.String(
        validate=validate.Length(max=200),
        metadata={"description": "Part of the email or name, any case."},
    )
    role = fields.String(validate=validate.Length(max=64))
    active = fields.Boolean()


def _present(row: dict) -> dict:
    extra = set((row["extra_permissions"] or "").split())
    role_perms = set((row["role_permissions"] or "").split())
    return {
        "id": row["id"],
        "email": row["email"],
        "name": row["name"],
        "role": row["role"],
        "permissions": sorted(extra),
        "effective_permissions": sorted(extra | role_perms),
        "active": bool(row["active"]),
        "created_at": row["created_at"],
        "updated_at": row["updated_at"],
    }


def _guard_last_owner(row: dict) -> None:
    """409 when ``row`` is the last active owner (call before demoting, disabling, deleting)."""
    if row["role"] != OWNER_ROLE or not row["active"]:
        return
    others = db.value(
        "SELECT COUNT(*) FROM users u JOIN roles r ON r.id = u.role_id"
        " WHERE r.name = :owner AND u.active = 1 AND u.id <> :id",
        {"owner": OWNER_ROLE, "id": row["id"]},
    )
    if not others:
        abort(409, "This is the last active owner: make another owner first.")


def _guard_target(row: dict) -> None:
    """403 when the target holds permissions the caller does not."""
    if not set(_present(row)["effective_permissions"]) <= g.caller.permissions:
        abort(403, "Access denied: this administrator holds permissions you do not.")


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
            convert=_present,
        )

    @blp.doc(operationId="createUser")
    @responds(409, e409="The email is taken.")
    @blp.arguments(UserCreateSchema)
    @blp.response(201, UserSchema)
    @require_permission("users.create")
    def post(self, data):
        """Create an administrator"""
        role = role_named(data["role"])
        check_grant(g.caller, role["permissions"] | set(data.get("permissions", [])))
        row = create_user(
            data["email"],
            data["name"],
            data["password"],
            data["role"],
            data.get("permissions", []),
            data["active"],
            actor=current_actor(),
        )
        return _present(row)


@blp.route("/<id:user_id>")
class UserById(MethodView):
    @blp.doc(operationId="getUser")
    @blp.response(200, UserSchema)
    @require_permission("users.read")
    def get(self, user_id):
        """One administrator"""
        return _present(get_user(user_id))

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
        new_hash = hash_password(data["password"]) if "password" in data else None
        with db.transaction():
            db.lock("users")
            row = get_user(user_id)
            _guard_target(row)
            changes = {}
            if "role" in data and data["role"] != row["role"]:
                role = role_named(data["role"])
                check_grant(g.caller, role["permissions"])
                _guard_last_owner(row)
                db.execute(
                    "UPDATE users SET role_id = :role_id WHERE id = :id",
                    {"role_id": role["id"], "id": user_id},
                )
                changes["role"] = data["role"]
            if "permissions" in data:
                old = set((row["extra_permissions"] or "").split())
                new = set(data["permissions"])
                check_grant(g.caller, old ^ new)
                set_extra_permissions(user_id, new)
                changes["permissions"] = sorted(new)
            if "active" in data and bool(data["active"]) != bool(row["active"]):
                if not data["active"]:
                    _guard_last_owner(row)
                changes["active"] = data["active"]
            if "email" in data:
                email = data["email"].strip().lower()
                taken = db.value(
                    "SELECT 1 FROM users WHERE email = :email AND id <> :id",
                    {"email": email, "id": user_id},
                )
                if taken:
                    abort(409, f"An administrator with the email {email} already exists.")
                changes["email"] = email
            if "name" in data:
                changes["name"] = data["name"].strip()
            db.execute(
                "UPDATE users SET email = :email, name = :name, active = :active,"
                " password_hash = COALESCE(:hash, password_hash), updated_at = :now"
                " WHERE id = :id",
                {
                    "email": changes.get("email", row["email"]),
                    "name": changes.get("name", row["name"]),
                    "active": changes.get("active", bool(row["active"])),
                    "hash": new_hash,
                    "now": now_iso(),
                    "id": user_id,
                },
            )
            key_cache.changed()  # their keys' ceiling (role, activity) may have moved
            if new_hash is not None or changes.get("active") is False:
                sessions.end_all(sessions.ADMIN, user_id)
            if new_hash is not None:
                changes["password_changed"] = True
            audit.record("user.updated", {"user_id": user_id, **changes}, actor=current_actor())
        return _present(get_user(user_id))

    @blp.doc(operationId="deleteUser")
    @responds(409, e409="The last active owner.")
    @blp.response(204)
    @require_permission("users.delete")
    def delete(self, user_id):
        """Delete an administrator

        Their sessions end and their API keys are revoked at once.
        """
        with db.transaction():
            db.lock("users")
            row = get_user(user_id)
            _guard_target(row)
            _guard_last_owner(row)
            db.execute(
                "UPDATE api_keys SET revoked_at = :now, revoked_by = :by"
                " WHERE owner_id = :id AND revoked_at IS NULL",
                {"now": now_iso(), "by": g.caller.id, "id": user_id},
            )
            db.execute("DELETE FROM users WHERE id = :id", {"id": user_id})
            key_cache.changed()
            audit.record(
                "user.deleted", {"user_id": user_id, "email": row["email"]}, actor=current_actor()
            )


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
        row = get_user(user_id)
        _guard_target(row)
        was_locked = lockout.clear(lockout.account("admin", user_id))
        with db.transaction():
            audit.record(
                "user.unlocked",
                {"user_id": user_id, "email": row["email"], "was_locked": was_locked},
                actor=current_actor(),
            )
