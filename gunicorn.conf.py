"""gunicorn settings (read by default from the working directory; the Procfile names it too).

One process with threads by default: rate-limit counters in memory are then exact. Several
workers (WEB_CONCURRENCY > 1) need REDIS_URL so that every worker shares the counters; the
server refuses to start without it.
"""

import gc
import json
import logging
import os
import shutil
import sys
import tempfile
import time

from gunicorn import glogging, util
from gunicorn.http import wsgi

from shop import config as shop_config

try:
    # Checked here, in the master, before any worker: a bad value stops the server with one
    # line naming it (exit code 1), not a traceback per worker and "Worker failed to boot".
    settings = shop_config.from_environment()
except shop_config.ConfigError as error:
    sys.exit(f"shop: {error}")

# Metrics (docs/operations.md): every worker writes its counters to one directory, read and
# summed by a scrape. Set here, in the master, before any worker imports prometheus_client.
# A directory given by the operator is kept; one made here is removed when the server stops.
# (Remembered in the environment too: a SIGHUP reads this file again, with the variable set.)
if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
    os.environ["SHOP_MADE_METRICS_DIR"] = tempfile.mkdtemp(prefix="shop-metrics-")
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = os.environ["SHOP_MADE_METRICS_DIR"]

bind = f"{os.environ.get('HOST', '0.0.0.0')}:{settings['PORT']}"  # noqa: S104
workers = settings["WEB_CONCURRENCY"]
threads = settings["THREADS"]
worker_class = "gthread"
# Each worker binds its own socket (SO_REUSEPORT) and the kernel spreads new connections over
# them by hash: on one shared socket the worker already on a core took most of nginx's
# kept-alive connections and served them at one core's rate (docs/performance.md,
# "reuse_port behind nginx"). SHOP_REUSE_PORT=0 shares one socket again.
reuse_port = settings["REUSE_PORT"]
timeout = 30
graceful_timeout = 20
keepalive = 5
control_socket_disable = True
accesslog = "-" if settings["ACCESS_LOG"] else None  # SHOP_ACCESS_LOG=1 (docs/performance.md)
# Never log a query string: it could hold a secret someone pasted there.
access_log_format = '%(h)s "%(m)s %(U)s" %(s)s %(b)s %(M)sms "%(a)s"'


# Probes and scrapes every few seconds would drown the access log: logged at DEBUG only.
_QUIET_PATHS = frozenset({"/healthz", "/readyz", "/metrics"})


class Logger(glogging.Logger):
    """gunicorn's logger, its access and error lines escaped (``shop.logs``): a request
    path with CR, LF or NUL in it cannot forge a log line. Health checks and scrapes are
    not access-logged (the error log has them at DEBUG)."""

    def access(self, resp, req, environ, request_time):
        """An access line, except for the health and metrics endpoints."""
        if environ.get("PATH_INFO") in _QUIET_PATHS:
            self.debug("%s %s %s", environ.get("REQUEST_METHOD"), req.path, resp.status)
            return
        super().access(resp, req, environ, request_time)

    def setup(self, cfg):
        """gunicorn's handlers, each with an escaping formatter of the same format."""
        from shop.logs import EscapingFormatter

        super().setup(cfg)
        for log in (self.error_log, self.access_log):
            for handler in log.handlers:
                fmt = handler.formatter or logging.Formatter()
                handler.setFormatter(EscapingFormatter(fmt._fmt, fmt.datefmt))


logger_class = Logger


def on_starting(server):
    """Refuse several workers with per-process rate-limit counters, a REDIS_URL that is no
    Redis URL, and a database schema newer than this release. A database or Redis that does
    not answer yet is a warning: workers boot without them and answer 503 meanwhile."""
    if server.cfg.workers > 1 and not settings["REDIS_URL"]:
        sys.exit(
            f"shop: refusing to start {server.cfg.workers} workers without REDIS_URL: rate"
            " limits would be counted per process. Set REDIS_URL, or WEB_CONCURRENCY=1."
        )
    from shop.schema import migrate

    if settings["REDIS_URL"]:
        problem = shop_config.check_redis(settings["REDIS_URL"])
        if problem and "not a Redis URL" in problem:
            sys.exit(f"shop: {problem}")
        if problem:
            server.log.warning("%s; rate limits are counted per process until it does", problem)
    warning = migrate.check_at_start(settings["DATABASE_URL"])
    if warning:
        server.log.warning("schema: %s", warning)


