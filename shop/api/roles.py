"""Roles and the permission catalogue (spec 2.4).

Nobody grants or withdraws a permission they do not hold themselves (403), nor changes a
role held by an administrator who holds more than they do (403). The owner role
holds every permission and cannot be changed; built-in roles cannot be renamed or deleted
(409); a role still held by administrators cannot be deleted (409).
"""

from flask import g
from flask.views import MethodView
from marshmallow import Schema, fields

from shop.api.common import (
    Blueprint,
    ChangedSinceQuerySchema,
    Where,
    changed_since,
    page_schema,
    paginate,
)
from shop.api.store_input import RoleCreateSchema, RoleUpdateSchema
from shop.auth.roles import create_role, delete_role, get_role, permissions_of, update_role
from shop.http.decorators import require_auth, require_permission
from shop.http.openapi import responds
from shop.permissions import ALL_PERMISSIONS, ALL_SCOPES, SCOPES

blp = Blueprint("roles", __name__, description="Roles and permissions.")


class RoleSchema(Schema):
    id = fields.String(required=True)
    name = fields.String(required=True)
    builtin = fields.Boolean(required=True)
    permissions = fields.List(fields.String(), required=True)
    created_at = fields.String(required=True)
    updated_at = fields.String(required=True)


class ScopeSchema(Schema):
    scope = fields.String(required=True)
    permissions = fields.List(fields.String(), required=True)


class CatalogueSchema(Schema):
    permissions = fields.List(fields.String(), required=True)
    scopes = fields.List(fields.Nested(ScopeSchema), required=True)


def _present(row: dict) -> dict:
    return {**row, "builtin": bool(row["builtin"]), "permissions": sorted(row["permissions"])}


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
        return _present(create_role(data, g.caller))


@blp.route("/roles/<id:role_id>")
class RoleById(MethodView):
    @blp.doc(operationId="getRole")
    @blp.response(200, RoleSchema)
    @require_permission("roles.read")
    def get(self, role_id):
        """One role"""
        return _present(get_role(role_id))

    @blp.doc(operationId="updateRole")
    @responds(409, e409="The name is taken, or a built-in role cannot change so.")
    @blp.arguments(RoleUpdateSchema)
    @blp.response(200, RoleSchema)
    @require_permission("roles.update")
    def put(self, data, role_id):
        """Rename a role or replace its permissions

        Fields left out stay as they are.
        """
        return _present(update_role(role_id, data, g.caller))

    @blp.doc(operationId="deleteRole")
    @responds(409, e409="A built-in role, or one still held.")
    @blp.response(204)
    @require_permission("roles.delete")
    def delete(self, role_id):
        """Delete a role no administrator holds"""
        delete_role(role_id, g.caller)
