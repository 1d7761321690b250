"""API keys as records: create, roll, change, read, list and revoke (the API, the console and
the CLI call these, each with its own viewer; None is the CLI, which sees every key).

A secret is ``eck_`` + 32 random bytes in base64url without padding (43 characters). Only its
SHA-256 is stored, under a unique index; the secret is returned once, at creation. A key made
by the CLI has no owner and holds exactly its scopes. The input rules are ``rules``, the
events ``events``, the status ``state``; resolving a secret on a request is
``bearer``. docs/api-keys.md describes the features for users.
"""

import secrets
from datetime import timedelta

from shop import db, webhooks
from shop.actor import Actor
from shop.auth.caller import Caller
from shop.auth.keys import cache as key_cache
from shop.auth.keys import rules as key_rules
from shop.auth.keys.events import CLI_ACTOR, lifecycle
from shop.auth.keys.rules import MAX_GRACE_SECONDS, check_ceiling
from shop.auth.keys.state import PREFIX, SECRET_RE, idle_days, present
from shop.clock import iso, now
from shop.db.pages import Where, changed_since, paginate
from shop.errors import Conflict, Invalid, NotFound


def _insert(
    key_id: str,
    label: str,
    scopes: list[str],
    source: str,
    owner_id: str | None,
    expires_at: str | None,
    allowed_ips: str | None,
    rate_limit: int | None,
    rolled_from: str | None = None,
) -> str:
    """Store a key; answer its clear secret (never stored). 409 when the id is taken."""
    secret = PREFIX + secrets.token_urlsafe(32)
    inserted = db.execute(
        "INSERT INTO api_keys (id, label, token_hash, scopes, source, owner_id, created_at,"
        " expires_at, rolled_from, allowed_ips, rate_limit_per_minute) VALUES (:id, :label,"
        " :token_hash, :scopes, :source, :owner_id, :created_at, :expires_at, :rolled_from,"
        " :allowed_ips, :rate_limit) ON CONFLICT (id) DO NOTHING",
        {
            "id": key_id,
            "label": label,
            "token_hash": db.sha256(secret),
            "scopes": " ".join(scopes),
            "source": source,
            "owner_id": owner_id,
            "created_at": iso(now()),
            "expires_at": expires_at,
            "rolled_from": rolled_from,
            "allowed_ips": allowed_ips,
            "rate_limit": rate_limit,
        },
    )
    if not inserted:  # the same form posted twice at once: one key, not two
        raise Conflict("This API key was already created.")
    return secret


def create(
    label: str,
    scopes: list[str],
    expires_at: str | None,
    owner: Caller | None,
    key_id: str | None = None,
    allowed_ips: str | None = None,
    rate_limit: int | None = None,
) -> tuple[dict, str]:
    """Store a new key; answer its record and the clear secret (shown once, never stored).

    ``key_id`` lets a form choose the id up front, so that posting it twice creates one key.
    """
    key_id = key_id or db.new_id()
    with db.transaction():
        check_ceiling(scopes, owner.id if owner else None, owner)
        secret = _insert(
            key_id,
            label,
            scopes,
            "admin" if owner else "cli",
            owner.id if owner else None,
            expires_at,
            allowed_ips,
            rate_limit,
        )
        details = {"scopes": scopes, "expires_at": expires_at}
        if allowed_ips:
            details["allowed_ips"] = allowed_ips.split()
        if rate_limit:
            details["rate_limit_per_minute"] = rate_limit
        lifecycle(
            "created",
            {"id": key_id, "label": label},
            details,
            actor=owner.actor if owner else CLI_ACTOR,
        )
        webhooks.emit("api_key.created", key_id, get)
    return get(key_id), secret