def child_exit(server, worker):
    """A worker is gone: its live gauges leave the metrics (its counters stay summed)."""
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(worker.pid)


def on_exit(server):
    """Remove the metrics directory made at start (not one the operator named)."""
    made = os.environ.get("SHOP_MADE_METRICS_DIR")
    if made and made == os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        shutil.rmtree(made, ignore_errors=True)


def post_worker_init(worker):
    """On a graceful stop (SIGTERM), close this worker's listening sockets at once.

    gunicorn 27's gthread worker stops accepting on SIGTERM but keeps its listening sockets
    open until its in-flight requests are done (up to graceful_timeout): the kernel went on
    accepting connections nobody would serve, and they hung ~20 s before a reset. Closed,
    the port refuses new connections at once (a proxy or balancer retries elsewhere) while
    the requests in flight finish. Only this process's descriptors close: a worker stopped
    alone (a reload, fewer workers) leaves the master's and the other workers' listeners.
    """
    accept = worker.set_accept_enabled

    def set_accept_enabled(enabled):
        accept(enabled)
        if not enabled and not worker.alive:
            for listener in worker.sockets:
                listener.close()

    worker.set_accept_enabled = set_accept_enabled
    freeze_startup_heap(worker)


def freeze_startup_heap(worker):
    """Keep the objects made at start (modules, the app, its schemas) out of every garbage
    collection from now on (``gc.freeze``).

    The app loads ~150,000 objects that live as long as the worker. Each full collection
    walked them all: under load one took ~100 ms of the worker's CPU with the GIL held, every
    few thousand requests (a 100 ms stall for every request in flight), and the walk evicts
    the caches the requests run from. Frozen, collections see only what requests made. Runs
    after the app is loaded (``post_worker_init``); objects made later are collected as usual
    (docs/performance.md, "The request path under gunicorn").
    """
    gc.collect()  # what start-up left over is freed, not frozen for the worker's life
    gc.freeze()
    worker.log.info(
        "froze %d objects of the loaded app out of garbage collection", gc.get_freeze_count()
    )


def write_json_error(sock, status_int, reason, mesg):
    """Answer what gunicorn refuses before the app sees it in the API's error shape.

    A request line or header block over gunicorn's limits (414, 431) or a malformed request
    (400) never reaches Flask; gunicorn would answer an HTML page. Every error of this API is
    ``{"message": ...}``, so the page is replaced. ``util.write_error`` is the one function
    gunicorn calls for these answers (gunicorn is pinned; tests/ops/test_readme.py checks it).
    """
    body = json.dumps({"message": mesg or reason}).encode()
    head = (
        f"HTTP/1.1 {status_int} {reason}\r\n"
        "Connection: close\r\n"
        "Content-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    util.write_nonblock(sock, head.encode("latin-1") + body)


util.write_error = write_json_error


_process_headers = wsgi.Response.process_headers


def process_headers(self, headers):
    """Honour an application's ``Connection: close`` (gunicorn drops hop-by-hop headers).

    The app answers ``Connection: close`` when it refused a request whose body it may not
    have read (shop/http/hooks.py): the connection cannot carry another request, and the
    client must be told so before gunicorn hangs up. ``Response.process_headers`` is where
    gunicorn reads the application's headers (gunicorn is pinned).
    """
    if any(n.lower() == "connection" and v.strip().lower() == "close" for n, v in headers):
        self.force_close()
    _process_headers(self, headers)


wsgi.Response.process_headers = process_headers


_http_date = util.http_date
_date_now = (0, "")  # (whole second, its Date header value): replaced whole, never mutated


def http_date(timestamp=None):
    """gunicorn's ``Date`` header value, formatted once a second rather than per response.

    gunicorn formats the current time for every response with ``email.utils.formatdate``,
    ~4 % of the CPU of a fixed-JSON answer (py-spy, issue 29). The header has whole seconds,
    so the same text serves the rest of the second; a given ``timestamp`` is formatted as
    gunicorn does. ``util.http_date`` is what ``Response.default_headers`` calls (gunicorn is
    pinned).
    """
    global _date_now
    if timestamp is not None:
        return _http_date(timestamp)
    second = int(time.time())
    cached = _date_now
    if cached[0] != second:
        cached = _date_now = (second, _http_date(second))
    return cached[1]


util.http_date = http_date
