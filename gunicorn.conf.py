"""gunicorn settings (read by default from the working directory; the Procfile names it too).

One process with threads by default: rate-limit counters in memory are then exact. Several
workers (WEB_CONCURRENCY > 1) need REDIS_URL so that every worker shares the counters; the
server refuses to start without it.
"""

import json
import logging
import os

from gunicorn import glogging, util
from gunicorn.http import wsgi

bind = f"{os.environ.get('HOST', '0.0.0.0')}:{os.environ.get('PORT', '8000')}"  # noqa: S104
workers = int(os.environ.get("WEB_CONCURRENCY", "1"))
threads = int(os.environ.get("SHOP_THREADS", "8"))
worker_class = "gthread"
timeout = 30
graceful_timeout = 20
keepalive = 5
control_socket_disable = True
accesslog = "-"
# Never log a query string: it could hold a secret someone pasted there.
access_log_format = '%(h)s "%(m)s %(U)s" %(s)s %(b)s %(M)sms "%(a)s"'


class Logger(glogging.Logger):
    """gunicorn's logger, its access and error lines escaped (``shop.logs``): a request
    path with CR, LF or NUL in it cannot forge a log line."""

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
    """Refuse several workers with per-process rate-limit counters, and a database schema
    newer than this release (where the database answers: workers must boot without it)."""
    if server.cfg.workers > 1 and not os.environ.get("REDIS_URL"):
        raise SystemExit(
            f"Refusing to start {server.cfg.workers} workers without REDIS_URL: rate limits"
            " would be counted per process. Set REDIS_URL, or run one worker (the default)."
        )
    from shop import config, migrate

    try:
        settings = config.from_environment()
    except config.ConfigError as error:
        raise SystemExit(f"Refusing to start: {error}.") from None
    warning = migrate.check_at_start(settings["DATABASE_URL"])
    if warning:
        server.log.warning("schema: %s", warning)


def write_json_error(sock, status_int, reason, mesg):
    """Answer what gunicorn refuses before the app sees it in the API's error shape.

    A request line or header block over gunicorn's limits (414, 431) or a malformed request
    (400) never reaches Flask; gunicorn would answer an HTML page. Every error of this API is
    ``{"message": ...}``, so the page is replaced. ``util.write_error`` is the one function
    gunicorn calls for these answers (gunicorn is pinned; tests/test_readme.py checks it).
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
    have read (shop/auth/context.py): the connection cannot carry another request, and the
    client must be told so before gunicorn hangs up. ``Response.process_headers`` is where
    gunicorn reads the application's headers (gunicorn is pinned).
    """
    if any(n.lower() == "connection" and v.strip().lower() == "close" for n, v in headers):
        self.force_close()
    _process_headers(self, headers)


wsgi.Response.process_headers = process_headers
