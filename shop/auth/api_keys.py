"""Machine API keys: creation, resolution (the hot path), listing and revocation.

A secret is ``eck_`` + 32 random bytes in base64url without padding (43 characters). Only its
SHA-256 is stored, under a unique index; the secret is returned once, at creation. A key's
rights on a request are its scopes' permissions intersected with its owner's permissions of
that moment; a key made by the CLI has no owner and holds exactly its scopes. ``status`` is
derived: ``revoked`` when ``revoked_at`` is set, else ``expired`` when ``expires_at`` has
passed, else ``active``.
"""

import re
import secrets
from datetime import timedelta

from flask import current_app, request

from shop import audit, db, webhooks
from shop.auth.caller import Caller
from shop.auth.permissions import (
    ALL_SCOPES,
    OWNER_PERMISSIONS_SQL,
    SCOPES,
    rights_of,
)
from shop.clock import iso, now, parse
from shop.errors import abort

PREFIX = "eck_"
_SECRET_RE = re.compile(r"eck_[A-Za-z0-9_-]{43}")
_SCOPE_RE = re.compile(r"(read|write):[a-z_]+")
REFUSAL_AUDIT_INTERVAL = 60
_UNAUTHORIZED = {"WWW-Authenticate": 'Bearer realm="shop"'}

_RESOLVE = f"""
    SELECT k.id, k.label, k.scopes, k.source, k.owner_id, k.expires_at, k.revoked_at,
           k.last_used_at, k.last_used_ip, k.refused_audit_at,
           u.active AS owner_active, r.name AS owner_role, {OWNER_PERMISSIONS_SQL}
    FROM api_keys k
    LEFT JOIN users u ON u.id = k.owner_id
    LEFT JOIN roles r ON r.id = u.role_id
    WHERE k.token_hash = :token_hash"""


class ScopeError(ValueError):
    """A scope list that cannot be granted; the message names the offending scope."""


def parse_scopes(scopes) -> list[str]:
    """Validate a scope list (a list, or a string split on commas and spaces)."""
    if isinstance(scopes, str):
        scopes = [s for s in re.split(r"[\s,]+", scopes) if s]
    if not scopes:
        raise ScopeError("scopes: give at least one scope, such as read:product.")
    result = []
    for scope in scopes:
        if scope not in SCOPES:
            if _SCOPE_RE.fullmatch(scope or ""):
                reason = f"{scope.split(':', 1)[1]} is not a scopable resource"
            else:
                reason = "scopes have the form read:<resource> or write:<resource>"
            raise ScopeError(
                f"scopes: {scope!r} is not a valid scope ({reason}); valid scopes: "
                + ", ".join(ALL_SCOPES)
                + "."
            )
        if scope not in result:
            result.append(scope)
    return sorted(result)


def grantable_scopes(caller: Caller) -> list[str]:
    """The scopes ``caller`` may put on a key: those whose permissions they all hold."""
    return [scope for scope in ALL_SCOPES if SCOPES[scope] <= caller.permissions]


def check_ceiling(scopes, caller: Caller) -> None:
    """403 naming the first scope ``caller`` may not grant (they lack one of its rights)."""
    for scope in scopes:
        lacking = sorted(SCOPES[scope] - caller.permissions)
        if lacking:
            abort(
                403,
                f"Access denied: you cannot grant the scope {scope}"
                f" (you lack {', '.join(lacking)}).",
            )


def status_of(row: dict, moment=None) -> str:
    """``active``, ``expired`` or ``revoked``."""
    if row["revoked_at"]:
        return "revoked"
    if row["expires_at"] and parse(row["expires_at"]) <= (moment or now()):
        return "expired"
    return "active"


def is_dormant(record: dict, days: int, moment=None) -> bool:
    """Whether a live key went unused for ``days`` days (or was never used in that long)."""
    if record["status"] != "active":
        return False
    since = parse(record["last_used_at"] or record["created_at"])
    return (moment or now()) - since >= timedelta(days=days)


def create(
    label: str,
    scopes: list[str],
    expires_at: str | None,
    owner: Caller | None,
    key_id: str | None = None,
) -> tuple[dict, str]:
    """Store a new key; answer its record and the clear secret (shown once, never stored).

    ``key_id`` lets a form choose the id up front, so that posting it twice creates one key.
    """
    secret = PREFIX + secrets.token_urlsafe(32)
    key_id = key_id or db.new_id()
    with db.transaction():
        inserted = db.execute(
            "INSERT INTO api_keys (id, label, token_hash, scopes, source, owner_id,"
            " created_at, expires_at) VALUES (:id, :label, :token_hash, :scopes, :source,"
            " :owner_id, :created_at, :expires_at) ON CONFLICT (id) DO NOTHING",
            {
                "id": key_id,
                "label": label,
                "token_hash": db.sha256(secret),
                "scopes": " ".join(scopes),
                "source": "admin" if owner else "cli",
                "owner_id": owner.id if owner else None,
                "created_at": iso(now()),
                "expires_at": expires_at,
            },
        )
        if not inserted:  # the same form posted twice at once: one key, not two
            abort(409, "This API key was already created.")
        audit.record(
            "api_key.created",
            {"key_id": key_id, "label": label, "scopes": scopes, "expires_at": expires_at},
            actor=owner.actor if owner else {"kind": "cli", "id": None, "label": "flask CLI"},
        )
        webhooks.emit("api_key.created", key_id, get)
    return get(key_id), secret


