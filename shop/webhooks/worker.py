"""Webhook delivery: one delivery's attempt, its record and the queue's upkeep.

``claim_seen`` claims due deliveries just before their attempts (a lease of one attempt's
timeout plus ``SHOP_WORKER_LEASE_MARGIN``, the claim's moment being its token),
``send_batch`` sends a run of them to one URL and records the results in one transaction,
each only while its token is still the worker's; ``deliver_due`` does the same one by one
(``--once``). Retries follow ``SCHEDULE`` with +-20 % jitter; a
webhook failing past ``disabling.DISABLE_AFTER`` is disabled. The loop is ``pool``; the
guarantees: docs/webhooks.md, "Delivery, retries and ordering".
"""

import logging
import random
from datetime import timedelta

from flask import current_app

from shop import db
from shop.clock import iso, now, parse
from shop.webhooks import delivery, disabling, signing
from shop.webhooks.events import EVENTS, PING
from shop.webhooks.outbox import CREATOR, creator_rights, missing_rights

log = logging.getLogger("shop.webhooks")

# Seconds before each retry: 8 attempts over about 27.6 hours.
SCHEDULE = (5, 5 * 60, 30 * 60, 2 * 3600, 5 * 3600, 10 * 3600, 10 * 3600)
ATTEMPTS = len(SCHEDULE) + 1
JITTER = 0.2
BATCH = 100  # deliveries a pass takes at most
# Deliveries to one URL a sending thread takes at once, sends one after another on one kept
# connection and records in one transaction (``send_batch``).
RUN = 20

_DUE = """
    SELECT d.id FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
    WHERE d.next_attempt_at <= :now AND w.enabled = 1
    ORDER BY d.next_attempt_at, d.id LIMIT :batch"""

_LOAD = """
    SELECT d.id, d.webhook_id, d.event_type, d.status, d.scheduled_attempts, e.payload,
           d.next_attempt_at,
           e.subject_id,
           w.url, w.secret, w.previous_secret, w.previous_secret_expires_at, w.enabled,
           w.failing_since, w.last_success_at
    FROM webhook_deliveries d
    JOIN webhook_events e ON e.id = d.event_id
    JOIN webhooks w ON w.id = d.webhook_id"""

# A webhook's next due deliveries to one URL, at most ``:limit`` (``_claim_next``).
NEXT_DUE = _LOAD + (
    " WHERE d.id IN (SELECT id FROM webhook_deliveries"
    " WHERE webhook_id || '' = :webhook_id AND next_attempt_at <= :now"
    " ORDER BY next_attempt_at, id LIMIT :limit{lock}) AND w.url = :url AND w.enabled = 1"
)  # in no order: ``_claim_next`` sorts the few it took

_ATTEMPT_COLUMNS = (
    "id", "delivery_id", "at", "kind", "status_code", "duration_ms", "response_excerpt", "error"
)  # fmt: skip

# A success is written to the endpoint's health at most this often (a busy endpoint would
# otherwise rewrite its row on every delivery).
HEALTH_INTERVAL = timedelta(seconds=60)


def backoff(attempts_made: int) -> float:
    """Seconds to wait after the ``attempts_made``-th failed attempt, with jitter."""
    return SCHEDULE[attempts_made - 1] * random.uniform(1 - JITTER, 1 + JITTER)  # noqa: S311


def lease_length() -> timedelta:
    """How long one claimed delivery is the worker's: one attempt's timeout and a margin, so
    a worker killed mid-pass leaves its claims due again within about a minute."""
    config = current_app.config
    return timedelta(seconds=config["WEBHOOKS_TIMEOUT"] + config["WORKER_LEASE_MARGIN"])


def claim(batch: int = BATCH) -> dict[str, str]:
    """Take up to ``batch`` due deliveries for this worker: their ids and lease tokens.

    A claim pushes a delivery's next attempt a lease ahead; that moment is the lease's token
    (a later claim or renewal always writes a later one), and a result is written only
    while the token is still the one the worker holds.
    """
    moment = now()
    lease = iso(moment + lease_length())
    database = db.get_db()
    sql = _DUE + (" FOR UPDATE OF d SKIP LOCKED" if database.engine == "postgresql" else "")
    with db.transaction():
        ids = [row["id"] for row in db.query(sql, {"now": iso(moment), "batch": batch})]
        if ids:
            marks, params = db.in_list("d", ids)
            db.execute(
                f"UPDATE webhook_deliveries SET next_attempt_at = :lease WHERE id IN {marks}",
                {**params, "lease": lease},
            )
    return dict.fromkeys(ids, lease)