def roll(
    key_id: str, viewer: Caller | None, grace_seconds: int, scopes: list[str] | None = None
) -> tuple[dict, str] | None:
    """Replace a key by a successor (returned with its secret) and let the old one live at
    most ``grace_seconds`` more. None when ``viewer`` may not see the key; 409 unless it is
    active and not rolled already. The successor keeps the label, scopes (unless new ones are
    given), expiry, owner, allowed_ips and limit."""
    if not 0 <= grace_seconds <= MAX_GRACE_SECONDS:
        raise Invalid(f"grace_seconds: must be between 0 and {MAX_GRACE_SECONDS} (7 days).")
    moment = now()
    with db.transaction():
        old = get(key_id, viewer)
        if old is None:
            return None
        if old["status"] != "active":
            raise Conflict(f"This API key is {old['status']}: only an active key can be rolled.")
        if old["rolled_to"]:
            raise Conflict(f"This API key was already rolled to {old['rolled_to']}: roll that one.")
        owner_id = old["owner"]["id"] if old["owner"] else None
        if scopes:
            check_ceiling(scopes, owner_id, viewer)
        successor_id = db.new_id()
        grace_end = iso(moment + timedelta(seconds=grace_seconds))
        old_expiry = min(old["expires_at"], grace_end) if old["expires_at"] else grace_end
        changed = db.execute(
            "UPDATE api_keys SET expires_at = :expires_at, rolled_to = :successor"
            " WHERE id = :id AND rolled_to IS NULL AND revoked_at IS NULL",
            {"expires_at": old_expiry, "successor": successor_id, "id": key_id},
        )
        if not changed:  # rolled or revoked by someone else a moment ago
            raise Conflict("This API key was rolled or revoked meanwhile: reload it.")
        key_cache.changed(key_id)
        secret = _insert(
            successor_id,
            old["label"],
            scopes or old["scopes"],
            old["source"],
            owner_id,
            old["expires_at"],
            " ".join(old["allowed_ips"] or ()) or None,
            old["rate_limit_per_minute"],
            rolled_from=key_id,
        )
        lifecycle(
            "rolled",
            old,
            {
                "successor_id": successor_id,
                "grace_seconds": grace_seconds,
                "old_key_expires_at": old_expiry,
                "scopes": scopes or old["scopes"],
            },
            actor=viewer.actor if viewer else CLI_ACTOR,
        )
    return get(successor_id), secret


def update(key_id: str, viewer: Caller | None, changes: dict) -> dict | None:
    """Change a key's label, allowed_ips or rate_limit_per_minute (stored forms in
    ``changes``). None when ``viewer`` may not see it; 409 when it is revoked."""
    columns = {"label", "allowed_ips", "rate_limit_per_minute"}
    changes = {name: value for name, value in changes.items() if name in columns}
    with db.transaction():
        record = get(key_id, viewer)
        if record is None:
            return None
        if record["status"] == "revoked":
            raise Conflict("This API key is revoked: it can no longer be changed.")
        if changes:
            assignments = ", ".join(f"{name} = :{name}" for name in sorted(changes))
            db.execute(
                f"UPDATE api_keys SET {assignments} WHERE id = :id",  # noqa: S608 - fixed names
                {**changes, "id": key_id},
            )
            key_cache.changed(key_id)
            shown = dict(changes)
            if "allowed_ips" in shown:
                shown["allowed_ips"] = (shown["allowed_ips"] or "").split() or None
            lifecycle(
                "updated", record, {"changes": shown}, actor=viewer.actor if viewer else CLI_ACTOR
            )
    return get(key_id, viewer)


_SELECT = """
    SELECT k.id, k.label, k.scopes, k.source, k.owner_id, k.created_at, k.expires_at,
           k.last_used_at, k.last_used_ip, k.revoked_at, k.rolled_from, k.rolled_to,
           k.allowed_ips, k.rate_limit_per_minute, u.email AS owner_email
    FROM api_keys k LEFT JOIN users u ON u.id = k.owner_id"""


def get(key_id: str, viewer: Caller | None = None) -> dict | None:
    """One key's record, if ``viewer`` may see it (None: the CLI sees every key)."""
    if viewer is None or viewer.is_owner:
        row = db.one(_SELECT + " WHERE k.id = :id", {"id": key_id})
    else:
        row = db.one(
            _SELECT + " WHERE k.id = :id AND k.owner_id = :owner",
            {"id": key_id, "owner": viewer.id},
        )
    return present(row) if row else None


def readable_by(key_id: str, admin_id: str, role: str | None) -> bool:
    """Whether the administrator ``admin_id`` (of ``role``) may read this key through the API:
    the rule a webhook's owner is held to for ``api_key`` events."""
    return get(key_id, Caller(kind="admin", id=admin_id, role=role)) is not None