_SELECT = """
    SELECT k.id, k.label, k.scopes, k.source, k.owner_id, k.created_at, k.expires_at,
           k.last_used_at, k.last_used_ip, k.revoked_at, u.email AS owner_email
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


def list_page(viewer: Caller | None, status: str | None, page: int, page_size: int) -> dict:
    """A page of the keys ``viewer`` may see, newest first, optionally of one status."""
    where, params = [], {"now": iso(now())}
    if viewer is not None and not viewer.is_owner:
        where.append("k.owner_id = :owner")
        params["owner"] = viewer.id
    if status == "revoked":
        where.append("k.revoked_at IS NOT NULL")
    elif status == "expired":
        where.append("k.revoked_at IS NULL AND k.expires_at IS NOT NULL AND k.expires_at <= :now")
    elif status == "active":
        where.append("k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > :now)")
    clause = (" WHERE " + " AND ".join(where)) if where else ""
    from shop.api.common import paginate

    return paginate(
        _SELECT + clause + " ORDER BY k.created_at DESC, k.id DESC",
        "SELECT COUNT(*) FROM api_keys k" + clause,
        params,
        {"page": page, "page_size": page_size},
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
            audit.record(
                "api_key.revoked",
                {
                    "key_id": key_id,
                    "label": record["label"],
                    "by": "cli" if viewer is None else "admin",
                },
                actor=viewer.actor if viewer else {"kind": "cli", "id": None, "label": "flask CLI"},
            )
            webhooks.emit("api_key.revoked", key_id, get)
    return True


def revoke_leaked(secret: str) -> None:
    """Revoke whichever key has this secret, if any, and audit it. Says nothing back."""
    if not isinstance(secret, str) or not _SECRET_RE.fullmatch(secret):
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
        audit.record(
            "api_key.revoked",
            {"key_id": row["id"], "label": row["label"], "by": "leaked-key report"},
            actor={"kind": "anonymous", "id": None, "label": "leaked-key report"},
        )
        webhooks.emit("api_key.revoked", row["id"], get)


def present(row: dict) -> dict:
    """A key as the API shows it: never the secret, never the hash."""
    owner = None
    if row["owner_id"]:
        owner = {"id": row["owner_id"], "email": row["owner_email"]}
    return {
        "id": row["id"],
        "label": row["label"],
        "scopes": row["scopes"].split(),
        "created_at": row["created_at"],
        "expires_at": row["expires_at"],
        "last_used_at": row["last_used_at"],
        "last_used_ip": row["last_used_ip"],
        "revoked_at": row["revoked_at"],
        "status": status_of(row),
        "source": row["source"],
        "owner": owner,
    }


def resolve(secret: str) -> Caller:
    """The caller a Bearer secret stands for; a 401 for anything but a live key."""
    if not _SECRET_RE.fullmatch(secret):
        abort(401, "Invalid API key.", _UNAUTHORIZED)
    row = db.one(_RESOLVE, {"token_hash": db.sha256(secret)})
    if row is None:
        abort(401, "Invalid API key.", _UNAUTHORIZED)
    moment = now()
    state = status_of(row, moment)
    if state != "active":
        _audit_refusal(row, state, moment)
        abort(401, f"API key {state}.", _UNAUTHORIZED)
    if row["source"] == "admin" and not row["owner_active"]:
        abort(
            401, "API key refused: its owner is no longer an active administrator.", _UNAUTHORIZED
        )
    scopes = frozenset(row["scopes"].split())
    rights = rights_of(row)
    interval = current_app.config["KEY_LAST_USED_INTERVAL"]
    if row["last_used_at"] is None or moment - parse(row["last_used_at"]) >= timedelta(
        seconds=interval
    ):
        db.execute(
            "UPDATE api_keys SET last_used_at = :now, last_used_ip = :ip WHERE id = :id",
            {"now": iso(moment), "ip": request.remote_addr, "id": row["id"]},
        )
    return Caller(
        kind="api_key",
        id=row["id"],
        role=row["owner_role"],
        permissions=rights,
        scopes=scopes,
        owner_id=row["owner_id"],
        label=row["label"],
    )


def _audit_refusal(row: dict, state: str, moment) -> None:
    """Audit a refused expired or revoked key, at most once a minute per key."""
    last = row["refused_audit_at"]
    if last and moment - parse(last) < timedelta(seconds=REFUSAL_AUDIT_INTERVAL):
        return
    with db.transaction():
        db.execute(
            "UPDATE api_keys SET refused_audit_at = :now WHERE id = :id",
            {"now": iso(moment), "id": row["id"]},
        )
        audit.record(
            "api_key.refused",
            {"key_id": row["id"], "label": row["label"], "reason": state},
            actor={"kind": "api_key", "id": row["id"], "label": row["label"]},
        )
