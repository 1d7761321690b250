"""Roles as the service keeps them: the built-in ones seeded (and topped up) by every
``flask db upgrade``, a role's permissions, and the rule that nobody grants what they do not
hold (roles and users), and the writes of roles for every caller (the API, the console):
create, change, delete, with their rules:

- nobody grants or withdraws a permission they do not hold themselves (``Forbidden``), nor
  changes a role held by an administrator who holds more than they do (``Forbidden``);
- the owner role holds every permission and cannot be changed; built-in roles cannot be
  renamed or deleted; a role still held cannot be deleted; names are unique (``Conflict``).

``caller`` is the acting administrator (its ``permissions`` are the ceiling, its ``actor``
is named in the audit log).
"""

from shop import audit, db
from shop.auth.keys import cache as key_cache
from shop.clock import now_iso
from shop.errors import Conflict, Forbidden, NotFound
from shop.permissions import BUILTIN_ROLES, OWNER_ROLE


def seed_builtin_roles() -> None:
    """Create the missing built-in roles with their permissions; the owner role always holds
    everything.

    The other built-in roles are left as the operator made them: a permission the catalogue
    gains later reaches them once, by the migration that adds it (0013 for pricing), so a
    right an operator withdrew stays withdrawn.
    """
    moment = now_iso()
    for name, permissions in BUILTIN_ROLES.items():
        role_id = db.value("SELECT id FROM roles WHERE name = :name", {"name": name})
        if role_id is None:
            role_id = db.new_id()
            db.execute(
                "INSERT INTO roles (id, name, builtin, created_at, updated_at)"
                " VALUES (:id, :name, 1, :now, :now)",
                {"id": role_id, "name": name, "now": moment},
            )
            missing = permissions
        elif name == OWNER_ROLE:
            missing = permissions - permissions_of(role_id)
        else:
            continue
        grant(role_id, missing)


def permissions_of(role_id: str) -> frozenset[str]:
    """The permissions a role holds."""
    return frozenset(
        r["permission"]
        for r in db.query(
            "SELECT permission FROM role_permissions WHERE role_id = :id", {"id": role_id}
        )
    )


def role_by_name(name: str) -> dict | None:
    """A role's row and its permissions, by name."""
    row = db.one("SELECT * FROM roles WHERE name = :name", {"name": name})
    if row is not None:
        row["permissions"] = permissions_of(row["id"])
    return row


def grant(role_id: str, permissions) -> None:
    """Add ``permissions`` to a role (one statement for them all)."""
    key_cache.changed()  # the ceiling of its holders' keys
    db.execute_many(
        "INSERT INTO role_permissions (role_id, permission) VALUES (:role_id, :permission)",
        [{"role_id": role_id, "permission": p} for p in sorted(permissions)],
    )


def check_grant(caller, permissions) -> None:
    """403 unless ``caller`` holds every permission in ``permissions``."""
    lacking = sorted(set(permissions) - caller.permissions)
    if lacking:
        raise Forbidden(f"Access denied: you cannot grant or withdraw {', '.join(lacking)}.")


def get_role(role_id: str) -> dict:
    """A role's row and its permissions, or ``NotFound``."""
    row = db.one("SELECT * FROM roles WHERE id = :id", {"id": role_id})
    if row is None:
        raise NotFound("Role not found.")
    row["permissions"] = permissions_of(role_id)
    return row


def all_roles() -> list[dict]:
    """Every role with its permissions, by name."""
    rows = db.query("SELECT * FROM roles ORDER BY name")
    for row in rows:
        row["permissions"] = permissions_of(row["id"])
    return rows


def _guard_holders(role: dict, caller) -> None:
    """``Forbidden`` when an administrator holding ``role`` holds permissions the caller does
    not.

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
    if not held <= caller.permissions:
        raise Forbidden(
            f"Access denied: the role {role['name']!r} is held by administrators who hold"
            " permissions you do not."
        )


def _set_permissions(role_id: str, permissions) -> None:
    db.execute("DELETE FROM role_permissions WHERE role_id = :id", {"id": role_id})
    grant(role_id, set(permissions))


def create_role(data: dict, caller) -> dict:
    """Create a role ``{"name", "permissions"}`` within ``caller``'s ceiling; answer it."""
    permissions = set(data.get("permissions", []))
    check_grant(caller, permissions)
    role_id, moment = db.new_id(), now_iso()
    with db.transaction():
        if db.value("SELECT 1 FROM roles WHERE name = :name", {"name": data["name"]}):
            raise Conflict(f"A role named {data['name']!r} already exists.")
        db.execute(
            "INSERT INTO roles (id, name, builtin, created_at, updated_at)"
            " VALUES (:id, :name, 0, :now, :now)",
            {"id": role_id, "name": data["name"], "now": moment},
        )
        _set_permissions(role_id, permissions)
        audit.record(
            "role.created",
            {"role_id": role_id, "name": data["name"], "permissions": sorted(permissions)},
            actor=caller.actor,
        )
    return get_role(role_id)


def update_role(role_id: str, data: dict, caller) -> dict:
    """Rename a role or replace its permissions (the fields given), within ``caller``'s
    ceiling; answer it."""
    with db.transaction():
        role = get_role(role_id)
        if role["name"] == OWNER_ROLE:
            raise Conflict("The owner role holds every permission and cannot be changed.")
        new_name = data.get("name", role["name"])
        _guard_holders(role, caller)
        if new_name != role["name"]:
            if role["builtin"]:
                raise Conflict(f"The built-in role {role['name']!r} cannot be renamed.")
            if db.value("SELECT 1 FROM roles WHERE name = :name", {"name": new_name}):
                raise Conflict(f"A role named {new_name!r} already exists.")
        changes = {}
        if "permissions" in data:
            new = set(data["permissions"])
            check_grant(caller, new ^ role["permissions"])
            _set_permissions(role_id, new)
            changes["added"] = sorted(new - role["permissions"])
            changes["removed"] = sorted(role["permissions"] - new)
        db.execute(
            "UPDATE roles SET name = :name, updated_at = :now WHERE id = :id",
            {"name": new_name, "now": now_iso(), "id": role_id},
        )
        audit.record(
            "role.updated", {"role_id": role_id, "name": new_name, **changes}, actor=caller.actor
        )
    return get_role(role_id)


def delete_role(role_id: str, caller) -> None:
    """Delete a role no administrator holds (not a built-in one), within ``caller``'s
    ceiling."""
    with db.transaction():
        role = get_role(role_id)
        if role["builtin"]:
            raise Conflict(f"The built-in role {role['name']!r} cannot be deleted.")
        check_grant(caller, role["permissions"])
        holders = db.value("SELECT COUNT(*) FROM users WHERE role_id = :id", {"id": role_id})
        if holders:
            raise Conflict(f"The role {role['name']!r} is held by {holders} administrator(s).")
        db.execute("DELETE FROM roles WHERE id = :id", {"id": role_id})
        audit.record("role.deleted", {"role_id": role_id, "name": role["name"]}, actor=caller.actor)


def holders() -> dict[str, int]:
    """How many administrators hold each role, by role id (roles nobody holds are absent)."""
    rows = db.query("SELECT role_id, COUNT(*) AS n FROM users GROUP BY role_id")
    return {row["role_id"]: row["n"] for row in rows}