def list_page(
    viewer: Caller | None, status: str | None, page: int, page_size: int, since=None
) -> dict:
    """A page of the keys ``viewer`` may see, newest first, optionally of one status and
    made since ``since["created_after"]`` (a key has no ``updated_at``: its changes are
    audited events)."""
    moment = now()
    where = Where(now=iso(moment))
    if viewer is not None and not viewer.is_owner:
        where.add("k.owner_id = :owner", owner=viewer.id)
    dated = "(k.expires_at IS NOT NULL AND k.expires_at <= :now)"
    if idle_days():
        where.params["idle"] = iso(moment - timedelta(days=idle_days()))
        dated = f"({dated} OR COALESCE(k.last_used_at, k.created_at) <= :idle)"
    if status == "revoked":
        where.add("k.revoked_at IS NOT NULL")
    elif status == "expired":
        where.add(f"k.revoked_at IS NULL AND {dated}")
    elif status == "active":
        where.add(f"k.revoked_at IS NULL AND NOT {dated}")
    changed_since(where, since or {}, "k.", updated=False)
    return paginate(
        _SELECT,
        "api_keys k",
        where,
        "k.created_at DESC, k.id DESC",
        {"page": page, "page_size": page_size, "cursor": (since or {}).get("cursor")},
        convert=present,
    )


def revoke(key_id: str, viewer: Caller | None) -> bool:
    """Revoke a key at once; answer False when ``viewer`` may not see it. Idempotent."""
    with db.transaction():
        record = get(key_id, viewer)
        if record is None:
            return False
        if record["revoked_at"] is None:
            db.execute(
                "UPDATE api_keys SET revoked_at = :now, revoked_by = :by"
                " WHERE id = :id AND revoked_at IS NULL",
                {"now": iso(now()), "by": viewer.id if viewer else "cli", "id": key_id},
            )
            key_cache.changed(key_id)
            lifecycle(
                "revoked",
                record,
                {"by": "cli" if viewer is None else "admin"},
                actor=viewer.actor if viewer else CLI_ACTOR,
            )
            webhooks.emit("api_key.revoked", key_id, get)
    return True


def revoke_leaked(secret: str, origin: Actor) -> None:
    """Revoke whichever key has this secret, if any, and audit it as reported from
    ``origin`` (the request's address). Says nothing back."""
    if not isinstance(secret, str) or not SECRET_RE.fullmatch(secret):
        return
    with db.transaction():
        row = db.one(
            "SELECT id, label FROM api_keys WHERE token_hash = :h AND revoked_at IS NULL",
            {"h": db.sha256(secret)},
        )
        if row is None:
            return
        db.execute(
            "UPDATE api_keys SET revoked_at = :now, revoked_by = 'leak-report' WHERE id = :id",
            {"now": iso(now()), "id": row["id"]},
        )
        key_cache.changed(row["id"])
        lifecycle(
            "revoked",
            row,
            {"by": "leaked-key report"},
            actor=origin.acting_as("anonymous", label="leaked-key report"),
        )
        webhooks.emit("api_key.revoked", row["id"], get)


def issue(data: dict, caller: Caller | None, key_id: str | None = None) -> dict:
    """Create a key from its input (the API's body or the console's form): the record plus
    its secret. The input rules first (400), then, in ``create``, the rights ceiling (403)."""
    clean = key_rules.issue_input(data)
    record, secret = create(
        clean["label"],
        clean["scopes"],
        clean["expires_at"],
        caller,
        key_id=key_id,
        allowed_ips=clean["allowed_ips"],
        rate_limit=clean["rate_limit"],
    )
    return {**record, "secret": secret}


def roll_from(key_id: str, data: dict, caller: Caller | None) -> dict:
    """Roll a key from its input (``grace_seconds``, optional ``scopes``): the successor plus
    its secret (API and console). New scopes are checked like at creation: 400, then, in
    ``roll``, the ceiling of the key owner's permissions (403); 404 when not visible."""
    rolled = roll(key_id, caller, data["grace_seconds"], key_rules.roll_scopes(data))
    if rolled is None:
        raise NotFound("API key not found.")
    record, secret = rolled
    return {**record, "secret": secret}
