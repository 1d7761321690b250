"""The service's Prometheus metrics: what every web process counts, and the scrape.

Counted in the web processes, per request: requests and their latency by route template
(the url rule, never the raw path), method and status; rate-limit refusals (429);
dependency outages (503 because the database, Redis or Stripe cannot be reached). Read from the
database at each scrape, so any number of worker processes need no exposure of their own:
the outbox's backlog and oldest age per queue and per webhook endpoint (its id), webhook
attempts by outcome and mail sent or given up (docs/operations.md says what each means).

Under gunicorn, ``gunicorn.conf.py`` sets ``PROMETHEUS_MULTIPROC_DIR`` before the app is
imported: each worker writes its values there and a scrape sums them
(``MultiProcessCollector``). Without it (one process, the tests) values live in memory.
"""

import os
import time

from flask import g, request
from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.multiprocess import MultiProcessCollector

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

_registry = CollectorRegistry()  # this process's values when not under gunicorn
_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})

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


def start_timer() -> None:
    """before_request (first of all): when the request began."""
    g.metrics_start = time.perf_counter()


# The labelled series by (route, method, status): ``labels()`` builds and locks its way to
# the same child on every call (issue 29). Routes are templates and methods a fixed set, so
# this stays as small as the series themselves.
_series: dict[tuple, tuple] = {}


def count_response(response):
    """after_request (last of all): count the response by its route template and status."""
    req = request._get_current_object()
    rule = req.url_rule
    method = req.method if req.method in _METHODS else "other"
    status = response.status_code
    labels = (rule.rule if rule is not None else "(no route)", method, status)
    series = _series.get(labels)
    if series is None:
        series = _series[labels] = (
            REQUESTS.labels(labels[0], method, str(status)),
            LATENCY.labels(labels[0], method),
        )
    series[0].inc()
    start = g.get("metrics_start")
    if start is not None:
        series[1].observe(time.perf_counter() - start)
    if status == 429:
        RATE_LIMITED.inc()
    return response


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
