"""gunicorn settings (read by default from the working directory; the Procfile names it too).

One process with threads by default: rate-limit counters in memory are then exact. Several
workers (WEB_CONCURRENCY > 1) need REDIS_URL so that every worker shares the counters; the
server refuses to start without it.
"""

import os

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


def on_starting(server):
    """Refuse several workers with per-process rate-limit counters."""
    if server.cfg.workers > 1 and not os.environ.get("REDIS_URL"):
        raise SystemExit(
            f"Refusing to start {server.cfg.workers} workers without REDIS_URL: rate limits"
            " would be counted per process. Set REDIS_URL, or run one worker (the default)."
        )

