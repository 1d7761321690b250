"""Webhooks: events written to an outbox in the transaction of the change, signed with the
Standard Webhooks scheme and delivered by a worker process (``flask webhooks work``).

The rest of the service calls one function, ``emit``, inside the transaction that makes the
change (checkout also ``read_subscriptions``, before the writes it sends: ``db.send``; a
customer's erasure ``redact``, for the events the outbox still keeps). The
modules of this package: docs/webhooks.md, "The code"; the user's guide is the rest of that
page.
"""

from shop.webhooks.outbox import emit, read_subscriptions
from shop.webhooks.redaction import redact

__all__ = ["emit", "read_subscriptions", "redact"]