def claim_seen(
    rows: list[dict], table: str = "webhook_deliveries", column: str = "next_attempt_at"
):
    """Claim the items of ``rows`` (id, and ``next_attempt_at`` as read) that no other
    worker claimed since: ``{id: lease token}``. Deliveries, or requests (``manual``)."""
    if not rows:
        return {}
    lease = iso(now() + lease_length())
    # One statement for the pass: each row only while it is as this worker saw it.
    params = {"lease": lease} | {f"i{n}": row["id"] for n, row in enumerate(rows)}
    params |= {f"s{n}": row["next_attempt_at"] for n, row in enumerate(rows)}
    seen = [f"(id = :i{n} AND {column} = :s{n})" for n in range(len(rows))]
    taken = db.query(
        f"UPDATE {table} SET {column} = :lease"  # noqa: S608 - our names, numbered marks
        f" WHERE {' OR '.join(seen)} RETURNING id",
        params,
    )
    return {row["id"]: lease for row in taken}


def _renew(delivery_id: str, lease: str) -> str | None:
    """The lease to send under: the one held, or a fresh one when less than an attempt's
    time is left; None when another worker took the delivery after this one's ran out."""
    moment = now()
    length = lease_length()
    margin = current_app.config["WORKER_LEASE_MARGIN"]
    if parse(lease) - moment >= length - timedelta(seconds=margin / 2):
        return lease
    fresh = iso(moment + length)
    with db.transaction():
        renewed = db.execute(
            "UPDATE webhook_deliveries SET next_attempt_at = :fresh"
            " WHERE id = :id AND next_attempt_at = :lease",
            {"fresh": fresh, "id": delivery_id, "lease": lease},
        )
    return fresh if renewed else None


def _release_all(items: list[tuple]) -> None:
    """Give claimed deliveries ``(id, lease)`` back, due now, each while its lease is still
    this worker's: one statement."""
    if items:
        with db.transaction():
            _give_back(items)


def _give_back(items: list[tuple]) -> None:
    """The statement of ``_release_all``, in the caller's transaction."""
    if items:
        held, params = _held(items)
        db.execute(
            f"UPDATE webhook_deliveries SET next_attempt_at = :now WHERE {held}",  # noqa: S608
            {**params, "now": iso(now())},
        )


def _held(items: list[tuple]) -> tuple[str, dict]:
    """``(id = :i0 AND next_attempt_at = :l0) OR ...`` for ``(id, lease)`` pairs (a lease of
    None: the id alone), and its parameters."""
    conditions, params = [], {}
    for n, (item_id, lease) in enumerate(items):
        params[f"i{n}"] = item_id
        if lease is None:
            conditions.append(f"id = :i{n}")
        else:
            params[f"l{n}"] = lease
            conditions.append(f"(id = :i{n} AND next_attempt_at = :l{n})")
    return " OR ".join(conditions), params


def _rows(columns: tuple, records: list[dict]) -> tuple[str, dict]:
    """``(:a0, :b0), (:a1, :b1), ...`` and its parameters: several rows in one INSERT."""
    params = {f"{c}{n}": record[c] for n, record in enumerate(records) for c in columns}
    values = ", ".join(
        "(" + ", ".join(f":{c}{n}" for c in columns) + ")" for n in range(len(records))
    )
    return values, params


def load(ids: list[str]) -> list[dict]:
    marks, params = db.in_list("d", ids)
    return db.query(_LOAD + f" WHERE d.id IN {marks} ORDER BY d.id", params)


def deliver_due(batch: int = BATCH, stop=None) -> int:
    """One pass over the outbox, one delivery after another (``--once``; the worker's loop
    sends concurrently: ``shop/webhooks/pool.py``); answer how many deliveries were taken.
    When ``stop`` is set (SIGTERM) the deliveries not yet tried are released at once."""
    leases = claim(batch)
    if leases:
        owners, health, connections = {}, {}, delivery.Connections()
        try:
            for delivery_id in sorted(leases):
                send_claimed(delivery_id, leases[delivery_id], stop, connections, owners, health)
        finally:
            connections.close()
    return len(leases)


