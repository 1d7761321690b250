"""Creating administrators: the use case the API (``POST /users``), the CLI (``flask users
create``) and the tests share, and the reads it needs."""

from shop import audit, db
from shop.actor import NOBODY, Actor
from shop.auth.keys import cache as key_cache
from shop.auth.passwords import hash_password
from shop.auth.roles import role_by_name
from shop.clock import now_iso
from shop.errors import Conflict, Invalid, NotFound

USER_SELECT = """
    SELECT u.id, u.email, u.name, u.active, u.role_id, u.created_at, u.updated_at,
           r.name AS role,
           (SELECT string_agg(up.permission, ' ') FROM user_permissions up
             WHERE up.user_id = u.id) AS extra_permissions,
           (SELECT string_agg(rp.permission, ' ') FROM role_permissions rp
             WHERE rp.role_id = u.role_id) AS role_permissions
    FROM users u JOIN roles r ON r.id = u.role_id"""


def get_user(user_id: str) -> dict:
    """An administrator's row with role and permissions; 404 when there is none."""
    row = db.one(USER_SELECT + " WHERE u.id = :id", {"id": user_id})
    if row is None:
        raise NotFound("User not found.")
    return row


def role_named(name: str) -> dict:
    """A role by name; 400 naming the roles there are when there is none."""
    role = role_by_name(name)
    if role is None:
        known = ", ".join(r["name"] for r in db.query("SELECT name FROM roles ORDER BY name"))
        raise Invalid(f"role: unknown role {name!r}; the roles are {known}.")
    return role


def set_extra_permissions(user_id: str, permissions) -> None:
    """Replace an administrator's extra permissions (inside the caller's transaction)."""
    key_cache.changed()  # the ceiling of the keys they own
    db.execute("DELETE FROM user_permissions WHERE user_id = :id", {"id": user_id})
    db.execute_many(
        "INSERT INTO user_permissions (user_id, permission) VALUES (:user_id, :permission)",
        [{"user_id": user_id, "permission": p} for p in sorted(set(permissions))],
    )


def create_user(
    email: str,
    name: str,
    password: str,
    role: str,
    permissions=(),
    active: bool = True,
    *,
    actor: Actor = NOBODY,
) -> dict:
    """Create an administrator (grant checks are the caller's business) audited as ``actor``'s
    (the CLI's and the demo's name nobody); answer the row."""
    email = email.strip().lower()
    role_row = role_named(role)
    user_id, moment = db.new_id(), now_iso()
    password_hash = hash_password(password)
    with db.transaction():
        if db.value("SELECT 1 FROM users WHERE email = :email", {"email": email}):
            raise Conflict(f"An administrator with the email {email} already exists.")
        db.execute(
            "INSERT INTO users (id, email, name, password_hash, role_id, active, created_at,"
            " updated_at) VALUES (:id, :email, :name, :hash, :role_id, :active, :now, :now)",
            {
                "id": user_id,
                "email": email,
                "name": name.strip(),
                "hash": password_hash,
                "role_id": role_row["id"],
                "active": active,
                "now": moment,
            },
        )
        set_extra_permissions(user_id, permissions)
        audit.record(
            "user.created",
            {"user_id": user_id, "email": email, "role": role, "permissions": sorted(permissions)},
            actor=actor,
        )
    return get_user(user_id)
