"""Webhooks and their delivery log: what the JSON API and the console both call.

Every administrator holding ``webhooks.read`` sees every webhook (they are the shop's
integrations, like its settings); the rights that matter are its owner's, checked on
every event. A webhook belongs to a person: the administrator who made it, or the owner of
the key that made it, whose scopes of that moment are kept with it. Subscribing needs the
read right each event carries, within the caller's ceiling (a key: its scopes within its
owner's permissions). Whoever changes a webhook's URL or events becomes its owner, so
nobody redirects data they could not read themselves.
"""

from datetime import timedelta

from flask import current_app

from shop import audit, db
from shop.clock import iso, now, parse
from shop.errors import Forbidden, Invalid, NotFound
from shop.webhooks import manual, outbox, signing
from shop.webhooks.delivery import UrlError, check_url
from shop.webhooks.events import EVENTS, PING
from shop.webhooks.outbox import store as store_event

ROTATION_OVERLAP = timedelta(hours=24)

_SELECT = """
    SELECT w.id, w.url, w.description, w.enabled, w.disabled_reason, w.disabled_at,
           w.owner_id, w.key_id, w.created_with, w.created_at, w.updated_at,
           w.last_success_at, w.failing_since, w.previous_secret_expires_at,
           (SELECT string_agg(s.event, ' ') FROM webhook_subscriptions s
             WHERE s.webhook_id = w.id) AS events
    FROM webhooks w"""


def present(row: dict) -> dict:
    """A webhook as the API shows it: never its secret."""
    overlap = row["previous_secret_expires_at"]
    if overlap and parse(overlap) <= now():
        overlap = None
    return {
        "id": row["id"],
        "url": row["url"],
        "description": row["description"],
        "events": sorted((row["events"] or "").split()),
        "enabled": bool(row["enabled"]),
        "disabled_reason": row["disabled_reason"],
        "disabled_at": row["disabled_at"],
        "created_at": row["created_at"],
        "updated_at": row["updated_at"],
        "last_success_at": row["last_success_at"],
        "failing_since": row["failing_since"],
        "previous_secret_expires_at": overlap,
        "created_by": {
            "kind": "api_key" if row["created_with"] == "api_key" else "admin",
            "id": row["key_id"] if row["created_with"] == "api_key" else row["owner_id"],
        },
    }


def get(webhook_id: str) -> dict | None:
    """One webhook, or None."""
    row = db.one(_SELECT + " WHERE w.id = :id", {"id": webhook_id})
    return present(row) if row else None


def found(webhook_id: str) -> dict:
    """One webhook, or a 404."""
    record = get(webhook_id)
    if record is None:
        raise NotFound("Webhook not found.")
    return record


def list_page(page: int, page_size: int, since: dict | None = None) -> dict:
    """A page of webhooks, newest first (``since``: ``shop.db.pages.changed_since``'s filters)."""
    from shop.db.pages import Where, changed_since, paginate

    where = Where()
    order = changed_since(where, since or {}, "w.") or " ORDER BY w.created_at DESC, w.id DESC"
    return paginate(
        _SELECT,
        "webhooks w",
        where,
        order,
        {"page": page, "page_size": page_size, "cursor": (since or {}).get("cursor")},
        convert=present,
    )


def clean_url(url: str) -> str:
    """A URL a webhook may use (400 naming the problem otherwise)."""
    config = current_app.config
    try:
        return check_url(
            url,
            allow_http=config["WEBHOOKS_ALLOW_HTTP"],
            allow_private=config["WEBHOOKS_ALLOW_PRIVATE"],
        )
    except UrlError as error:
        raise Invalid(str(error)) from None


def check_events(events, caller) -> list[str]:
    """The events, deduplicated, if ``caller`` may read what each carries (403 otherwise).

    The one check of every operation that sets a webhook's events or destination or hands
    out its secret (create, update, rotate-secret): whoever holds the secret can sign those
    events, so they need the same rights as subscribing to them.
    """
    chosen = sorted(set(events))
    if not chosen:
        raise Invalid("events: choose at least one event.")
    for event in chosen:
        if event not in EVENTS:
            raise Invalid(f"events: {event!r} is not an event; events: {', '.join(EVENTS)}.")
        if not caller.can(EVENTS[event]):
            raise Forbidden(caller.denial(EVENTS[event], purpose=f"subscribe to {event}"))
    return chosen


def _creator(caller) -> dict:
    """Who a webhook belongs to: the administrator, or the person behind the key, bounded
    for good by the key's scopes of this moment (the key may be rolled, expire or be revoked
    later without the webhook noticing)."""
    if caller.kind == "api_key":
        if caller.owner_id is None:
            raise Forbidden(
                "Access denied: a webhook belongs to a person; this key was made by the CLI"
                " and has no owner. Use an administrator's key or the console.",
            )
        return {
            "owner_id": caller.owner_id,
            "key_id": caller.id,
            "created_with": "api_key",
            "scopes": " ".join(sorted(caller.scopes)),
        }
    return {"owner_id": caller.id, "key_id": None, "created_with": "session", "scopes": None}


