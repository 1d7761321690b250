"""Roles as the service keeps them: the built-in ones seeded (and topped up) by every
``flask db upgrade``, a role's permissions, and the rule that nobody grants what they do not
hold (roles and users). The API's other rules for changing roles are in ``api/roles.py``."""

from shop import db
from shop.auth.keys import cache as key_cache
from shop.clock import now_iso
from shop.errors import Forbidden
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
