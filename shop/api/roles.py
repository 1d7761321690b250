"""Roles and the permission catalogue (spec 2.4).

Nobody grants or withdraws a permission they do not hold themselves (403), nor changes a
role held by an administrator who holds more than they do (403). The owner role
holds every permission and cannot be changed; built-in roles cannot be renamed or deleted
(409); a role still held by administrators cannot be deleted (409).
"""

from flask import g
from flask.views import MethodView
from marshmallow import Schema, fields, validate

from shop import audit, db
from shop.api.common import (
    Blueprint,
    ChangedSinceQuerySchema,
    Where,
    changed_since,
    page_schema,
    paginate,
)
from shop.api.schemas import Permissions
from shop.auth.roles import check_grant, grant, permissions_of
from shop.clock import now_iso
from shop.http.context import current_actor
from shop.http.decorators import require_auth, require_permission
from shop.http.errors import abort
from shop.http.openapi import responds
from shop.permissions import ALL_PERMISSIONS, ALL_SCOPES, OWNER_ROLE, SCOPES

blp = Blueprint("roles", __name__, description="Roles and permissions.")

RoleName = validate.Regexp(
    r"^[a-z][a-z0-9_-]{0,63}$",
    error="Use 1 to 64 lowercase letters, digits, '-' or '_', starting with a letter.",
)


class RoleSchema(Schema):
    id = fields.String(required=True)
    name = fields.String(required=True)
    builtin = fields.Boolean(required=True)
    permissions = fields.List(fields.String(), required=True)
    created_at = fields.String(required=True)
    updated_at = fields.String(required=True)


class RoleCreateSchema(Schema):
    name = fields.String(required=True, validate=RoleName)
    permissions = Permissions


class RoleUpdateSchema(Schema):
    name = fields.String(validate=RoleName)
    permissions = Permissions


class ScopeSchema(Schema):
    scope = fields.String(required=True)
    permissions = fields.List(fields.String(), required=True)


class CatalogueSchema(Schema):
    permissions = fields.List(fields.String(), required=True)
    scopes = fields.List(fields.Nested(ScopeSchema), required=True)


def _present(row: dict) -> dict:
    return {**row, "builtin": bool(row["builtin"]), "permissions": sorted(row["permissions"])}


def _get(role_id: str) -> dict:
    row = db.one("SELECT * FROM roles WHERE id = :id", {"id": role_id})
    if row is None:
        abort(404, "Role not found.")
    row["permissions"] = permissions_of(role_id)
    return row


def _guard_holders(role: dict) -> None:
    """403 when an administrator holding ``role`` holds permissions the caller does not.

    Changing a role changes everyone who holds it: the rule that nobody changes an
    administrator who holds more than they do covers changing them through their role.
    """
    extras = db.query(
        "SELECT up.permission FROM users u JOIN user_permissions up ON up.user_id = u.id"
        " WHERE u.role_id = :id",
        {"id": role["id"]},
    )
    holders = db.value("SELECT COUNT(*) FROM users WHERE role_id = :id", {"id": role["id"]})
    held = set(role["permissions"]) | {row["permission"] for row in extras} if holders else set()
    if not held <= g.caller.permissions:
        abort(
            403,
            f"Access denied: the role {role['name']!r} is held by administrators who hold"
            " permissions you do not.",
        )


def _set_permissions(role_id: str, permissions) -> None:
    db.execute("DELETE FROM role_permissions WHERE role_id = :id", {"id": role_id})
    grant(role_id, set(permissions))


@blp.route("/permissions")
class Catalogue(MethodView):
    @blp.doc(operationId="listPermissions")
    @blp.response(200, CatalogueSchema)
    @require_auth("admin")
    def get(self):
        """The permission catalogue and the API-key scopes"""
        return {
            "permissions": sorted(ALL_PERMISSIONS),
            "scopes": [{"scope": s, "permissions": sorted(SCOPES[s])} for s in ALL_SCOPES],
        }