def send_claimed(delivery_id: str, lease: str, stop=None, connections=None, owners=None,
                 health=None, follow=False, row=None) -> tuple | None:  # fmt: skip
    """Send one claimed delivery and record the attempt as soon as it ends (``send_batch``
    of one); with ``follow``, answer the webhook's next due delivery, claimed, as
    ``(id, lease, row)`` (None when there is none)."""
    taken = send_batch([(delivery_id, lease, row)], stop, connections, owners, health,
                       follow=1 if follow else 0, limit=1)  # fmt: skip
    return taken[0] if taken else None


def send_batch(claimed: list[tuple], stop=None, connections=None, owners=None, health=None,
               follow: int = 0, limit: int = RUN) -> list[tuple]:  # fmt: skip
    """Send claimed deliveries of one webhook, ``(id, lease, row or None)`` each, one after
    another, and record their attempts in one transaction when the last ends.

    Each is renewed first when its lease runs short, and skipped when another worker took
    it after the lease ran out. The first attempt that fails ends the batch: the deliveries
    not yet tried are given back, due at once (each is tried on its own schedule, and a
    hung endpoint holds the thread for one timeout, not one per delivery). An attempt that
    fails because the worker is stopping (``stop`` set: its connection was cut) is not
    recorded: it is given back with the untried ones, for any worker to send (at least
    once: the receiver may have seen it).

    With ``follow`` (n > 0), unless an attempt failed, the recording transaction also claims
    the webhook's next due deliveries to the same URL, up to ``limit``, when at least n are
    due; they are answered,
    ``[(id, lease, row)]``, for the caller to pass back here: a backlog costs a batch one
    transaction, not a look for due work, a claim and a record each (``pool.Sender``).
    """
    owners, health = ({} if owners is None else owners), ({} if health is None else health)
    missing = [delivery_id for delivery_id, _, row in claimed if row is None]
    loaded = {row["id"]: row for row in load(missing)} if missing else {}
    results, untried, failed = [], [], False
    for delivery_id, lease, row in claimed:
        row = row if row is not None else loaded.get(delivery_id)
        if failed or (stop is not None and stop.is_set()):  # given back, untried
            untried.append((delivery_id, lease))
            continue
        lease = _renew(delivery_id, lease) if row is not None else None
        if lease is None:  # gone, or another worker holds it now: it sends, not this one
            continue
        row = {**row, **health.get(row["webhook_id"], {}), "lease": lease}
        result = try_send(row, "scheduled", owners, connections)
        failed = not result[1].ok and result[2] == "scheduled"  # the rest is given back
        if failed and stop is not None and stop.is_set():
            untried.append((delivery_id, lease))
            continue
        results.append(result)
    if not results:
        _release_all(untried)
        return []
    if failed or (stop is not None and stop.is_set()):  # the webhook's run ends here
        follow = 0
    last = results[-1][0]
    taken = record(results, health, follow=last if follow else None, release=untried,
                   at_least=follow, limit=limit)["next"]  # fmt: skip
    return [(row["id"], row["next_attempt_at"], row) for row in taken]


# Beyond the event's permission, who may read the record itself, by resource: the rule the
# API reads with (a non-owner administrator sees only their own keys). The package that owns
# such records registers its rule (create_app: ``shop.auth.keys``'s for api keys), as
# webhooks sit below identity and may not import it.
RECORD_RULES: dict = {}


def record_rule(resource: str, rule) -> None:
    """Register who may read a ``resource``'s record: ``rule(subject_id, owner_id,
    owner_role)`` answers whether that administrator could read it through the API."""
    RECORD_RULES[resource] = rule


def _owner(webhook_id: str, owners: dict) -> tuple:
    """A webhook's ``CREATOR`` row and its owner's rights now, once per pass."""
    if webhook_id not in owners:
        row = db.one(CREATOR + " WHERE w.id = :id", {"id": webhook_id})
        owners[webhook_id] = (row, creator_rights(row))
    return owners[webhook_id]


def readable(event_type: str, subject_id, owner: dict, rights: frozenset) -> bool:
    """Whether a webhook's owner could read the event's record through the API now."""
    if EVENTS[event_type] not in rights:
        return False
    rule = RECORD_RULES.get(event_type.split(".", 1)[0])
    if rule is None:
        return True
    return rule(subject_id, owner["owner_id"], owner["owner_role"])


