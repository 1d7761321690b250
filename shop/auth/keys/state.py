"""What an API key is now: its status (derived, never stored) and the record the API shows.

``status`` is ``revoked`` when ``revoked_at`` is set, else ``expired`` when ``expires_at``
has passed or the key went unused for ``SHOP_API_KEY_IDLE_DAYS`` days, else ``active``. The
last use counts this process's unwritten uses too (``usage``), so one process is exact.
"""

import re
from datetime import timedelta

from flask import current_app

from shop.auth.keys import usage as key_usage
from shop.clock import iso, now, parse

PREFIX = "eck_"
SECRET_RE = re.compile(r"eck_[A-Za-z0-9_-]{43}")


def idle_days() -> int:
    """``SHOP_API_KEY_IDLE_DAYS``: days unused after which a key expires (0: never)."""
    return current_app.config["API_KEY_IDLE_DAYS"]


def idle_deadline(row: dict, last_used_at: str | None = None):
    """When a key expires unused if nobody uses it (None when idle expiry is off)."""
    days = idle_days()
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


def active_until_of(row: dict):
    """When ``state_of`` may first find a live key's ``row`` no longer ``active``: the
    earlier of its ``expires_at`` and its idle deadline (None: neither applies). Before
    that moment ``state_of(row)`` is ``active`` for the same row, so the key cache keeps
    this with the row and skips the dates on every request (``shop/auth/keys/cache.py``)."""
    moments = [idle_deadline(row)]
    if row["expires_at"]:
        moments.append(parse(row["expires_at"]))
    moments = [m for m in moments if m is not None]
    return min(moments) if moments else None


def is_dormant(record: dict, days: int, moment=None) -> bool:
    """Whether a live key went unused for ``days`` days (or was never used in that long)."""
    if record["status"] != "active":
        return False
    since = parse(record["last_used_at"] or record["created_at"])
    return (moment or now()) - since >= timedelta(days=days)


def present(row: dict) -> dict:
    """A key as the API shows it: never the secret, never the hash."""
    owner = None
    if row["owner_id"]:
        owner = {"id": row["owner_id"], "email": row["owner_email"]}
    last_used_at, last_used_ip = row["last_used_at"], row["last_used_ip"]
    pending = key_usage.buffer().pending_last_use(row["id"])
    if pending is not None and (last_used_at is None or pending[0] >= last_used_at):
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
