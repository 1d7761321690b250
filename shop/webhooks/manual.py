"""Pings and replays: attempts a person asks for, queued for the worker (issue 24).

The web process writes a request (``queue``) in a short transaction and answers 202 with
the id the attempt will have; it never waits on a receiver. The worker takes due requests
before scheduled deliveries (someone is waiting for them), within the same per-origin limit
(``shop/webhooks/pool.py``), sends each with a short timeout (``TIMEOUT``, 5 s at most) and
records the attempt under that id in the delivery's log, the request gone with it. A request
the worker has not taken within ``DEADLINE`` (it is down, or far behind) is recorded as a
failed attempt saying so: it is never sent late. A ping's delivery is never retried; a
failed replay leaves its delivery's retries as they were.

A request's ``due_at`` is when the worker may take it and, once taken, its lease's token,
as for deliveries: a worker killed mid-attempt leaves it due again when the lease ends.
"""

import math
from datetime import timedelta

from flask import current_app

from shop import db
from shop.clock import iso, now, parse
from shop.errors import Deferred
from shop.webhooks import delivery, worker

DEADLINE = timedelta(seconds=60)  # a request not taken by then is recorded as not sent
TIMEOUT = 5  # seconds an asked-for attempt has at most (SHOP_WEBHOOKS_TIMEOUT when shorter)
QUEUED_PER_WEBHOOK = 3  # requests of one webhook waiting at once; more answer 503

_DUE = """
    SELECT r.id, r.due_at AS next_attempt_at, d.webhook_id, w.url
    FROM webhook_requests r
    JOIN webhook_deliveries d ON d.id = r.delivery_id
    JOIN webhooks w ON w.id = d.webhook_id
    WHERE r.due_at <= :now ORDER BY r.due_at, r.id LIMIT :limit"""


def queue(webhook_id: str, delivery_id: str, kind: str) -> dict:
    """Ask the worker for one ``kind`` (ping, replay) attempt of a delivery, in the caller's
    transaction; answer the request. 503 with Retry-After while ``QUEUED_PER_WEBHOOK`` of
    the webhook's wait already."""
    waiting = db.value(
        "SELECT COUNT(*) FROM webhook_requests r JOIN webhook_deliveries d"
        " ON d.id = r.delivery_id WHERE d.webhook_id = :id",
        {"id": webhook_id},
    )
    if waiting >= QUEUED_PER_WEBHOOK:
        retry = math.ceil(min(TIMEOUT, current_app.config["WEBHOOKS_TIMEOUT"]))
        raise Deferred(
            f"Busy: {waiting} pings or replays of this webhook are waiting for the worker;"
            " try again shortly.",
            {"Retry-After": str(retry)},
        )
    moment = now()
    request = {
        "id": db.new_id(),
        "kind": kind,
        "webhook_id": webhook_id,
        "delivery_id": delivery_id,
        "requested_at": iso(moment),
        "expires_at": iso(moment + DEADLINE),
    }
    db.execute(
        "INSERT INTO webhook_requests (id, delivery_id, kind, requested_at, due_at)"
        " VALUES (:id, :delivery_id, :kind, :requested_at, :requested_at)",
        request,
    )
    return request


def due(limit: int) -> list[dict]:
    """Requests the worker may take now, oldest first: id, lease seen, webhook and url."""
    return db.query(_DUE, {"now": iso(now()), "limit": limit})


def claim_seen(rows: list[dict]) -> dict[str, str]:
    """Claim the requests of ``rows`` no other worker took since they were read."""
    return worker.claim_seen(rows, "webhook_requests", "due_at")


def send(request_id: str, lease: str, stop=None, connections=None) -> None:
    """Make one claimed request's attempt and record it (its request gone with it); on a
    stop, a cut attempt is not recorded and the request is due again at once."""
    if stop is not None and stop.is_set():  # stopping before it began: due again at once
        _release(request_id, lease)
        return
    asked = db.one(
        "SELECT id, delivery_id, kind, requested_at FROM webhook_requests"
        " WHERE id = :id AND due_at = :lease",
        {"id": request_id, "lease": lease},
    )
    rows = worker.load([asked["delivery_id"]]) if asked else []
    if not rows:  # another worker took it after this one's lease ran out, or it is gone
        return
    timeout = min(TIMEOUT, current_app.config["WEBHOOKS_TIMEOUT"])
    row = {**rows[0], "request": {"id": request_id, "lease": lease}, "timeout": timeout}
    if now() - parse(asked["requested_at"]) > DEADLINE:
        late = f"not sent: the worker did not take it within {DEADLINE.seconds} s"
        result = (row, delivery.Outcome(None, 0, error=late), asked["kind"])
    else:
        result = worker.try_send(row, asked["kind"], {}, connections)
    if stop is not None and stop.is_set() and not result[1].ok and result[1].status_code is None:
        _release(request_id, lease)  # cut by the stop: not logged, due again at once
        return
    worker.record([result])


def _release(request_id: str, lease: str) -> None:
    """Give a claimed request back, due now, if its lease is still this worker's."""
    with db.transaction():
        db.execute(
            "UPDATE webhook_requests SET due_at = :now WHERE id = :id AND due_at = :lease",
            {"now": iso(now()), "id": request_id, "lease": lease},
        )


def deliver_due(batch: int = worker.BATCH) -> int:
    """Every due request, one after another (``--once``); answer how many were taken."""
    leases = claim_seen(due(batch))
    connections = delivery.Connections()
    try:
        for request_id, lease in sorted(leases.items()):
            send(request_id, lease, connections=connections)
    finally:
        connections.close()
    return len(leases)
