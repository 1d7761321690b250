"""API keys on a request: resolving a Bearer secret to a caller (the hot path).

One query finds the key by the SHA-256 of its secret (a unique index), with its owner's
current permissions: a key's rights on a request are its scopes' permissions intersected with
its owner's permissions of that moment. Then, only where the key has them: its address rule
(403) and its own limit per minute (429). The request is counted in memory (``key_usage``),
never written here. The records themselves are ``key_store``; the input rules ``key_rules``.
"""

import ipaddress
import logging
import math
import time
from datetime import timedelta
from functools import lru_cache

from flask import current_app, g, request
from limits import RateLimitItemPerMinute

from shop import audit, db
from shop.actor import Actor
from shop.auth.caller import Caller
from shop.auth.key_state import SECRET_RE, idle_days, state_of
from shop.auth.permissions import OWNER_PERMISSIONS_SQL, rights_of, scope_set
from shop.clock import iso, now, parse
from shop.errors import Forbidden, Throttled, Unauthenticated
from shop.http import client_address
from shop.http.extensions import limiter

REFUSAL_AUDIT_INTERVAL = 60
_UNAUTHORIZED = {"WWW-Authenticate": 'Bearer realm="shop"'}
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


@lru_cache(maxsize=4096)
def _networks(allowed: str) -> tuple:
    return tuple(ipaddress.ip_network(text) for text in allowed.split())


_MAPPED = ipaddress.ip_network("::ffff:0:0/96")


def address_allowed(allowed: str, address: str | None) -> bool:
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
    if not SECRET_RE.fullmatch(secret):
        raise Unauthenticated("Invalid API key.", _UNAUTHORIZED)
    row = db.one(_RESOLVE, {"token_hash": db.sha256(secret)})
    if row is None:
        raise Unauthenticated("Invalid API key.", _UNAUTHORIZED)
    # Counted by key_usage after the answer; a key's first use is written at once.
    g.api_key_use = use = [row["id"], False, None, row["last_used_at"] is None]
    moment = now()
    state, why = state_of(row, moment)
    if state != "active":
        _audit_refusal(row, state, why, moment)
        if why == "unused":
            message = f"API key expired unused: it was not used for {idle_days()} days."
        else:
            message = _REFUSALS[why or state]
        raise Unauthenticated(message, _UNAUTHORIZED)
    if row["source"] == "admin" and not row["owner_active"]:
        raise Unauthenticated(
            "API key refused: its owner is no longer an active administrator.", _UNAUTHORIZED
        )
    address = request.remote_addr
    if row["allowed_ips"] and not address_allowed(row["allowed_ips"], address):
        raise Forbidden(
            f"API key refused from {address}: its allowed_ips rule admits only "
            + ", ".join(row["allowed_ips"].split())
            + ".",
        )
    if row["rate_limit_per_minute"] and current_app.config["RATELIMIT_ENABLED"]:
        _check_key_limit(row["id"], row["rate_limit_per_minute"])
    use[1], use[2] = True, address  # a use unless refused later (key_usage.note)
    return Caller(
        kind="api_key",
        id=row["id"],
        role=row["owner_role"],
        permissions=rights_of(row),
        scopes=scope_set(row["scopes"]),
        owner_id=row["owner_id"],
        label=row["label"],
        ip=address,
        user_agent=request.headers.get("User-Agent", "")[:512],
    )


def _check_key_limit(key_id: str, per_minute: int) -> None:
    """429 with Retry-After once the key made ``per_minute`` requests in its window.

    Counted in the rate limiter's storage: Redis (exact across workers and nodes) when
    REDIS_URL is set, else this process's memory. When that storage fails the request goes
    through (logged): a key's own limit is a budget, not a defence of the service.
    """
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
    raise Throttled(
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
            actor=Actor(
                "api_key",
                row["id"],
                row["label"],
                request.remote_addr,
                request.headers.get("User-Agent", "")[:512],
            ),
        )
