"""An erased customer's personal data taken out of the events the outbox still keeps.

An event's payload is stored once (``webhook_events``) and read again by every attempt, the
replays of ``POST .../retry`` included, for ``SHOP_WEBHOOKS_RETENTION_DAYS``. When a customer
is erased (``customers.accounts.erase``), each stored event that carries their e-mail (their
orders, their carts, their drafts, their guest orders, their registration) has its personal
fields blanked in the erasure's transaction, so a delivery still pending or a replay sends
what the API now shows: the e-mail, the name beside it and the addresses null, the rest
(lines, totals, statuses) as it was. What receivers already hold is theirs to erase: the
``customer.erased`` event (as Shopify's ``customers/redact``) tells them.

Events are found by the e-mail in their text (``LIKE``, no index: an erasure is rare and the
outbox holds a retention period's events).
"""

import json

from shop import db
from shop.db.pages import like_pattern
from shop.webhooks.outbox import envelope

# Fields that hold a person's data wherever they appear in a payload (an order's, a cart's,
# a draft's or a return's). ``name`` is personal only beside an e-mail (a customer's, a
# draft's): a product's or a shipping method's name stays.
PERSONAL = frozenset({"email", "guest_email", "shipping_address", "billing_address", "phone"})


def redact(email: str | None) -> int:
    """Blank the personal fields of every stored event that carries ``email``, in the
    caller's transaction; answer how many events changed."""
    if not email:
        return 0
    needle = json.dumps(email.lower(), ensure_ascii=False)[1:-1]  # as the payload spells it
    rows = db.query(
        "SELECT id, payload FROM webhook_events WHERE LOWER(payload) LIKE :pattern ESCAPE '\\'",
        {"pattern": like_pattern(needle)},
    )
    changed = []
    for row in rows:
        body = json.loads(row["payload"])
        data = blank(body["data"], email.lower())
        payload = envelope(row["id"], body["type"], body["timestamp"], data)  # as emitted
        if payload != row["payload"]:
            changed.append({"id": row["id"], "payload": payload})
    if changed:
        db.execute_many("UPDATE webhook_events SET payload = :payload WHERE id = :id", changed)
    return len(changed)


def blank(value, email: str):
    """``value`` with its personal fields null: ``PERSONAL`` keys, the ``name`` of an object
    that has an e-mail, and any text that is the e-mail itself."""
    if isinstance(value, dict):
        personal = "email" in value or "guest_email" in value
        return {
            key: None if key in PERSONAL or (personal and key == "name") else blank(item, email)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [blank(item, email) for item in value]
    if isinstance(value, str) and value.lower() == email:
        return None
    return value
