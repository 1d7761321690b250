"""The API-key sweeps the scheduler runs (``shop/cli/jobs.py``): keys about to expire and keys
that expired unused, each told once.

``expiring`` is the one rule of "a key expires within 7 days": a live key (not revoked, not
rolled: a rolled key's short grace window is the roll's, already recorded as ``rolled``) whose
date expiry falls within ``EXPIRY_WARNING_DAYS``. It is audited (``api_key.expiring``) and
emitted as the webhook event of the same name, together, once: a marker column decides which
of several processes running the sweep at once writes.
"""

from datetime import timedelta

from shop import db, webhooks
from shop.auth.keys import store as key_store
from shop.auth.keys.events import SWEEP_ACTOR, lifecycle
from shop.auth.keys.state import idle_days
from shop.clock import iso, now, now_iso

EXPIRY_WARNING_DAYS = 7
_SWEEP_COLUMNS = {"expiry_warned_at", "idle_audited_at"}

EXPIRING = (
    "SELECT id, label, expires_at FROM api_keys WHERE revoked_at IS NULL"
    " AND rolled_to IS NULL AND expiry_warned_at IS NULL AND expires_at IS NOT NULL"
    " AND expires_at > :now AND expires_at <= :soon"
)


def expiring(moment=None) -> list[dict]:
    """Live keys not yet told about, whose date expiry is within 7 days of ``moment``."""
    moment = moment or now()
    soon = moment + timedelta(days=EXPIRY_WARNING_DAYS)
    return db.query(EXPIRING, {"now": iso(moment), "soon": iso(soon)})


def notify_expiring() -> int:
    """Audit and emit ``api_key.expiring`` once per key that ``expiring`` finds; answer how
    many were told."""
    told = 0
    for row in expiring():
        told += _once(row, "expiry_warned_at", "expiring", {"expires_at": row["expires_at"]})
    return told


def expire_idle() -> int:
    """Audit ``api_key.expired_unused`` once per live key idle for ``SHOP_API_KEY_IDLE_DAYS``
    days (its refusal needs no sweep: the status is derived); answer how many."""
    days = idle_days()
    if not days:
        return 0
    moment = now()
    idle = db.query(
        "SELECT id, label, created_at, last_used_at FROM api_keys WHERE revoked_at IS NULL"
        " AND idle_audited_at IS NULL AND COALESCE(last_used_at, created_at) <= :idle"
        " AND (expires_at IS NULL OR expires_at > :now)",
        {"now": iso(moment), "idle": iso(moment - timedelta(days=days))},
    )
    told = 0
    for row in idle:
        details = {"last_used_at": row["last_used_at"], "idle_days": days}
        told += _once(row, "idle_audited_at", "expired_unused", details)
    return told


def _once(row: dict, marker: str, event: str, details: dict) -> int:
    """Set ``marker`` and record ``event`` for one key, unless another process did first:
    1 when this one did."""
    assert marker in _SWEEP_COLUMNS  # noqa: S101 - a column name goes into the SQL
    with db.transaction():
        if not db.execute(
            f"UPDATE api_keys SET {marker} = :now WHERE id = :id AND {marker} IS NULL",  # noqa: S608
            {"now": now_iso(), "id": row["id"]},
        ):
            return 0
        lifecycle(event, row, details, actor=SWEEP_ACTOR)
        if event == "expiring":
            webhooks.emit(f"api_key.{event}", row["id"], key_store.get)
    return 1