def _subscribe(webhook_id: str, events: list[str]) -> None:
    db.execute("DELETE FROM webhook_subscriptions WHERE webhook_id = :id", {"id": webhook_id})
    db.execute_many(
        "INSERT INTO webhook_subscriptions (webhook_id, event) VALUES (:id, :event)",
        [{"id": webhook_id, "event": e} for e in events],
    )


def create(data: dict, caller) -> dict:
    """A new webhook from ``url``, ``events`` and ``description``; with its secret, once."""
    url = clean_url(data["url"])
    events = check_events(data["events"], caller)
    webhook_id, secret, moment = db.new_id(), signing.new_secret(), iso(now())
    with db.transaction():
        db.execute(
            "INSERT INTO webhooks (id, url, description, secret, enabled, owner_id, key_id,"
            " created_with, scopes, created_at, updated_at) VALUES (:id, :url, :description,"
            " :secret, 1, :owner_id, :key_id, :created_with, :scopes, :now, :now)",
            {
                "id": webhook_id,
                "url": url,
                "description": (data.get("description") or "").strip(),
                "secret": secret,
                "now": moment,
                **_creator(caller),
            },
        )
        _subscribe(webhook_id, events)
        outbox.changed()
        audit.record(
            "webhook.created",
            {"webhook_id": webhook_id, "url": url, "events": events},
            actor=caller.actor,
        )
    return {**found(webhook_id), "secret": secret}


def update(webhook_id: str, data: dict, caller) -> dict:
    """Change url, events, description or enabled; enabling clears the failure record."""
    current = found(webhook_id)
    sets, params = [], {"id": webhook_id, "now": iso(now())}
    if "url" in data:
        params["url"] = clean_url(data["url"])
        sets.append("url = :url")
    events = None
    if "url" in data or "events" in data:
        # A new destination or new events: the caller's rights must cover all of it.
        events = check_events(data.get("events", current["events"]), caller)
        params.update(_creator(caller))
        sets += [
            "owner_id = :owner_id",
            "key_id = :key_id",
            "created_with = :created_with",
            "scopes = :scopes",
        ]
    if "description" in data:
        params["description"] = (data["description"] or "").strip()
        sets.append("description = :description")
    if "enabled" in data:
        params["enabled"] = data["enabled"]
        sets.append("enabled = :enabled")
        if data["enabled"] and not current["enabled"]:
            sets += ["disabled_reason = NULL", "disabled_at = NULL", "failing_since = NULL"]
        elif not data["enabled"] and current["enabled"]:
            sets += ["disabled_reason = :reason", "disabled_at = :now"]
            params["reason"] = "Disabled by " + (caller.actor.label or caller.kind) + "."
    with db.transaction():
        db.execute(
            "UPDATE webhooks SET " + ", ".join([*sets, "updated_at = :now"]) + " WHERE id = :id",
            params,
        )
        if events is not None:
            _subscribe(webhook_id, events)
        outbox.changed()
        changed = {k: v for k, v in data.items() if k != "description"}
        audit.record("webhook.updated", {"webhook_id": webhook_id, **changed}, actor=caller.actor)
    return found(webhook_id)


def delete(webhook_id: str, caller) -> None:
    """Delete a webhook, its subscriptions and its delivery log (audited as ``caller``'s)."""
    with db.transaction():
        url = db.value("SELECT url FROM webhooks WHERE id = :id", {"id": webhook_id})
        if url is None:
            raise NotFound("Webhook not found.")
        db.execute("DELETE FROM webhooks WHERE id = :id", {"id": webhook_id})
        outbox.changed()
        audit.record("webhook.deleted", {"webhook_id": webhook_id, "url": url}, actor=caller.actor)


def rotate_secret(webhook_id: str, caller) -> dict:
    """A new secret, answered once; the old one keeps signing too for 24 hours. The caller
    needs the rights of subscribing to the webhook's events (403 otherwise)."""
    check_events(found(webhook_id)["events"], caller)
    secret, moment = signing.new_secret(), now()
    with db.transaction():
        moved = db.execute(
            "UPDATE webhooks SET previous_secret = secret, previous_secret_expires_at = :until,"
            " secret = :secret, updated_at = :now WHERE id = :id",
            {
                "until": iso(moment + ROTATION_OVERLAP),
                "secret": secret,
                "now": iso(moment),
                "id": webhook_id,
            },
        )
        if not moved:
            raise NotFound("Webhook not found.")
        audit.record("webhook.secret_rotated", {"webhook_id": webhook_id}, actor=caller.actor)
    return {**found(webhook_id), "secret": secret}


