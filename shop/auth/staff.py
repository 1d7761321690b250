"""Changing administrators, for every caller (the API's ``/users``, the console's staff
pages): change, delete, unlock, reset two-factor sign-in, with the rules beyond the
permission each needs:

- nobody grants a permission they do not hold, by role or by extra permission (``Forbidden``);
- nobody changes or deletes an administrator who holds a permission they do not
  (``Forbidden``), so an admin cannot lock out an owner;
- the last active owner cannot be deleted, demoted or deactivated (``Conflict``);
- deactivating, deleting or re-passwording an administrator ends their sessions at once;
  deleting one also revokes their API keys; resetting two-factor ends them too.

``caller`` is the acting administrator: its ``permissions`` are the ceiling, its ``actor``
is named in the audit log.
"""

from shop import audit, db
from shop.auth import lockout, sessions
from shop.auth import two_factor as second_factor
from shop.auth.keys import cache as key_cache
from shop.auth.passwords import hash_password
from shop.auth.roles import check_grant
from shop.auth.users import create_user, get_user, role_named, set_extra_permissions
from shop.clock import now_iso
from shop.errors import Conflict, Forbidden
from shop.permissions import OWNER_ROLE


def present(row: dict) -> dict:
    """An administrator as the API shows it, from ``USER_SELECT``'s row."""
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
    """``Conflict`` when ``row`` is the last active owner (before demoting, disabling,
    deleting)."""
    if row["role"] != OWNER_ROLE or not row["active"]:
        return
    others = db.value(
        "SELECT COUNT(*) FROM users u JOIN roles r ON r.id = u.role_id"
        " WHERE r.name = :owner AND u.active = 1 AND u.id <> :id",
        {"owner": OWNER_ROLE, "id": row["id"]},
    )
    if not others:
        raise Conflict("This is the last active owner: make another owner first.")


def guard_target(row: dict, caller) -> None:
    """``Forbidden`` when the administrator ``row`` holds permissions ``caller`` does not."""
    if not set(present(row)["effective_permissions"]) <= caller.permissions:
        raise Forbidden("Access denied: this administrator holds permissions you do not.")


def create(data: dict, caller) -> dict:
    """Create an administrator (email, name, password, role, permissions, active) whose
    role and extra permissions are within ``caller``'s ceiling; answer it."""
    role = role_named(data["role"])
    check_grant(caller, role["permissions"] | set(data.get("permissions", [])))
    row = create_user(
        data["email"],
        data["name"],
        data["password"],
        data["role"],
        data.get("permissions", []),
        data.get("active", True),
        actor=caller.actor,
    )
    return present(row)


def update_user(user_id: str, data: dict, caller) -> dict:
    """Change the fields given in ``data`` (email, name, password, role, permissions,
    active) within ``caller``'s ceiling, in one transaction; answer the administrator."""
    new_hash = hash_password(data["password"]) if "password" in data else None
    with db.transaction():
        db.lock("users")
        row = get_user(user_id)
        guard_target(row, caller)
        changes = {}
        if "role" in data and data["role"] != row["role"]:
            role = role_named(data["role"])
            check_grant(caller, role["permissions"])
            _guard_last_owner(row)
            db.execute(
                "UPDATE users SET role_id = :role_id WHERE id = :id",
                {"role_id": role["id"], "id": user_id},
            )
            changes["role"] = data["role"]
        if "permissions" in data:
            old = set((row["extra_permissions"] or "").split())
            new = set(data["permissions"])
            check_grant(caller, old ^ new)
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
                raise Conflict(f"An administrator with the email {email} already exists.")
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
        audit.record("user.updated", {"user_id": user_id, **changes}, actor=caller.actor)
    return present(get_user(user_id))


def delete_user(user_id: str, caller) -> None:
    """Delete an administrator: their sessions end and their API keys are revoked."""
    with db.transaction():
        db.lock("users")
        row = get_user(user_id)
        guard_target(row, caller)
        _guard_last_owner(row)
        db.execute(
            "UPDATE api_keys SET revoked_at = :now, revoked_by = :by"
            " WHERE owner_id = :id AND revoked_at IS NULL",
            {"now": now_iso(), "by": caller.id, "id": user_id},
        )
        db.execute("DELETE FROM users WHERE id = :id", {"id": user_id})
        key_cache.changed()
        audit.record(
            "user.deleted", {"user_id": user_id, "email": row["email"]}, actor=caller.actor
        )


def unlock_user(user_id: str, caller) -> bool:
    """Lift an administrator's sign-in lockout (their account's counter, not a customer's
    with the same email), audited; answer whether one was in force."""
    row = get_user(user_id)
    guard_target(row, caller)
    was_locked = lockout.clear(lockout.account("admin", user_id))
    with db.transaction():
        audit.record(
            "user.unlocked",
            {"user_id": user_id, "email": row["email"], "was_locked": was_locked},
            actor=caller.actor,
        )
    return was_locked


def is_locked_out(user_id: str) -> bool:
    """Whether the administrator's sign-in is locked right now."""
    return lockout.is_locked(lockout.account("admin", user_id))


def reset_two_factor(user_id: str, caller) -> dict:
    """Remove an administrator's second factor (a lost phone) and end their sessions, as
    ``flask users reset-two-factor`` does, within ``caller``'s ceiling; they set it up again
    at their next sign-in when the shop requires it."""
    guard_target(get_user(user_id), caller)
    return second_factor.reset(user_id, caller.actor)