def try_send(row: dict, kind: str, owners: dict, connections=None) -> tuple:
    """Send a delivery unless its webhook's owner may not read what it carries now: a lost
    right disables the webhook; a record the owner may not see is skipped."""
    if row["event_type"] != PING:
        owner, rights = _owner(row["webhook_id"], owners)
        needed = EVENTS[row["event_type"]]
        if needed not in rights:
            reason = f"not sent: the webhook's owner no longer holds {needed}"
            row = {**row, "lost": owner}
            return row, delivery.Outcome(None, 0, error=reason), "skipped"
        if not readable(row["event_type"], row["subject_id"], owner, rights):
            reason = "not sent: the webhook's owner may not read this record"
            return row, delivery.Outcome(None, 0, error=reason), "skipped"
    return row, _send_or_fail(row, connections), kind


def _send_or_fail(row: dict, connections) -> delivery.Outcome:
    """The attempt's outcome, whatever happens: an unexpected failure is this delivery's
    error (retried on schedule), never the pass's, so no delivery can stop the queue."""
    try:
        return _send(row, connections)
    except Exception as error:  # noqa: BLE001 - recorded as the attempt's outcome
        log.exception("webhook delivery %s failed unexpectedly", row["id"])
        return delivery.Outcome(None, 0, error=f"unexpected {type(error).__name__}"[:300])


def _send(row: dict, connections) -> delivery.Outcome:
    moment = now()
    secrets = [row["secret"]]
    expires = row["previous_secret_expires_at"]
    if row["previous_secret"] and expires and parse(expires) > moment:
        secrets.append(row["previous_secret"])
    body = row["payload"].encode()
    headers = signing.headers(secrets, "msg_" + row["id"], int(moment.timestamp()), body)
    config = current_app.config
    return delivery.post(
        row["url"],
        body,
        headers,
        timeout=row.get("timeout") or config["WEBHOOKS_TIMEOUT"],
        allow_private=config["WEBHOOKS_ALLOW_PRIVATE"],
        connections=connections,
    )


def _next_step(row: dict, outcome: delivery.Outcome, kind: str, moment) -> tuple:
    """(status, next attempt or None, scheduled attempts so far, exhausted)."""
    scheduled = row["scheduled_attempts"] + (kind == "scheduled")
    if outcome.ok:
        return "succeeded", None, scheduled, False
    if kind == "scheduled":
        if scheduled >= ATTEMPTS:
            return "failed", None, scheduled, True
        return "pending", iso(moment + timedelta(seconds=backoff(scheduled))), scheduled, False
    if kind in ("skipped", "ping"):
        return ("skipped" if kind == "skipped" else "failed"), None, scheduled, False
    return row["status"], "keep", scheduled, False  # a failed replay changes no course


def record(results: list[tuple], health: dict | None = None, follow: dict | None = None,
           release=(), at_least: int = 1, limit: int = 1) -> dict:  # fmt: skip
    """Attempts, the deliveries' next steps and the endpoints' health: one transaction,
    which also gives back ``release`` (``(id, lease)`` claimed and not tried). Answer the
    endpoints' health as written, by webhook id (into ``health``), and with ``follow`` (a
    delivery's row) up to ``limit`` of its webhook's next due deliveries, claimed when at
    least ``at_least`` are due (``_claim_next``), as ``next`` (a list)."""
    health = {} if health is None else health
    moment = now()
    at = iso(moment)
    records, touched, exhausted, steps, lost = [], {}, set(), {}, {}
    with db.transaction():
        for row, outcome, kind in results:
            record = {
                "id": _attempt_id(row),
                "delivery_id": row["id"],
                "at": at,
                "kind": kind,
                "status_code": outcome.status_code,
                "duration_ms": outcome.duration_ms,
                "response_excerpt": outcome.excerpt,
                "error": outcome.error,
            }
            records.append(record)
            status, next_at, scheduled, spent = _next_step(row, outcome, kind, moment)
            steps.setdefault((status, scheduled, next_at), []).append((row["id"], row.get("lease")))
            if kind != "skipped":
                touched[row["webhook_id"]] = (row, outcome.ok)
            if spent:
                exhausted.add(row["webhook_id"])
            if row.get("lost"):
                lost[row["webhook_id"]] = row["lost"]
        # The step is written only while the lease is still the writer's: the attempt is
        # logged anyway (the receiver saw it), the course is the new holder's to set.
        # One statement per step (a batch's successes share one).
        for (status, scheduled, next_at), ids in steps.items():
            held, params = _held(ids)
            db.execute(
                "UPDATE webhook_deliveries SET status = :status,"
                " scheduled_attempts = :scheduled, updated_at = :now"
                + ("" if next_at == "keep" else ", next_attempt_at = :next")
                + f" WHERE {held}",
                {**params, "status": status, "scheduled": scheduled, "now": at, "next": next_at},
            )
        _give_back(list(release))
        values, params = _rows(_ATTEMPT_COLUMNS, records)
        db.execute(
            f"INSERT INTO webhook_attempts ({', '.join(_ATTEMPT_COLUMNS)}) VALUES {values}", params
        )
        for webhook_id, (row, ok) in touched.items():
            health[webhook_id] = _health(webhook_id, row, ok, moment)
        for webhook_id in exhausted:
            disabling.if_failing(webhook_id, moment, ATTEMPTS)
        for owner in lost.values():
            disabling.for_lost_rights(owner, moment)
        taken = [] if follow is None else _claim_next(follow, moment, at_least, limit)
    return {"records": records, "health": health, "next": taken}


