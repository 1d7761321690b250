"""Machine API keys: creation, resolution (the hot path), listing and revocation.

A secret is ``eck_`` + 32 random bytes in base64url without padding (43 characters). Only its
SHA-256 is stored, under a unique index; the secret is returned once, at creation. A key's
rights on a request are its scopes' permissions intersected with its owner's permissions of
that moment; a key made by the CLI has no owner and holds exactly its scopes. ``status`` is
derived: ``revoked`` when ``revoked_at`` is set, else ``expired`` when ``expires_at`` has
passed or the key went unused for ``SHOP_API_KEY_IDLE_DAYS`` days, else ``active``.

Every change to a key's life (created, rolled, updated, revoked, expiring soon, expired
unused, used from a new address) is recorded by ``lifecycle``, the one place where webhook
events will be added. docs/api-keys.md describes the features for users.
"""

import ipaddress
import logging
import math
import re
import secrets
import time
from datetime import datetime, timedelta
from functools import lru_cache

from flask import current_app, g, request
from limits import RateLimitItemPerMinute

from shop import audit, client_address, db, webhooks
from shop.auth import key_usage
from shop.auth.caller import Caller
from shop.auth.permissions import ALL_SCOPES, OWNER_PERMISSIONS_SQL, SCOPES, rights_of
from shop.clock import iso, now, now_iso, parse, utc
from shop.errors import abort

PREFIX = "eck_"
_SECRET_RE = re.compile(r"eck_[A-Za-z0-9_-]{43}")
_SCOPE_RE = re.compile(r"(read|write):[a-z_]+")
REFUSAL_AUDIT_INTERVAL = 60
EXPIRY_WARNING_DAYS = 7
MAX_GRACE_SECONDS = 7 * 24 * 3600
DEFAULT_GRACE_SECONDS = 24 * 3600
MAX_ALLOWED_IPS = 100
_UNAUTHORIZED = {"WWW-Authenticate": 'Bearer realm="shop"'}
_CLI_ACTOR = {"kind": "cli", "id": None, "label": "flask CLI"}
log = logging.getLogger("shop")

