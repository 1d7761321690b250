"""Idempotency keys: a request body's hash, and the replay or the memory of a checkout's key.

``body_hash`` is the one canonical form a body is compared in (sorted keys, no spaces,
UTF-8). ``same_body`` also accepts the ASCII-escaped form that refunds stored before it
(``json.dumps``' default), so a retry of a refund written then still replays.

The checkout keeps its keys in ``idempotency_keys`` per customer for ``WINDOW``: ``replay``
answers the order a live key placed (a 409 for another body), ``remember`` stores a new one.
Refunds keep theirs on the refund's own row (``payments/refunds.py``) and compare with
``same_body``.
"""

import hashlib
import json
from datetime import timedelta

from shop import db
from shop.clock import iso, now
from shop.errors import Conflict

WINDOW = timedelta(hours=24)


def _hash(body, ascii_only: bool) -> str:
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=ascii_only)
    return hashlib.sha256(canonical.encode()).hexdigest()


def body_hash(body) -> str:
    """SHA-256 (hex) of a JSON body in canonical form: sorted keys, no spaces, UTF-8."""
    return _hash(body, ascii_only=False)


def same_body(stored: str, body) -> bool:
    """Whether ``stored`` is the hash of ``body``: canonical, or as refunds hashed before
    (non-ASCII escaped; the same for an ASCII body)."""
    return stored in (body_hash(body), _hash(body, ascii_only=True))


def cutoff() -> str:
    """The moment before which a checkout's key is forgotten."""
    return iso(now() - WINDOW)


def replay(customer_id: str, key: str, body, since: str) -> str | None:
    """The order the customer's live ``key`` (stored after ``since``) placed with the same
    body, a 409 for another body, or None."""
    row = db.one(
        "SELECT request_hash, order_id FROM idempotency_keys"
        " WHERE customer_id = :customer_id AND key = :key AND created_at > :since",
        {"customer_id": customer_id, "key": key, "since": since},
    )
    if row is None:
        return None
    if not same_body(row["request_hash"], body):
        raise Conflict(
            "This Idempotency-Key was already used with a different request body;"
            " use a new key for a new order.",
        )
    return row["order_id"]


def remember(customer_id: str, key: str, body, order_id: str, moment: str, since: str) -> None:
    """Store ``key`` for replays of the order, dropping the customer's keys stored before
    ``since``."""
    db.execute(
        "DELETE FROM idempotency_keys WHERE customer_id = :customer_id AND created_at <= :since",
        {"customer_id": customer_id, "since": since},
    )
    db.execute(
        "INSERT INTO idempotency_keys (customer_id, key, request_hash, order_id, created_at)"
        " VALUES (:customer_id, :key, :hash, :order_id, :now)",
        {
            "customer_id": customer_id,
            "key": key,
            "hash": body_hash(body),
            "order_id": order_id,
            "now": moment,
        },
    )
