"""The audit log: who did what, from where. Written in the caller's transaction."""

import json

from flask import g, has_request_context, request

from shop import db
from shop.clock import now_iso


def record(
    event: str, details: dict | None = None, *, actor: dict | None = None, from_request=True
) -> None:
    """Append an audit entry; the actor defaults to the current caller.

    ``actor`` is ``{"kind", "id", "label"}``. Never pass a secret or a hash in ``details``.
    ``from_request=False``: an entry the service writes on its own (a sweep, a batch) while
    some unrelated request is running, so that request's address and agent stay out of it.
    """
    if actor is None and has_request_context():
        caller = g.get("caller")
        actor = caller.actor if caller is not None else None
    ip = user_agent = None
    if from_request and has_request_context():
        ip = request.remote_addr
        user_agent = request.headers.get("User-Agent", "")[:512]
    actor = actor or {}
    db.execute(
        "INSERT INTO audit_log (id, at, event, actor_kind, actor_id, actor_label, ip,"
        " user_agent, details) VALUES (:id, :at, :event, :kind, :actor_id, :label, :ip, :ua,"
        " :details)",
        {
            "id": db.new_id(),
            "at": now_iso(),
            "event": event,
            "kind": actor.get("kind"),
            "actor_id": actor.get("id"),
            "label": actor.get("label"),
            "ip": ip,
            "ua": user_agent,
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
