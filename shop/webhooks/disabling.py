"""Disabling a webhook by itself: an endpoint failing for ``DISABLE_AFTER`` once a delivery
used every attempt, or an owner who lost a right its events need. Either is said on the
webhook (``enabled: false``, the reason and when), audited, and a lost right is mailed to
the owner. Called by the worker as it records attempts, and by its minute's job.
"""

import logging
from datetime import timedelta

from shop import audit, db, mail
from shop.actor import system
from shop.clock import iso, parse
from shop.webhooks import outbox
from shop.webhooks.outbox import missing_rights

log = logging.getLogger("shop.webhooks")

DISABLE_AFTER = timedelta(days=3)
WORKER_ACTOR = system("webhook worker")


def if_failing(webhook_id: str, moment, attempts: int) -> None:
    """Disable an endpoint failing for ``DISABLE_AFTER``: said, audited, visible."""
    row = db.one(
        "SELECT url, failing_since FROM webhooks WHERE id = :id AND enabled = 1",
        {"id": webhook_id},
    )
    if row is None or not row["failing_since"]:
        return
    if moment - parse(row["failing_since"]) < DISABLE_AFTER:
        return
    reason = (
        f"Disabled automatically: every delivery attempt failed since {row['failing_since']}"
        f" ({attempts} attempts of the last delivery). Fix the endpoint, then enable it again."
    )
    if _disable(webhook_id, row["url"], reason, moment):
        log.warning("webhook %s disabled: failing since %s", webhook_id, row["failing_since"])


def _disable(webhook_id: str, url: str, reason: str, moment) -> bool:
    """Disable an enabled webhook, with its reason for all to see and an audit entry;
    answer whether it was enabled."""
    disabled = db.execute(
        "UPDATE webhooks SET enabled = 0, disabled_reason = :reason, disabled_at = :now,"
        " updated_at = :now WHERE id = :id AND enabled = 1",
        {"reason": reason, "now": iso(moment), "id": webhook_id},
    )
    if disabled:
        outbox.changed()
        audit.record(
            "webhook.disabled",
            {"webhook_id": webhook_id, "url": url, "reason": reason},
            actor=WORKER_ACTOR,
        )
    return bool(disabled)


def for_lost_rights(owner: dict, moment) -> None:
    """Disable a webhook whose owner lost a right its events need (a ``CREATOR`` row):
    said on the webhook, audited, and mailed to the owner."""
    missing = missing_rights(owner) or ["a right its events need"]
    reason = (
        "Disabled automatically: its owner no longer holds " + ", ".join(missing) + " (or is"
        " no longer an active administrator). Someone holding the rights can change its"
        " events or url, which makes them its owner, and enable it again."
    )
    if _disable(owner["id"], owner["url"], reason, moment) and owner["owner_email"]:
        mail.queue(
            owner["owner_email"],
            "Webhook disabled: its owner lost a right",
            f"Your webhook {owner['url']} ({owner['id']}) was disabled.\n\n{reason}\n",
        )
