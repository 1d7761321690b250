"""The outbox: ``emit`` writes an event and its deliveries in the caller's transaction.

A rolled-back change therefore emits nothing and a committed one loses nothing; the worker
(``shop.webhooks.worker``) sends what the outbox holds. ``emit`` reads the enabled webhooks once
per transaction for all its events (a status change emits two or three); the payload is
rendered only when somebody subscribes.
"""

import threading
import time

from flask import current_app

from shop import db
from shop.clock import iso, now
from shop.net.announcements import API_KEYS, EVERYTHING
from shop.net.jsontext import compact
from shop.permissions import OWNER_PERMISSIONS_SQL, rights_of
from shop.webhooks.events import EVENTS

# A webhook, its events and what its owner may read now. A webhook belongs to a person: the
# administrator who made it or whose key made it; a key's scopes at that moment are kept on
# the webhook (``scopes``) and bound it for good, whatever becomes of the key.
CREATOR = f"""
    SELECT w.id, w.url, w.owner_id, w.scopes, u.active AS owner_active,
           u.email AS owner_email, r.name AS owner_role, {OWNER_PERMISSIONS_SQL},
           (SELECT string_agg(s.event, ' ') FROM webhook_subscriptions s
             WHERE s.webhook_id = w.id) AS events
    FROM webhooks w
    LEFT JOIN users u ON u.id = w.owner_id
    LEFT JOIN roles r ON r.id = u.role_id"""

_ENABLED = CREATOR + " WHERE w.enabled = 1"

TOPIC = "webhooks"  # announced (``shop/net/announcements.py``) by every change of a webhook
KEPT_SECONDS = 10  # the most a change nobody announced (SQL by hand) goes unseen


class Webhooks(list):
    """The ``_ENABLED`` rows as one read answered them, with the ids of those whose owner
    may receive each event type, worked out once per event type and read (``targets``):
    a pure function of the rows, so it lives exactly as long as they are kept."""

    __slots__ = ("_targets",)

    def __init__(self, rows):
        super().__init__(rows)
        self._targets: dict[str, list[str]] = {}

    def targets(self, event_type: str) -> list[str]:
        """The enabled webhooks subscribed to ``event_type`` whose owner holds its right."""
        found = self._targets.get(event_type)
        if found is None:
            permission = EVENTS[event_type]
            found = [
                row["id"]
                for row in self
                if event_type in (row["events"] or "").split() and permission in creator_rights(row)
            ]
            self._targets[event_type] = found  # the same answer if two threads race here
        return found


class Subscribers:
    """The enabled webhooks (``_ENABLED`` rows) kept by one app for ``KEPT_SECONDS``, so a
    checkout with no webhook, or the same few, reads none. Forgotten on every node when a
    webhook changes (``changed``) and when a person's rights do (the API keys' announcements,
    made for each change of a role, a permission, an activity: a webhook's rights are its
    owner's, as a key's). Only what is kept is shared: the rows are never changed."""

    def __init__(self, announcements):
        self.announcements = announcements
        # Off in the worker (``flask jobs run``): without Redis it hears no web process's
        # change, and the few events it emits can afford the read.
        self.keeping = True
        self.kept = None  # (deadline, rows)
        self.generation = 0  # moves on every forgetting: a read begun before it is not kept
        self.lock = threading.Lock()
        announcements.listen(TOPIC, self.forget)
        announcements.listen(API_KEYS, self.forget)  # a person's rights changed

    def rows(self) -> "Webhooks":
        """The enabled webhooks: kept, or read (and kept unless forgotten meanwhile)."""
        usable = self.keeping and self.announcements.usable()
        kept = self.kept
        if usable and kept is not None and kept[0] > time.monotonic():
            return kept[1]
        generation = self.generation
        rows = Webhooks(db.query(_ENABLED))
        with self.lock:
            if usable and generation == self.generation:
                self.kept = (time.monotonic() + KEPT_SECONDS, rows)
        return rows

    def forget(self, _item: str = EVERYTHING) -> None:
        """Read them again next time (this process only)."""
        with self.lock:
            self.generation += 1
            self.kept = None


def init_app(app) -> Subscribers:
    """Give ``app`` its kept webhooks (one per app: tests with two apps are two nodes)."""
    subscribers = Subscribers(app.extensions["shop.announcements"])
    app.extensions["shop.webhook_subscribers"] = subscribers
    return subscribers


def changed() -> None:
    """A webhook was made, changed, disabled or deleted: every node reads them again once
    the open transaction commits (at once outside one)."""
    announcements = current_app.extensions["shop.announcements"]
    db.after_commit(lambda: announcements.announce(TOPIC))