_RESOLVE = f"""
    SELECT k.id, k.label, k.scopes, k.source, k.owner_id, k.created_at, k.expires_at,
           k.revoked_at, k.last_used_at, k.refused_audit_at, k.rolled_to, k.allowed_ips,
           k.rate_limit_per_minute, u.active AS owner_active, r.name AS owner_role,
           {OWNER_PERMISSIONS_SQL}
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


_OWNER_PERMISSIONS = f"SELECT {OWNER_PERMISSIONS_SQL} FROM users u WHERE u.id = :id"


def check_ceiling(scopes, owner_id: str | None, actor: Caller | None = None) -> None:
    """403 naming the first scope beyond the key owner's current permissions.

    The one ceiling of every path that sets a key's scopes (create, roll): it is the key's
    owner's, whoever sets them (the owner role rolling an editor's key grants no more than
    the editor holds), and it is ``rights_of``, the rule a key's requests are checked by. A
    CLI key (no owner) holds exactly its scopes.
    """
    if owner_id is None:
        return
    held = db.one(_OWNER_PERMISSIONS, {"id": owner_id}) or {}
    for scope in scopes:
        rights = rights_of(
            {
                "scopes": scope,
                "source": "admin",
                "role_permissions": held.get("role_permissions"),
                "extra_permissions": held.get("extra_permissions"),
            }
        )
        lacking = sorted(SCOPES[scope] - rights)
        if lacking:
            who = "you lack" if actor is not None and actor.id == owner_id else "its owner lacks"
            abort(
                403,
                f"Access denied: you cannot grant the scope {scope} to this key"
                f" ({who} {', '.join(lacking)}).",
            )


def parse_expiry(value: str) -> str:
    """A future ISO 8601 date or date-time (UTC when no zone is given), as stored."""
    try:
        moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except (AttributeError, ValueError):
        raise ValueError(
            "expires_at: use an ISO 8601 date or date-time, such as 2027-01-31."
        ) from None
    try:
        moment = utc(moment)
    except ValueError as error:
        raise ValueError(f"expires_at: {error}") from None
    if moment <= now():
        raise ValueError("expires_at: must be in the future.")
    return iso(moment)


def parse_allowed_ips(values) -> str | None:
    """Validate ``allowed_ips`` (addresses and CIDR ranges, IPv4 or IPv6) as stored.

    None or an empty list means "from anywhere". A range with host bits set is refused,
    naming the range it probably meant.
    """
    if values is None:
        return None
    if isinstance(values, str) or not isinstance(values, list | tuple):
        raise ValueError("allowed_ips: give a list of addresses or CIDR ranges, or null.")
    if len(values) > MAX_ALLOWED_IPS:
        raise ValueError(f"allowed_ips: at most {MAX_ALLOWED_IPS} entries.")
    result = []
    for value in values:
        text = value.strip() if isinstance(value, str) else ""
        try:
            network = ipaddress.ip_network(text, strict=True)
        except ValueError:
            try:
                meant = ipaddress.ip_network(text, strict=False)
            except ValueError:
                raise ValueError(
                    f"allowed_ips: {value!r} is not an IPv4 or IPv6 address or CIDR range"
                    " (such as 203.0.113.7, 10.0.0.0/8 or 2001:db8::/32)."
                ) from None
            raise ValueError(
                f"allowed_ips: {value!r} has bits set after the prefix; did you mean {meant}?"
            ) from None
        if str(network) not in result:
            result.append(str(network))
    return " ".join(result) or None


@lru_cache(maxsize=4096)
def _networks(allowed: str) -> tuple:
    return tuple(ipaddress.ip_network(text) for text in allowed.split())


_MAPPED = ipaddress.ip_network("::ffff:0:0/96")


def _address_allowed(allowed: str, address: str | None) -> bool:
    """Whether ``address`` is in one of the stored ranges.

    An IPv4 client is also ``::ffff:<it>`` in IPv6, so both sides agree whichever way the
    rule or the socket wrote it: ``::ffff:127.0.0.1`` and ``::/0`` admit 127.0.0.1, and
    ``127.0.0.1`` admits ``::ffff:127.0.0.1`` (``client_address.canonical`` unmaps it).
    """
    text = client_address.canonical(address)
    if text is None:
        return False
    ip = ipaddress.ip_address(text)
    forms = [ip]
    if ip.version == 4:
        forms.append(_MAPPED[int(ip)])
    return any(form in network for network in _networks(allowed) for form in forms)


def _idle_days() -> int:
    return current_app.config["API_KEY_IDLE_DAYS"]


def idle_deadline(row: dict, last_used_at: str | None = None):
    """When a key expires unused if nobody uses it (None when idle expiry is off)."""
    days = _idle_days()
    if not days:
        return None
    return parse(last_used_at or row["last_used_at"] or row["created_at"]) + timedelta(days=days)


def state_of(row: dict, moment=None) -> tuple[str, str | None]:
    """``(status, why)``: ``active``/None, ``revoked``/None, or ``expired`` and why:
    ``expires_at`` (its date passed), ``rolled`` (the grace window after a roll ended) or
    ``unused`` (idle for ``SHOP_API_KEY_IDLE_DAYS`` days)."""
    if row["revoked_at"]:
        return "revoked", None
    moment = moment or now()
    if row["expires_at"] and parse(row["expires_at"]) <= moment:
        return "expired", "rolled" if row["rolled_to"] else "expires_at"
    deadline = idle_deadline(row)
    if deadline is not None and deadline <= moment:
        pending = key_usage.buffer().pending_last_use(row["id"])
        if pending is None or idle_deadline(row, pending[0]) <= moment:
            return "expired", "unused"
    return "active", None


def status_of(row: dict, moment=None) -> str:
    """``active``, ``expired`` or ``revoked``."""
    return state_of(row, moment)[0]


def is_dormant(record: dict, days: int, moment=None) -> bool:
    """Whether a live key went unused for ``days`` days (or was never used in that long)."""
    if record["status"] != "active":
        return False
    since = parse(record["last_used_at"] or record["created_at"])
    return (moment or now()) - since >= timedelta(days=days)


def lifecycle(
    event: str, key: dict, details: dict | None = None, actor: dict | None = None, system=False
):
    """Record one event in a key's life, in the caller's transaction.

    The single place for created, rolled, updated, revoked, expiring (within 7 days),
    expired_unused and new_address: the audit entry now, the webhook event (issue 15) here
    too. ``actor`` defaults to the request's caller; ``system``: found by the service's own
    batch or sweep, not asked for by the request that happens to run it.
    """
    audit.record(
        f"api_key.{event}",
        {"key_id": key["id"], "label": key["label"], **(details or {})},
        actor=actor,
        from_request=not system,
    )


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
        abort(409, "This API key was already created.")
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
            actor=owner.actor if owner else _CLI_ACTOR,
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
        abort(400, f"grace_seconds: must be between 0 and {MAX_GRACE_SECONDS} (7 days).")
    moment = now()
    with db.transaction():
        old = get(key_id, viewer)
        if old is None:
            return None
        if old["status"] != "active":
            abort(409, f"This API key is {old['status']}: only an active key can be rolled.")
        if old["rolled_to"]:
            abort(409, f"This API key was already rolled to {old['rolled_to']}: roll that one.")
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
            abort(409, "This API key was rolled or revoked meanwhile: reload it.")
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
            actor=viewer.actor if viewer else _CLI_ACTOR,
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
            abort(409, "This API key is revoked: it can no longer be changed.")
        if changes:
            assignments = ", ".join(f"{name} = :{name}" for name in sorted(changes))
            db.execute(
                f"UPDATE api_keys SET {assignments} WHERE id = :id",  # noqa: S608 - fixed names
                {**changes, "id": key_id},
            )
            shown = dict(changes)
            if "allowed_ips" in shown:
                shown["allowed_ips"] = (shown["allowed_ips"] or "").split() or None
            lifecycle("updated", record, {"changes": shown})
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


def list_page(viewer: Caller | None, status: str | None, page: int, page_size: int) -> dict:
    """A page of the keys ``viewer`` may see, newest first, optionally of one status."""
    moment = now()
    where, params = [], {"now": iso(moment)}
    if viewer is not None and not viewer.is_owner:
        where.append("k.owner_id = :owner")
        params["owner"] = viewer.id
    dated = "(k.expires_at IS NOT NULL AND k.expires_at <= :now)"
    if _idle_days():
        params["idle"] = iso(moment - timedelta(days=_idle_days()))
        dated = f"({dated} OR COALESCE(k.last_used_at, k.created_at) <= :idle)"
    if status == "revoked":
        where.append("k.revoked_at IS NOT NULL")
    elif status == "expired":
        where.append(f"k.revoked_at IS NULL AND {dated}")
    elif status == "active":
        where.append(f"k.revoked_at IS NULL AND NOT {dated}")
    clause = (" WHERE " + " AND ".join(where)) if where else ""
    from shop.pages import paginate

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
            lifecycle(
                "revoked",
                record,
                {"by": "cli" if viewer is None else "admin"},
                actor=viewer.actor if viewer else _CLI_ACTOR,
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
        lifecycle(
            "revoked",
            row,
            {"by": "leaked-key report"},
            actor={"kind": "anonymous", "id": None, "label": "leaked-key report"},
        )
        webhooks.emit("api_key.revoked", row["id"], get)


def address_seen(key_id: str, ip: str, at: str, first_use: bool) -> None:
    """Audit a key accepted from an address it had not been used from (in the caller's
    transaction; the flush of key_usage calls it once per new address, across processes)."""
    row = db.one("SELECT id, label FROM api_keys WHERE id = :id", {"id": key_id})
    if row is not None:
        lifecycle(
            "new_address",
            row,
            {"ip": ip, "first_seen_at": at, "first_use": first_use},
            actor={"kind": "api_key", "id": row["id"], "label": row["label"]},
            system=True,
        )


def sweep() -> None:
    """Audit, once each, live keys whose date expiry is within 7 days and keys that just
    expired unused. Several processes may sweep at once: a marker column decides who writes.
    """
    moment = now()
    params = {
        "now": iso(moment),
        "soon": iso(moment + timedelta(days=EXPIRY_WARNING_DAYS)),
    }
    expiring = db.query(
        "SELECT id, label, expires_at FROM api_keys WHERE revoked_at IS NULL"
        " AND rolled_to IS NULL AND expiry_warned_at IS NULL AND expires_at IS NOT NULL"
        " AND expires_at > :now AND expires_at <= :soon",
        params,
    )
    for row in expiring:
        _once(row, "expiry_warned_at", "expiring", {"expires_at": row["expires_at"]})
    if not _idle_days():
        return
    params["idle"] = iso(moment - timedelta(days=_idle_days()))
    idle = db.query(
        "SELECT id, label, created_at, last_used_at FROM api_keys WHERE revoked_at IS NULL"
        " AND idle_audited_at IS NULL AND COALESCE(last_used_at, created_at) <= :idle"
        " AND (expires_at IS NULL OR expires_at > :now)",
        params,
    )
    for row in idle:
        details = {"last_used_at": row["last_used_at"], "idle_days": _idle_days()}
        _once(row, "idle_audited_at", "expired_unused", details)


_SWEEP_COLUMNS = {"expiry_warned_at", "idle_audited_at"}


def _once(row: dict, marker: str, event: str, details: dict) -> None:
    """Set ``marker`` and record ``event`` for one key, unless another process did first."""
    assert marker in _SWEEP_COLUMNS  # noqa: S101 - a column name goes into the SQL
    with db.transaction():
        if db.execute(
            f"UPDATE api_keys SET {marker} = :now WHERE id = :id AND {marker} IS NULL",  # noqa: S608
            {"now": now_iso(), "id": row["id"]},
        ):
            actor = {"kind": "system", "id": None, "label": "API key sweep"}
            lifecycle(event, row, details, actor=actor, system=True)


def present(row: dict) -> dict:
    """A key as the API shows it: never the secret, never the hash."""
    owner = None
    if row["owner_id"]:
        owner = {"id": row["owner_id"], "email": row["owner_email"]}
    last_used_at, last_used_ip = row["last_used_at"], row["last_used_ip"]
    pending = key_usage.buffer().pending_last_use(row["id"])
    if pending is not None and (last_used_at is None or pending[0] > last_used_at):
        last_used_at, last_used_ip = pending
    status, why = state_of(row)
    deadline = idle_deadline(row, last_used_at) if status == "active" else None
    return {
        "id": row["id"],
        "label": row["label"],
        "scopes": row["scopes"].split(),
        "created_at": row["created_at"],
        "expires_at": row["expires_at"],
        "last_used_at": last_used_at,
        "last_used_ip": last_used_ip,
        "revoked_at": row["revoked_at"],
        "status": status,
        "expired_reason": why,
        "idle_expires_at": iso(deadline) if deadline else None,
        "source": row["source"],
        "owner": owner,
        "allowed_ips": row["allowed_ips"].split() if row["allowed_ips"] else None,
        "rate_limit_per_minute": row["rate_limit_per_minute"],
        "rolled_from": row["rolled_from"],
        "rolled_to": row["rolled_to"],
    }


_REFUSALS = {
    "revoked": "API key revoked.",
    "expires_at": "API key expired.",
    "rolled": "API key expired: it was rolled and its grace period is over; use its successor.",
}


def resolve(secret: str) -> Caller:
    """The caller a Bearer secret stands for; a 401 for anything but a live key.

    One query. Then, only where the key has them: its address rule (403) and its limit per
    minute (429). The request is counted in memory (``key_usage``), never written here.
    """
    if not _SECRET_RE.fullmatch(secret):
        abort(401, "Invalid API key.", _UNAUTHORIZED)
    row = db.one(_RESOLVE, {"token_hash": db.sha256(secret)})
    if row is None:
        abort(401, "Invalid API key.", _UNAUTHORIZED)
    g.api_key_use = use = [row["id"], False, None]  # counted by key_usage after the answer
    moment = now()
    state, why = state_of(row, moment)
    if state != "active":
        _audit_refusal(row, state, why, moment)
        if why == "unused":
            message = f"API key expired unused: it was not used for {_idle_days()} days."
        else:
            message = _REFUSALS[why or state]
        abort(401, message, _UNAUTHORIZED)
    if row["source"] == "admin" and not row["owner_active"]:
        abort(
            401, "API key refused: its owner is no longer an active administrator.", _UNAUTHORIZED
        )
    address = request.remote_addr
    if row["allowed_ips"] and not _address_allowed(row["allowed_ips"], address):
        abort(
            403,
            f"API key refused from {address}: its allowed_ips rule admits only "
            + ", ".join(row["allowed_ips"].split())
            + ".",
        )
    if row["rate_limit_per_minute"] and current_app.config["RATELIMIT_ENABLED"]:
        _check_key_limit(row["id"], row["rate_limit_per_minute"])
    use[1], use[2] = True, address  # a use unless refused later (key_usage.note)
    scopes = frozenset(row["scopes"].split())
    rights = rights_of(row)
    return Caller(
        kind="api_key",
        id=row["id"],
        role=row["owner_role"],
        permissions=rights,
        scopes=scopes,
        owner_id=row["owner_id"],
        label=row["label"],
    )


def _check_key_limit(key_id: str, per_minute: int) -> None:
    """429 with Retry-After once the key made ``per_minute`` requests in its window.

    Counted in the rate limiter's storage: Redis (exact across workers and nodes) when
    REDIS_URL is set, else this process's memory. When that storage fails the request goes
    through (logged): a key's own limit is a budget, not a defence of the service.
    """
    from shop.extensions import limiter

    item = RateLimitItemPerMinute(per_minute, namespace="api-key")
    prefix = current_app.config["RATELIMIT_KEY_PREFIX"]
    try:
        strategy = limiter.limiter
        if strategy.hit(item, prefix, key_id):
            return
        reset, _ = strategy.get_window_stats(item, prefix, key_id)
    except Exception:  # noqa: BLE001 - storage down: the key's budget is not enforced
        log.warning("API key limit not checked: rate-limit storage failed", exc_info=True)
        return
    retry = max(1, math.ceil(reset - time.time()))
    abort(
        429,
        f"This API key's limit of {per_minute} requests per minute is used up: retry in {retry} s.",
        {"Retry-After": str(retry)},
    )


def _audit_refusal(row: dict, state: str, why: str | None, moment) -> None:
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
            {"key_id": row["id"], "label": row["label"], "reason": state, "why": why},
            actor={"kind": "api_key", "id": row["id"], "label": row["label"]},
        )
