"""Webhooks: events written to an outbox in the transaction of the change, signed with the
Standard Webhooks scheme and delivered by a worker process (``flask webhooks work``).

The rest of the service calls one function, ``emit``, inside the transaction that makes the
change, with the function that renders the event's resource (its emitter's own);
``docs/webhooks.md`` is the user's guide.

- ``events``: the event catalogue and the right each event needs.
- ``outbox``: ``emit``, and the rights of a webhook's owner (checked at enqueue and again
  at delivery, with each record's own rule; a lost right disables the webhook).
- ``signing``: secrets and the ``webhook-signature`` header.
- ``delivery``: one HTTP attempt, with the address checks (no private addresses, no
  redirects, a bounded read, a time limit).
- ``worker``: one delivery's claim, attempt and record; retries with backoff.
- ``disabling``: a webhook disabled by itself (an endpoint that keeps failing, an owner
  who lost a right), said, audited and mailed.
- ``pool``: the worker's loop: a few sending threads, at most a couple per origin, so one
  endpoint never holds up another.
- ``manual``: pings and replays, queued by the API for the worker.
- ``store``: the webhooks and their delivery log, for the API and the console.
"""

from shop.webhooks.outbox import emit

__all__ = ["emit"]
