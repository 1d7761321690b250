"""The service's Prometheus metrics: what every web process counts, and the scrape.

Counted in the web processes, per request (by ``shop/http/hooks.py``): requests and their
latency by route template (the url rule, never the raw path), method and status; rate-limit
refusals (429); dependency outages (503 because the database, Redis or Stripe cannot be
reached). Read from the database at each scrape, so any number of worker processes need no
exposure of their own: the outbox's backlog and oldest age per queue and per webhook endpoint
(its id), webhook attempts by outcome and mail sent or given up (docs/operations.md says what
each means).

Under gunicorn, ``gunicorn.conf.py`` sets ``PROMETHEUS_MULTIPROC_DIR`` before the app is
imported: each worker writes its values there and a scrape sums them
(``MultiProcessCollector``). Without it (one process, the tests) values live in memory.
"""

import os

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.multiprocess import MultiProcessCollector

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

_registry = CollectorRegistry()  # this process's values when not under gunicorn

REQUESTS = Counter(
    "shop_http_requests",
    "HTTP requests answered, by route template, method and status.",
    ["route", "method", "status"],
    registry=_registry,
)
LATENCY = Histogram(
    "shop_http_request_duration_seconds",
    "Time from the first request hook to the response, by route template and method.",
    ["route", "method"],
    registry=_registry,
)
RATE_LIMITED = Counter(
    "shop_rate_limit_refusals", "Requests refused with 429 by a rate limit.", registry=_registry
)
OUTAGES = Counter(
    "shop_dependency_unavailable",
    "Requests answered 503 because a dependency (database, Redis, Stripe) could not be reached.",
    ["dependency"],
    registry=_registry,
)


def count_outage(dependency: str) -> None:
    """A request answered 503 because ``dependency`` cannot be reached."""
    name = dependency.lower()
    label = "redis" if "redis" in name else "stripe" if "stripe" in name else "database"
    OUTAGES.labels(label).inc()


def render(*collectors) -> bytes:
    """The text exposition: this process's values or every worker's, then ``collectors``'."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        counted = CollectorRegistry()
        MultiProcessCollector(counted)
    else:
        counted = _registry
    extra = CollectorRegistry()
    for collector in collectors:
        extra.register(collector)
    return generate_latest(counted) + generate_latest(extra)
