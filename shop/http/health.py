"""What the health and metrics endpoints read: the dependencies' state and the outbox's.

Below the HTTP layer: ``shop/api/health.py`` answers with it, ``shop/metrics.py`` exports
it. Every check is one cheap statement; nothing here writes.
"""

from prometheus_client.core import GaugeMetricFamily

from shop import config, db
from shop.clock import now, parse
from shop.schema import migrate

# What the worker has yet to send: deliveries waiting for an enabled endpoint (a disabled
# one's wait for it to be enabled again, not for the worker), and mail not yet sent or
# given up. ``next_attempt_at`` is set exactly while an item waits: its index finds them.
_PENDING_DELIVERIES = (
    " FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id"
    " WHERE d.next_attempt_at IS NOT NULL AND d.status = 'pending' AND w.enabled = 1"
)
# queue: the count and oldest creation time of its messages still to send
_BACKLOG_SQL = {
    "webhooks": "SELECT COUNT(*) AS n, MIN(d.created_at) AS oldest" + _PENDING_DELIVERIES,
    "mail": "SELECT COUNT(*) AS n, MIN(created_at) AS oldest FROM mail_outbox"
    " WHERE next_attempt_at IS NOT NULL",
}
_PER_ENDPOINT_SQL = (
    "SELECT d.webhook_id AS id, COUNT(*) AS n, MIN(d.created_at) AS oldest"
    + _PENDING_DELIVERIES
    + " GROUP BY d.webhook_id"
)
# The endpoints the per-endpoint gauges show at most: a label value each, so the series
# stay bounded however many webhooks a shop makes; those waiting longest come first.
ENDPOINT_SERIES = 100


# What /readyz says of a Redis that does not answer while the limits count in memory.
REDIS_FALLBACK = "unreachable; rate limits count in process memory"


def readiness(app) -> tuple[dict, list[str]]:
    """Each dependency's state (``"ok"``, ``"not configured"`` or why not) and the failing ones.

    The database answers a statement and its schema has every migration of this release:
    without either nothing can be served, so the node is not ready. Redis (when
    ``REDIS_URL`` is set) is asked for a PING within ``SHOP_REDIS_TIMEOUT``, and reported;
    while it does not answer the rate limits and sign-in counters count in this process's
    memory (docs/operations.md) and every request is still served, so it fails the node
    only where that fallback is turned off. Taking every node out of the balancer because
    the shared Redis is down would turn a looser limit into an outage.
    """
    checks = {"database": "ok", "schema": "ok", "redis": "not configured"}
    try:
        db.value("SELECT 1")
    except db.unreachable_errors() as error:
        checks["database"] = f"cannot be reached ({type(error).__name__})"
        checks["schema"] = "unknown: the database cannot be reached"
    else:
        if not migrate.schema_ready(app):
            version = migrate.current_version(app.extensions["shop.db"])
            code = migrate.code_version(app.config["MIGRATIONS_DIR"])
            checks["schema"] = f"at version {version}, this release needs {code}"
    failing = [name for name in ("database", "schema") if checks[name] != "ok"]
    if app.config["REDIS_URL"]:
        problem = config.check_redis(app.config["REDIS_URL"], app.config["REDIS_TIMEOUT"])
        if not problem:
            checks["redis"] = "ok"
        elif app.config.get("RATELIMIT_IN_MEMORY_FALLBACK_ENABLED"):
            checks["redis"] = REDIS_FALLBACK
        else:
            checks["redis"] = "cannot be reached"
            failing.append("redis")
    return checks, failing


def outbox_backlog() -> dict:
    """Per queue (webhooks, mail): messages still to send and the oldest one's age in seconds."""
    moment = now()
    backlog = {}
    for queue, sql in _BACKLOG_SQL.items():
        row = db.one(sql)
        age = None
        if row["oldest"]:
            created = parse(row["oldest"])
            age = max(0.0, round((moment - created).total_seconds(), 3))
        backlog[queue] = {"pending": row["n"], "oldest_pending_age_seconds": age}
    return backlog