def _claim_next(row: dict, moment, at_least: int = 1, limit: int = 1) -> list[dict]:
    """The next due deliveries of ``row``'s webhook, to the same URL (so the same origin,
    whose slot the caller holds), up to ``limit``, claimed as ``claim_seen`` does when at
    least ``at_least`` are due (fewer wait for the dispatcher's next look, to go out in a
    batch); [] when not.

    Picked by id in a subquery that walks the due index in order and stops at the first:
    joined to the events and sorted whole, SQLite read every waiting payload of a backlog
    for each delivery. ``webhook_id || ''`` keeps both planners off the webhook's index,
    which holds every delivery it ever had (SQLite took it whenever its statistics were
    older than the outbox, and sorted them all each time).
    """
    lock = " FOR UPDATE SKIP LOCKED" if db.get_db().engine == "postgresql" else ""
    taken = db.query(
        NEXT_DUE.format(lock=lock),
        {"webhook_id": row["webhook_id"], "url": row["url"], "now": iso(moment), "limit": limit},
    )
    if len(taken) < max(at_least, 1):
        return []
    taken.sort(key=lambda t: (t["next_attempt_at"], t["id"]))
    leases = claim_seen(taken)
    return [{**t, "next_attempt_at": leases[t["id"]]} for t in taken if t["id"] in leases]


def _attempt_id(row: dict) -> str:
    """A new attempt's id: an asked-for attempt's own (``manual``), its request done, while
    the request is still the writer's; otherwise a fresh one."""
    asked = row.get("request")
    if asked and db.execute(
        "DELETE FROM webhook_requests WHERE id = :id AND due_at = :lease",
        {"id": asked["id"], "lease": asked["lease"]},
    ):
        return asked["id"]
    return db.new_id()


def _health(webhook_id: str, row: dict, ok: bool, moment) -> dict:
    """The endpoint's last success and since when it fails, after its latest attempt:
    written, and answered for the pass's next attempt to the same endpoint."""
    at = iso(moment)
    last, failing = row["last_success_at"], row["failing_since"]
    if ok:
        fresh = last and moment - parse(last) < HEALTH_INTERVAL
        if fresh and not failing:
            return {"last_success_at": last, "failing_since": None}
        db.execute(
            "UPDATE webhooks SET last_success_at = :at, failing_since = NULL WHERE id = :id",
            {"at": at, "id": webhook_id},
        )
        return {"last_success_at": at, "failing_since": None}
    if not failing:
        db.execute(
            "UPDATE webhooks SET failing_since = COALESCE(failing_since, :at) WHERE id = :id",
            {"at": at, "id": webhook_id},
        )
    return {"last_success_at": last, "failing_since": failing or at}


def disable_without_rights() -> int:
    """Disable every enabled webhook whose owner lost a right its events need (a minute's
    job of the worker: the owner's rights change without the webhook noticing)."""
    moment = now()
    with db.transaction():
        for row in db.query(CREATOR + " WHERE w.enabled = 1"):
            if missing_rights(row):
                disabling.for_lost_rights(row, moment)
    return 0


def prune() -> int:
    """Forget finished deliveries and their events after ``SHOP_WEBHOOKS_RETENTION_DAYS``."""
    days = current_app.config["WEBHOOKS_RETENTION_DAYS"]
    cutoff = iso(now() - timedelta(days=days))
    with db.transaction():
        db.execute(
            "DELETE FROM webhook_deliveries WHERE next_attempt_at IS NULL AND created_at < :cutoff",
            {"cutoff": cutoff},
        )
        db.execute(
            "DELETE FROM webhook_events WHERE created_at < :cutoff AND NOT EXISTS ("
            " SELECT 1 FROM webhook_deliveries d WHERE d.event_id = webhook_events.id)",
            {"cutoff": cutoff},
        )
    return 0
