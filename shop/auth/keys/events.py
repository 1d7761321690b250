"""The events of an API key's life, recorded in one place: created, rolled, updated, revoked,
expiring (within 7 days), expired_unused and new_address.

``lifecycle`` writes the audit entry in the caller's transaction; the webhook events
(``api_key.created``, ``api_key.revoked``, ``api_key.expiring``) are emitted beside it by the
use case that knows the record (``store``, ``sweep``).
"""

from shop import audit, db
from shop.actor import CLI, Actor, system

CLI_ACTOR = CLI
SWEEP_ACTOR = system("API key sweep")


def lifecycle(event: str, key: dict, details: dict | None, actor: Actor):
    """Record one event in a key's life by ``actor``, in the caller's transaction.

    The service's own batches and sweeps name an actor without an address, so the request
    that happens to run them stays out of the entry.
    """
    audit.record(
        f"api_key.{event}",
        {"key_id": key["id"], "label": key["label"], **(details or {})},
        actor=actor,
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
            actor=Actor("api_key", row["id"], row["label"]),
        )
