"""API keys on a request: resolving a Bearer secret to a caller (the hot path).

One query (none while ``cache`` keeps the key) finds the key by the SHA-256 of its secret
(a unique index), with its owner's current permissions: a key's rights on a request are its
scopes' permissions intersected with its owner's permissions of that moment. Then, only
where the key has them: its address rule (403) and its own limit per minute (429). The
request is counted in memory (``usage``), never written here. The records themselves are
``store``; the input rules ``rules``.
"""

from datetime import timedelta

from shop import audit, db
from shop.actor import Actor
from shop.auth.caller import Caller
from shop.auth.keys import cache as key_cache
from shop.auth.keys.state import SECRET_RE, active_until_of, idle_days, state_of
from shop.clock import iso, now, parse
from shop.errors import Forbidden, Unauthenticated
from shop.net.addresses import address_allowed
from shop.permissions import OWNER_PERMISSIONS_SQL, rights_of, scope_set

REFUSAL_AUDIT_INTERVAL = 60
_UNAUTHORIZED = {"WWW-Authenticate": 'Bearer realm="shop"'}

_RESOLVE = f"""
    SELECT k.id, k.label, k.scopes, k.source, k.owner_id, k.created_at, k.expires_at,
           k.revoked_at, k.last_used_at, k.refused_audit_at, k.rolled_to, k.allowed_ips,
           k.rate_limit_per_minute, u.active AS owner_active, r.name AS owner_role,
           {OWNER_PERMISSIONS_SQL}
    FROM api_keys k
    LEFT JOIN users u ON u.id = k.owner_id
    LEFT JOIN roles r ON r.id = u.role_id
    WHERE k.token_hash = :token_hash"""


_REFUSALS = {
    "revoked": "API key revoked.",
    "expires_at": "API key expired.",
    "rolled": "API key expired: it was rolled and its grace period is over; use its successor.",
}


def resolve(secret: str, origin: Actor, note_use, within_limit=None) -> Caller:
    """The caller a Bearer secret stands for, on a request from ``origin`` (its address and
    User-Agent); a 401 for anything but a live key.

    One query, none while the key is kept in memory (``cache``: at most 10 s, forgotten on
    every node when the key or its owner's rights change). Then, only where the key has
    them: its address rule (403) and its limit per minute (``within_limit(key_id,
    per_minute)`` raises the 429; None when limits are off).
    The request is counted in memory (``usage``), never written here: ``note_use`` gets
    the request's ``[key_id, let_in, address, first_use]``, filled in as the checks pass.
    """
    if not SECRET_RE.fullmatch(secret):
        raise Unauthenticated("Invalid API key.", _UNAUTHORIZED)
    token_hash = db.sha256(secret)
    cache = key_cache.of_app()
    kept = cache.get(token_hash)
    if kept is None:
        generation = cache.generation
        row = db.one(_RESOLVE, {"token_hash": token_hash})
        if row is None:
            raise Unauthenticated("Invalid API key.", _UNAUTHORIZED)
        rights, scopes, active_until = None, None, None
    else:
        _, row, rights, scopes, active_until = kept
    # Counted by key_usage after the answer; a key's first use is written at once.
    address = origin.ip
    use = [row["id"], False, None, row["last_used_at"] is None]
    note_use(use)
    moment = now()
    if kept is not None and (active_until is None or moment < active_until):
        state, why = "active", None  # what state_of says of the kept row until then
    else:
        state, why = state_of(row, moment)
    if state != "active":
        cache.forget(row["id"])
        _audit_refusal(row, state, why, moment, origin)
        if why == "unused":
            message = f"API key expired unused: it was not used for {idle_days()} days."
        else:
            message = _REFUSALS[why or state]
        raise Unauthenticated(message, _UNAUTHORIZED)
    if row["source"] == "admin" and not row["owner_active"]:
        raise Unauthenticated(
            "API key refused: its owner is no longer an active administrator.", _UNAUTHORIZED
        )
    if kept is None:
        rights, scopes = rights_of(row), scope_set(row["scopes"])
        # Its first use is this request's, written at once: later ones are not first.
        kept_row = {**row, "last_used_at": row["last_used_at"] or iso(moment)}
        cache.put(token_hash, generation, kept_row, rights, scopes, active_until_of(kept_row))
    if row["allowed_ips"] and not address_allowed(row["allowed_ips"], address):
        raise Forbidden(
            f"API key refused from {address}: its allowed_ips rule admits only "
            + ", ".join(row["allowed_ips"].split())
            + ".",
        )
    if row["rate_limit_per_minute"] and within_limit is not None:
        within_limit(row["id"], row["rate_limit_per_minute"])
    use[1], use[2] = True, address  # a use unless refused later (key_usage.note)
    return Caller(
        kind="api_key",
        id=row["id"],
        role=row["owner_role"],
        permissions=rights,
        scopes=scopes,
        owner_id=row["owner_id"],
        label=row["label"],
        ip=address,
        user_agent=origin.user_agent,
    )


def _audit_refusal(row: dict, state: str, why: str | None, moment, origin: Actor) -> None:
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
            actor=origin.acting_as("api_key", row["id"], row["label"]),
        )
