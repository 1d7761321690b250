"""What the health and metrics endpoints read: the dependencies' state and the outbox's.

Below the HTTP layer: ``shop/api/health.py`` answers with it, ``shop/metrics.py`` exports
it. Every check is one cheap statement; nothing here writes.
"""

import sqlite3

import psycopg
from prometheus_client.core import GaugeMetricFamily

from shop import config, db, migrate
from shop.clock import now, parse
from shop.outages import Unavailable

_DATABASE_ERRORS = (Unavailable, sqlite3.Error, psycopg.Error, OSError)

# queue: the count and oldest creation time of its messages still to send
_BACKLOG_SQL = {
    "webhooks": "SELECT COUNT(*) AS n, MIN(created_at) AS oldest FROM webhook_deliveries"
    " WHERE status = 'pending'",
    "mail": "SELECT COUNT(*) AS n, MIN(created_at) AS oldest FROM mail_outbox"
    " WHERE next_attempt_at IS NOT NULL",
}


def readiness(app) -> tuple[dict, list[str]]:
    """Each dependency's state (``"ok"``, ``"not configured"`` or why not) and the failing ones.

    The database answers a statement, its schema has every migration of this release, and
    Redis (when ``REDIS_URL`` is set) answers a PING within ``SHOP_REDIS_TIMEOUT``.
    """
    checks = {"database": "ok", "schema": "ok", "redis": "not configured"}
    try:
        db.value("SELECT 1")
    except _DATABASE_ERRORS as error:
        checks["database"] = f"cannot be reached ({type(error).__name__})"
        checks["schema"] = "unknown: the database cannot be reached"
    else:
        if not migrate.schema_ready(app):
            version = migrate.current_version(app.extensions["shop.db"])
            code = migrate.code_version(app.config["MIGRATIONS_DIR"])
            checks["schema"] = f"at version {version}, this release needs {code}"
    if app.config["REDIS_URL"]:
        problem = config.check_redis(app.config["REDIS_URL"], app.config["REDIS_TIMEOUT"])
        checks["redis"] = "cannot be reached" if problem else "ok"
    failing = [name for name, state in checks.items() if state not in ("ok", "not configured")]
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
        except _DATABASE_ERRORS:
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
        return [backlog, age, attempts, mail]
