"""The audit log: who did what, from where. Written in the caller's transaction."""

import json

from shop import db
from shop.actor import Actor
from shop.clock import now_iso


def record(event: str, details: dict | None = None, *, actor: Actor) -> None:
    """Append an audit entry naming ``actor`` and the address it acted from, if any.

    Never pass a secret or a hash in ``details``.
    """
    db.send(  # nobody reads its answer: on PostgreSQL it goes with the commit
        "INSERT INTO audit_log (id, at, event, actor_kind, actor_id, actor_label, ip,"
        " user_agent, details) VALUES (:id, :at, :event, :kind, :actor_id, :label, :ip, :ua,"
        " :details)",
        {
            "id": db.new_id(),
            "at": now_iso(),
            "event": event,
            "kind": actor.kind,
            "actor_id": actor.id,
            "label": actor.label,
            "ip": actor.ip,
            "ua": actor.user_agent,
            "details": json.dumps(details or {}, sort_keys=True),
        },
    )


def present(row: dict) -> dict:
    """An audit row as the API serves it."""
    actor = None
    if row["actor_kind"]:
        actor = {"kind": row["actor_kind"], "id": row["actor_id"], "label": row["actor_label"]}
    return {
        "id": row["id"],
        "at": row["at"],
        "event": row["event"],
        "actor": actor,
        "ip": row["ip"],
        "user_agent": row["user_agent"],
        "details": json.loads(row["details"]),
    }