def ping(webhook_id: str) -> dict:
    """Queue a ``webhook.ping`` event for the worker (once, never retried); answer the
    request: the id its attempt will have, in its delivery's log (``manual``)."""
    webhook = found(webhook_id)
    data = {"webhook_id": webhook_id, "url": webhook["url"], "message": "Ping from shop."}
    with db.transaction():
        moment = iso(now())
        (delivery_id,) = store_event(PING, webhook_id, data, [webhook_id], moment, due=False)
        return manual.queue(webhook_id, delivery_id, "ping")


def retry(webhook_id: str, delivery_id: str) -> dict:
    """Queue a replay of a delivery, with the same ``webhook-id``; answer the request."""
    delivery(webhook_id, delivery_id)  # 404 unless it is this webhook's
    with db.transaction():
        return manual.queue(webhook_id, delivery_id, "replay")


_DELIVERIES = """
    SELECT d.id, d.webhook_id, d.event_id, d.event_type, d.status, d.next_attempt_at,
           d.created_at, d.updated_at
    FROM webhook_deliveries d"""


def _present_deliveries(rows: list[dict]) -> list[dict]:
    """Deliveries with their attempts (oldest first), in one query for the lot."""
    if not rows:
        return []
    marks, params = db.in_list("d", [row["id"] for row in rows])
    attempts, queued = {}, {}
    for attempt in db.query(
        "SELECT id, delivery_id, at, kind, status_code, duration_ms, response_excerpt, error"
        f" FROM webhook_attempts WHERE delivery_id IN {marks} ORDER BY delivery_id, at, id",
        params,
    ):
        attempts.setdefault(attempt.pop("delivery_id"), []).append(attempt)
    for request in db.query(
        "SELECT id, delivery_id, kind, requested_at FROM webhook_requests"
        f" WHERE delivery_id IN {marks} ORDER BY requested_at, id",
        params,
    ):
        queued.setdefault(request.pop("delivery_id"), []).append(request)
    result = []
    for row in rows:
        tried = attempts.get(row["id"], [])
        pending = row["status"] == "pending" and row["next_attempt_at"] is not None
        result.append(
            {
                **row,
                "message_id": "msg_" + row["id"],
                "attempt_count": len(tried),
                "next_attempt_at": row["next_attempt_at"] if pending else None,
                "attempts": tried,
                "queued": queued.get(row["id"], []),
            }
        )
    return result


def delivery(webhook_id: str, delivery_id: str) -> dict:
    """One delivery of a webhook, or a 404."""
    row = db.one(
        _DELIVERIES + " WHERE d.id = :id AND d.webhook_id = :webhook_id",
        {"id": delivery_id, "webhook_id": webhook_id},
    )
    if row is None:
        raise NotFound("Delivery not found.")
    return _present_deliveries([row])[0]


def deliveries_page(
    webhook_id: str, status: str | None, page: int, page_size: int, since: dict | None = None
) -> dict:
    """A page of a webhook's deliveries, newest first (``since``: as ``list_page``'s)."""
    from shop.db.pages import Where, changed_since, paginate

    found(webhook_id)
    where = Where("d.webhook_id = :webhook_id", webhook_id=webhook_id)
    if status:
        where.add("d.status = :status", status=status)
    order = changed_since(where, since or {}, "d.") or " ORDER BY d.created_at DESC, d.id DESC"
    result = paginate(
        _DELIVERIES,
        "webhook_deliveries d",
        where,
        order,
        {"page": page, "page_size": page_size, "cursor": (since or {}).get("cursor")},
    )
    result["items"] = _present_deliveries(result["items"])
    return result


_STATUS = """
    SELECT w.id, w.url, w.enabled, w.last_success_at, w.failing_since,
           (SELECT COUNT(*) FROM webhook_deliveries d WHERE d.webhook_id = w.id
             AND d.status = 'pending' AND d.next_attempt_at IS NOT NULL) AS backlog,
           (SELECT MIN(d.created_at) FROM webhook_deliveries d WHERE d.webhook_id = w.id
             AND d.status = 'pending' AND d.next_attempt_at IS NOT NULL) AS oldest_pending_at,
           (SELECT MAX(a.at) FROM webhook_attempts a
             JOIN webhook_deliveries d ON d.id = a.delivery_id
             WHERE d.webhook_id = w.id AND a.kind <> 'skipped'
             AND (a.status_code IS NULL OR a.status_code NOT BETWEEN 200 AND 299))
             AS last_failure_at
    FROM webhooks w ORDER BY w.created_at, w.id"""


def status() -> list[dict]:
    """Per endpoint, for operators (``flask webhooks status``, the console): deliveries
    waiting (``backlog``), the oldest one's age in seconds, the last success (written at
    most once a minute) and the last failed attempt."""
    moment = now()
    rows = db.query(_STATUS)
    for row in rows:
        oldest = row["oldest_pending_at"]
        row["enabled"] = bool(row["enabled"])
        row["oldest_pending_age_seconds"] = (
            max(0, int((moment - parse(oldest)).total_seconds())) if oldest else None
        )
    return rows