def read_subscriptions() -> Webhooks:
    """Every enabled webhook with its events, the same for all the events a transaction
    emits (the rights are checked again at delivery), kept between transactions
    (``Subscribers``). A writer that sends its last writes (``db.send``: checkout) calls it
    before them, so its ``emit`` reads nothing between them and the COMMIT."""
    subscribers = current_app.extensions["shop.webhook_subscribers"]
    return db.get_db().once_in_transaction("webhooks.enabled", subscribers.rows)


def creator_rights(row: dict | None) -> frozenset[str]:
    """The permissions a webhook's owner holds now, within the scopes of the key that made
    it (a ``CREATOR`` row); deny by default: no active owner, no rights."""
    if row is None or row["owner_id"] is None or not row["owner_active"]:
        return frozenset()
    owner = f"{row['role_permissions'] or ''} {row['extra_permissions'] or ''}".split()
    if row["scopes"] is None:
        return frozenset(owner)
    return rights_of({**row, "source": "admin"})


def missing_rights(row: dict) -> list[str]:
    """The rights of a webhook's events that its owner no longer holds (a ``CREATOR`` row)."""
    rights = creator_rights(row)
    return sorted({EVENTS[e] for e in (row["events"] or "").split() if EVENTS[e] not in rights})


def envelope(event_id: str, event_type: str, moment: str, data) -> str:
    """The body every attempt of an event sends: the resource plus ``type``, ``id`` and
    ``timestamp``, as compact JSON."""
    body = {"id": "evt_" + event_id, "type": event_type, "timestamp": moment, "data": data}
    return compact(body)


def emit(event_type: str, subject_id: str | None, render):
    """Queue ``event_type`` for every enabled webhook whose creator may read it; answer the
    payload it rendered, or None when nobody receives the event.

    Call it inside the transaction that makes the change. ``render(subject_id)`` is the
    emitter's own: it answers the resource as the API shows it to a reader holding the
    event's right (``services/orders.load`` for an order, ``services/catalogue.load_product``
    for a product...). It runs only when somebody is subscribed, and a caller about to show
    the same resource may answer the payload instead of rendering it again.
    """
    targets = read_subscriptions().targets(event_type)
    if not targets:
        return None
    moment = now()
    data = render(subject_id)
    store(event_type, subject_id, data, targets, iso(moment))
    return data


_EVENT = (
    "INSERT INTO webhook_events (id, type, subject_id, payload, created_at)"
    " VALUES (:event_id, :type, :subject_id, :payload, :now)"
)
# Only to webhooks that still exist (and, for the worker's, are enabled): the list comes
# from ``Subscribers``, which another node's change may have outdated by up to a second.
_DELIVERIES = (
    "INSERT INTO webhook_deliveries (id, webhook_id, event_id, event_type, status,"
    " scheduled_attempts, next_attempt_at, created_at, updated_at)"
    " SELECT v.column1, w.id, :event_id, :type, 'pending', 0, :due, :now, :now"
    " FROM (VALUES {values}) AS v JOIN webhooks w ON w.id = v.column2{enabled}"
)
_DELIVERY = "(:id{n}, :webhook_id{n})"


def store(event_type: str, subject_id, data, webhook_ids, moment: str, due=True) -> list[str]:
    """Write one event and a delivery of it to each webhook; answer the delivery ids.

    ``due`` deliveries are the worker's at once; the others (a ping) are attempted by the
    caller and never retried. On PostgreSQL the event and its deliveries are one statement
    (a round trip less in every checkout that somebody subscribes to); SQLite, in process,
    runs the two inserts.
    """
    event_id = db.new_id()
    ids = [db.new_id() for _ in webhook_ids]
    params = {
        "event_id": event_id,
        "type": event_type,
        "subject_id": subject_id,
        "payload": envelope(event_id, event_type, moment, data),
        "now": moment,
        "due": moment if due else None,
    }
    for n, (delivery_id, webhook_id) in enumerate(zip(ids, webhook_ids, strict=True)):
        params |= {f"id{n}": delivery_id, f"webhook_id{n}": webhook_id}
    deliveries = _DELIVERIES.format(
        values=", ".join(_DELIVERY.format(n=n) for n in range(len(ids))),
        enabled=" AND w.enabled = 1" if due else "",
    )
    # Sent (``db.send``): the ids are ours, nothing is read back.
    if db.get_db().engine == "postgresql":
        db.send(f"WITH event AS ({_EVENT}) {deliveries}", params)
    else:
        db.send(_EVENT, params)
        db.send(deliveries, params)
    return ids