def endpoint_backlog(limit: int = ENDPOINT_SERIES) -> list[dict]:
    """Per enabled webhook endpoint (``limit`` at most, the longest waiting first): its id,
    deliveries waiting and the oldest one's age in seconds (0 when none waits).

    What tells a dead worker from one dead receiver: the worker stops every endpoint's
    deliveries (and the mail), a receiver only its own (docs/operations.md).
    """
    moment = now()
    waiting = sorted(db.query(_PER_ENDPOINT_SQL), key=lambda row: (row["oldest"], row["id"]))
    rows = [
        {
            "id": row["id"],
            "pending": row["n"],
            "oldest_pending_age_seconds": max(
                0.0, round((moment - parse(row["oldest"])).total_seconds(), 3)
            ),
        }
        for row in waiting[:limit]
    ]
    if len(rows) < limit:
        shown = {row["id"] for row in rows}
        idle = db.query(
            "SELECT id FROM webhooks WHERE enabled = 1 ORDER BY created_at, id LIMIT :n",
            {"n": limit},
        )
        rows += [
            {"id": row["id"], "pending": 0, "oldest_pending_age_seconds": 0.0}
            for row in idle
            if row["id"] not in shown
        ][: limit - len(rows)]
    return rows


def delivery_attempts() -> dict[str, int]:
    """Webhook attempts kept in the delivery log, by outcome (success, http_error, error)."""
    return _counts(
        "SELECT CASE WHEN status_code BETWEEN 200 AND 299 THEN 'success'"
        " WHEN status_code IS NOT NULL THEN 'http_error' ELSE 'error' END AS k,"
        " COUNT(*) AS n FROM webhook_attempts GROUP BY 1",
        ("success", "http_error", "error"),
    )


def mail_totals() -> dict[str, int]:
    """E-mails kept in the mail outbox that were sent, or failed (given up)."""
    return _counts(
        "SELECT CASE WHEN sent_at IS NOT NULL THEN 'sent' WHEN failed_at IS NOT NULL"
        " THEN 'failed' ELSE 'pending' END AS k, COUNT(*) AS n FROM mail_outbox GROUP BY 1",
        ("sent", "failed"),
    )


def _counts(sql: str, names: tuple[str, ...]) -> dict[str, int]:
    """``{name: count}`` from rows of (k, n), every name present (0 when absent)."""
    totals = dict.fromkeys(names, 0)
    totals.update({row["k"]: row["n"] for row in db.query(sql) if row["k"] in totals})
    return totals


class OutboxCollector:
    """The outbox's state, read from the database when scraped (nothing while the database
    or its schema is not ready: /readyz says which)."""

    def __init__(self, app):
        self.app = app

    def collect(self):
        """The outbox's metric families, or none."""
        try:
            if not migrate.schema_ready(self.app):
                return []
            return self._families()
        except db.unreachable_errors():
            return []

    def _families(self):
        backlog = GaugeMetricFamily(
            "shop_outbox_pending", "Messages waiting to be sent, by queue.", labels=["queue"]
        )
        age = GaugeMetricFamily(
            "shop_outbox_oldest_pending_age_seconds",
            "Age of the oldest message waiting to be sent (0 when none), by queue.",
            labels=["queue"],
        )
        for queue, state in outbox_backlog().items():
            backlog.add_metric([queue], state["pending"])
            age.add_metric([queue], state["oldest_pending_age_seconds"] or 0)
        endpoint_pending = GaugeMetricFamily(
            "shop_webhook_pending",
            "Deliveries waiting to be sent, by enabled webhook endpoint (its id).",
            labels=["webhook"],
        )
        endpoint_age = GaugeMetricFamily(
            "shop_webhook_oldest_pending_age_seconds",
            "Age of the oldest delivery waiting to be sent (0 when none), by enabled webhook"
            f" endpoint (its id; the {ENDPOINT_SERIES} waiting longest at most).",
            labels=["webhook"],
        )
        for endpoint in endpoint_backlog():
            endpoint_pending.add_metric([endpoint["id"]], endpoint["pending"])
            endpoint_age.add_metric([endpoint["id"]], endpoint["oldest_pending_age_seconds"])
        attempts = GaugeMetricFamily(
            "shop_webhook_attempts",
            "Webhook delivery attempts kept in the delivery log (SHOP_WEBHOOKS_RETENTION_DAYS),"
            " by outcome.",
            labels=["outcome"],
        )
        for outcome, count in delivery_attempts().items():
            attempts.add_metric([outcome], count)
        mail = GaugeMetricFamily(
            "shop_mail_messages",
            "E-mails kept in the mail outbox by state: sent, or failed (given up).",
            labels=["state"],
        )
        for state, count in mail_totals().items():
            mail.add_metric([state], count)
        return [backlog, age, endpoint_pending, endpoint_age, attempts, mail]
