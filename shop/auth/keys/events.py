"""The events of an API key's life, recorded in one place: created, rolled, updated, revoked,
expiring (within 7 days), expired_unused and new_address.

``lifecycle`` writes the audit entry in the caller's transaction; the webhook events
(``api_key.created``, ``api_key.revoked``, ``api_key.expiring``) are emitted beside it by the
use case that knows the record (``store``, ``sweep``).
"""

from shop import audit, db

CLI_ACTOR = {"kind": "cli", "id": None, "label": "flask CLI"}
SWEEP_ACTOR = {"kind": "system", "id": None, "label": "API key sweep"}


def lifecycle(
    event: str, key: dict, details: dict | None = None, actor: dict | None = None, system=False
):
    """Record one event in a key's life, in the caller's transaction.

    ``actor`` defaults to the request's caller; ``system``: found by the service's own batch
    or sweep, not asked for by the request that happens to run it.
    """
    audit.record(
        f"api_key.{event}",
        {"key_id": key["id"], "label": key["label"], **(details or {})},
        actor=actor,
        from_request=not system,
    )


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