@blp.route("/roles")
class Roles(MethodView):
    @blp.doc(operationId="listRoles")
    @blp.arguments(ChangedSinceQuerySchema, location="query")
    @blp.response(200, page_schema(RoleSchema))
    @require_permission("roles.read")
    def get(self, args):
        """List roles, by name"""
        where = Where()
        order = changed_since(where, args) or " ORDER BY name"
        result = paginate("SELECT * FROM roles", "roles", where, order, args)
        for row in result["items"]:
            row["permissions"] = permissions_of(row["id"])
        result["items"] = [_present(row) for row in result["items"]]
        return result

    @blp.doc(operationId="createRole")
    @responds(409, e409="The name is taken.")
    @blp.arguments(RoleCreateSchema)
    @blp.response(201, RoleSchema)
    @require_permission("roles.create")
    def post(self, data):
        """Create a role"""
        permissions = set(data.get("permissions", []))
        check_grant(g.caller, permissions)
        role_id, moment = db.new_id(), now_iso()
        with db.transaction():
            if db.value("SELECT 1 FROM roles WHERE name = :name", {"name": data["name"]}):
                abort(409, f"A role named {data['name']!r} already exists.")
            db.execute(
                "INSERT INTO roles (id, name, builtin, created_at, updated_at)"
                " VALUES (:id, :name, 0, :now, :now)",
                {"id": role_id, "name": data["name"], "now": moment},
            )
            _set_permissions(role_id, permissions)
            audit.record(
                "role.created",
                {"role_id": role_id, "name": data["name"], "permissions": sorted(permissions)},
                actor=current_actor(),
            )
        return _present(_get(role_id))


@blp.route("/roles/<id:role_id>")
class RoleById(MethodView):
    @blp.doc(operationId="getRole")
    @blp.response(200, RoleSchema)
    @require_permission("roles.read")
    def get(self, role_id):
        """One role"""
        return _present(_get(role_id))

    @blp.doc(operationId="updateRole")
    @responds(409, e409="The name is taken, or a built-in role cannot change so.")
    @blp.arguments(RoleUpdateSchema)
    @blp.response(200, RoleSchema)
    @require_permission("roles.update")
    def put(self, data, role_id):
        """Rename a role or replace its permissions

        Fields left out stay as they are.
        """
        with db.transaction():
            role = _get(role_id)
            if role["name"] == OWNER_ROLE:
                abort(409, "The owner role holds every permission and cannot be changed.")
            new_name = data.get("name", role["name"])
            _guard_holders(role)
            if new_name != role["name"]:
                if role["builtin"]:
                    abort(409, f"The built-in role {role['name']!r} cannot be renamed.")
                if db.value("SELECT 1 FROM roles WHERE name = :name", {"name": new_name}):
                    abort(409, f"A role named {new_name!r} already exists.")
            changes = {}
            if "permissions" in data:
                new = set(data["permissions"])
                check_grant(g.caller, new ^ role["permissions"])
                _set_permissions(role_id, new)
                changes["added"] = sorted(new - role["permissions"])
                changes["removed"] = sorted(role["permissions"] - new)
            db.execute(
                "UPDATE roles SET name = :name, updated_at = :now WHERE id = :id",
                {"name": new_name, "now": now_iso(), "id": role_id},
            )
            audit.record(
                "role.updated",
                {"role_id": role_id, "name": new_name, **changes},
                actor=current_actor(),
            )
        return _present(_get(role_id))

    @blp.doc(operationId="deleteRole")
    @responds(409, e409="A built-in role, or one still held.")
    @blp.response(204)
    @require_permission("roles.delete")
    def delete(self, role_id):
        """Delete a role no administrator holds"""
        with db.transaction():
            role = _get(role_id)
            if role["builtin"]:
                abort(409, f"The built-in role {role['name']!r} cannot be deleted.")
            check_grant(g.caller, role["permissions"])
            holders = db.value("SELECT COUNT(*) FROM users WHERE role_id = :id", {"id": role_id})
            if holders:
                abort(409, f"The role {role['name']!r} is held by {holders} administrator(s).")
            db.execute("DELETE FROM roles WHERE id = :id", {"id": role_id})
            audit.record(
                "role.deleted", {"role_id": role_id, "name": role["name"]}, actor=current_actor()
            )
