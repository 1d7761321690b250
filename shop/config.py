"""Every setting, read from the environment in one place, with its default.

``README.md`` lists the same variables. A bad value stops the service at start with a message
naming the variable, never later on a request.
"""

import os


class ConfigError(ValueError):
    """A setting in the environment has a value we cannot use."""


def _number(environ, name: str, default, minimum, kind=int, what="a whole number"):
    raw = environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = kind(raw)
    except ValueError:
        raise ConfigError(f"{name} must be {what}, got {raw!r}") from None
    if not value >= minimum:  # also refuses nan
        raise ConfigError(f"{name} must be at least {minimum}, got {raw}")
    return value


def _int(environ, name: str, default: int, minimum: int = 0) -> int:
    return _number(environ, name, default, minimum)


def _seconds(environ, name: str, default: float, minimum: float) -> float:
    return _number(environ, name, default, minimum, float, "a number of seconds")


def _bool(environ, name: str, default: bool) -> bool:
    raw = environ.get(name, "").strip().lower()
    if not raw:
        return default
    if raw in ("1", "true", "yes", "on"):
        return True
    if raw in ("0", "false", "no", "off"):
        return False
    raise ConfigError(f"{name} must be 1 or 0, got {raw!r}")


def _database_url(environ) -> str:
    url = environ.get("DATABASE_URL", "").strip() or "sqlite:///instance/shop.db"
    if not url.startswith(("sqlite:///", "postgresql://", "postgres://")):
        raise ConfigError(
            "DATABASE_URL must start with sqlite:/// or postgresql://"
            f" (got {url.split('://', 1)[0]}://...)"
        )
    return url


def _list(environ, name: str) -> list[str]:
    return [item.strip() for item in environ.get(name, "").split(",") if item.strip()]


def _networks(environ, name: str) -> str | None:
    """Addresses or CIDR ranges, comma-separated, as one space-separated string (or None)."""
    import ipaddress

    networks = []
    for item in _list(environ, name):
        try:
            networks.append(str(ipaddress.ip_network(item, strict=False)))
        except ValueError:
            raise ConfigError(
                f"{name} must list IP addresses or CIDR ranges (such as 10.0.0.0/8), got {item!r}"
            ) from None
    return " ".join(networks) or None


def _prefix(environ, name: str, default: str) -> str:
    """A URL path prefix such as ``/store``: a slash, then letters, digits, - or _."""
    import re

    raw = environ.get(name, "").strip().rstrip("/") or default
    if not re.fullmatch(r"(/[A-Za-z0-9_-]+)+", raw) or raw.split("/")[1] in _TAKEN_PREFIXES:
        raise ConfigError(f"{name} must be a path such as /store, not one the API uses: {raw!r}")
    return raw


# First path segments the API and the console serve; a storefront there would hide them.
_TAKEN_PREFIXES = frozenset(
    {"admin", "auth", "products", "categories", "collections", "orders", "payments",
     "settings", "users", "roles", "api-keys", "webhooks", "content", "discounts",
     "shipping-methods", "tax-rates", "customers", "carts", "invoices", "returns",
     "draft-orders", "health", "metrics", "swagger", "openapi.json", "images"}
)  # fmt: skip


def _token(environ, name: str, minimum: int = 16) -> str | None:
    raw = environ.get(name, "").strip()
    if raw and len(raw) < minimum:
        raise ConfigError(f"{name} must be at least {minimum} characters long")
    return raw or None


def _search_language(environ) -> str:
    raw = environ.get("SHOP_SEARCH_LANGUAGE", "").strip().lower() or "english"
    if not raw.replace("_", "").isalpha() or not raw.isascii():
        raise ConfigError(f"SHOP_SEARCH_LANGUAGE must be a word such as english, got {raw!r}")
    return raw


def check(settings: dict) -> None:
    """Refuse settings that are each valid but make no sense together (ConfigError)."""
    if settings["SESSION_REFRESH"] >= settings["SESSION_LIFETIME"]:
        raise ConfigError(
            "SHOP_SESSION_REFRESH must be less than SHOP_SESSION_LIFETIME"
            f" (got {settings['SESSION_REFRESH']} >= {settings['SESSION_LIFETIME']}):"
            " sessions would never slide"
        )
    theme = settings.get("THEME_DIR")
    if theme and not os.path.isdir(theme):
        raise ConfigError(f"SHOP_THEME_DIR: {theme} is not a folder")
    folder = settings.get("IMAGE_DIR")
    if folder and not (os.path.isdir(folder) and os.access(folder, os.W_OK | os.X_OK)):
        raise ConfigError(f"SHOP_IMAGE_DIR: {folder} is not a folder this process may write to")


def from_environment(environ=None) -> dict:
    """The service's settings from environment variables (``os.environ`` by default)."""
    env = os.environ if environ is None else environ
    settings = _read(env)
    check(settings)
    if settings["SMTP_URL"] and not settings["PUBLIC_URL"]:
        # Links in mail must not be built from a request's Host header (reset poisoning).
        raise ConfigError("SHOP_PUBLIC_URL must be set when SMTP_URL is (links in e-mails)")
    return settings


def _read(env) -> dict:
    threads = _int(env, "SHOP_THREADS", 8, minimum=1)
    return {
        # Where data lives.
        "DATABASE_URL": _database_url(env),
        "REDIS_URL": env.get("REDIS_URL", "").strip() or None,
        # How long a request waits for a dependency that does not answer (docs/operations.md).
        "DB_CONNECT_TIMEOUT": _int(env, "SHOP_DB_CONNECT_TIMEOUT", 3, minimum=1),
        # A statement that runs longer (or a SQLite write that waits longer for another) is
        # ended and the request answers 503; migrations take as long as they need.
        "DB_STATEMENT_TIMEOUT": _seconds(env, "SHOP_DB_STATEMENT_TIMEOUT", 5.0, minimum=0.1),
        "REDIS_TIMEOUT": _seconds(env, "SHOP_REDIS_TIMEOUT", 0.5, minimum=0.05),
        # Human sessions.
        "SESSION_LIFETIME": _int(env, "SHOP_SESSION_LIFETIME", 7 * 24 * 3600, minimum=60),
        "SESSION_REFRESH": _int(env, "SHOP_SESSION_REFRESH", 60),
        "COOKIE_SECURE": _bool(env, "SHOP_COOKIE_SECURE", True),
        "SESSION_MAX_LIFETIME": _int(env, "SHOP_SESSION_MAX_LIFETIME", 30 * 24 * 3600, minimum=60),
        "PASSWORD_HASH_METHOD": env.get("SHOP_PASSWORD_HASH", "").strip() or "scrypt:32768:8:1",
        "PASSWORD_HASH_CONCURRENCY": _int(env, "SHOP_PASSWORD_HASH_CONCURRENCY", 1, minimum=1),
        # Account protection (docs/accounts.md).
        "LOCKOUT_THRESHOLD": _int(env, "SHOP_LOCKOUT_THRESHOLD", 10, minimum=1),
        "LOCKOUT_WINDOW": _int(env, "SHOP_LOCKOUT_WINDOW", 15 * 60, minimum=1),
        "LOCKOUT_COOLDOWN": _int(env, "SHOP_LOCKOUT_COOLDOWN", 15 * 60, minimum=1),
        "LOCKOUT_MAX_COOLDOWN": _int(env, "SHOP_LOCKOUT_MAX_COOLDOWN", 24 * 3600, minimum=1),
        "PASSWORD_RESET_LIFETIME": _int(env, "SHOP_PASSWORD_RESET_LIFETIME", 30 * 60, minimum=60),
        "PUBLIC_URL": env.get("SHOP_PUBLIC_URL", "").strip().rstrip("/") or None,
        "CUSTOMER_RESET_URL": env.get("SHOP_CUSTOMER_RESET_URL", "").strip() or None,
        # Mail (shop/mail.py): SMTP_URL unset writes mail to the log (development).
        "SMTP_URL": env.get("SMTP_URL", "").strip() or None,
        "SMTP_TIMEOUT": _int(env, "SHOP_SMTP_TIMEOUT", 10, minimum=1),
        "MAIL_FROM": env.get("SHOP_MAIL_FROM", "").strip() or "shop@localhost",
        # API keys.
        "KEY_LAST_USED_INTERVAL": _int(env, "SHOP_KEY_LAST_USED_INTERVAL", 60, minimum=1),
        "KEY_DORMANT_DAYS": _int(env, "SHOP_KEY_DORMANT_DAYS", 30, minimum=1),
        "API_KEY_IDLE_DAYS": _int(env, "SHOP_API_KEY_IDLE_DAYS", 90),
        # A verified key is kept in memory this long (at most 10 s; docs/api-keys.md).
        "API_KEY_CACHE_SECONDS": min(_int(env, "SHOP_API_KEY_CACHE_SECONDS", 10, minimum=0), 10),
        # Lists: a total past this many rows is answered as this, not exact (shop/db/pages.py).
        "LIST_TOTAL_CAP": _int(env, "SHOP_LIST_TOTAL_CAP", 1_000, minimum=1),
        # Facets: a group counted from the products counts this many matches at most (past
        # it ``counts_are_exact`` is false; shop/catalogue/product_query.py, facets).
        "FACET_COUNT_CAP": _int(env, "SHOP_FACET_COUNT_CAP", 100, minimum=1),
        # Requests.
        "MAX_CONTENT_LENGTH": _int(env, "SHOP_MAX_BODY_BYTES", 1024 * 1024, minimum=1024),
        "CONTENT_SYNC_MAX_BYTES": _int(
            env, "SHOP_CONTENT_SYNC_MAX_BYTES", 16 * 1024 * 1024, minimum=1024
        ),
        # Product images (docs/catalogue-and-content.md#images).
        "MAX_IMAGE_BYTES": _int(env, "SHOP_MAX_IMAGE_BYTES", 10 * 1024 * 1024, minimum=1024),
        "MAX_IMAGE_PIXELS": _int(env, "SHOP_MAX_IMAGE_PIXELS", 25_000_000, minimum=1),
        "IMAGE_DIR": env.get("SHOP_IMAGE_DIR", "").strip() or None,
        "IMPORT_MAX_BYTES": _int(env, "SHOP_IMPORT_MAX_BYTES", 32 * 1024 * 1024, minimum=1024),
        # Rows per import, so the slowest engine ends within the budget (docs/performance.md).
        "IMPORT_MAX_ROWS": _int(env, "SHOP_IMPORT_MAX_ROWS", 50_000, minimum=1),
        # Rows an import writes per transaction (whole products; each holds the write lock).
        "IMPORT_CHUNK_ROWS": _int(env, "SHOP_IMPORT_CHUNK_ROWS", 500, minimum=1),
        "TRUSTED_PROXIES": _int(env, "SHOP_TRUSTED_PROXIES", 0),
        # Flask's TRUSTED_HOSTS: None accepts any Host (redirects are then relative).
        "TRUSTED_HOSTS": _list(env, "SHOP_TRUSTED_HOSTS") or None,
        "RATELIMIT_ENABLED": _bool(env, "SHOP_RATELIMIT_ENABLED", True),
        "RATELIMIT_KEY_PREFIX": env.get("SHOP_RATELIMIT_KEY_PREFIX", "").strip() or "shop",
        # The storefront (docs/storefront.md): on by default at /store; its strings and
        # formats follow the shop's locale setting; a theme folder overrides its templates.
        "STOREFRONT": _bool(env, "SHOP_STOREFRONT", True),
        "STOREFRONT_PREFIX": _prefix(env, "SHOP_STOREFRONT_PREFIX", "/store"),
        "THEME_DIR": env.get("SHOP_THEME_DIR", "").strip() or None,
        # Webhooks (docs/webhooks.md).
        "WEBHOOKS_ALLOW_PRIVATE": _bool(env, "SHOP_WEBHOOKS_ALLOW_PRIVATE", False),
        "WEBHOOKS_ALLOW_HTTP": _bool(env, "SHOP_WEBHOOKS_ALLOW_HTTP", False),
        "WEBHOOKS_TIMEOUT": _int(env, "SHOP_WEBHOOKS_TIMEOUT", 10, minimum=1),
        "WEBHOOKS_POLL_INTERVAL": _int(env, "SHOP_WEBHOOKS_POLL_INTERVAL", 1, minimum=1),
        "WEBHOOKS_RETENTION_DAYS": _int(env, "SHOP_WEBHOOKS_RETENTION_DAYS", 30, minimum=1),
        "MAIL_RETENTION_DAYS": _int(env, "SHOP_MAIL_RETENTION_DAYS", 30, minimum=1),
        "WORKER_STOP_TIMEOUT": _int(env, "SHOP_WORKER_STOP_TIMEOUT", 10, minimum=1),
        # The worker's isolation (shop/webhooks/pool.py) and its leases' margin beyond one
        # attempt (a killed worker's claims are due again after about timeout + margin).
        "WEBHOOKS_CONCURRENCY": _int(env, "SHOP_WEBHOOKS_CONCURRENCY", 8, minimum=1),
        "WEBHOOKS_PER_ORIGIN": _int(env, "SHOP_WEBHOOKS_PER_ORIGIN", 2, minimum=1),
        "WORKER_LEASE_MARGIN": _int(env, "SHOP_WORKER_LEASE_MARGIN", 30, minimum=1),
        # Diagnostics: /metrics answers 404 unless one of these allows a scraper.
        "METRICS_ALLOW": _networks(env, "SHOP_METRICS"),
        "METRICS_TOKEN": _token(env, "SHOP_METRICS_TOKEN"),
        "SQL_COUNT_HEADERS": _bool(env, "SHOP_DEBUG_SQL_COUNT", False),
        # Carts (docs/orders.md): seconds after its last change an open cart with an e-mail
        # and lines gets its one reminder (when the shop and the visitor agreed), and days
        # after its last change an open cart is deleted; the links of the mails.
        "CART_REMINDER_AFTER": _int(env, "SHOP_CART_REMINDER_AFTER", 4 * 3600, minimum=1),
        "CART_TTL_DAYS": _int(env, "SHOP_CART_TTL_DAYS", 30, minimum=1),
        "CART_URL": env.get("SHOP_CART_URL", "").strip() or None,
        "ORDER_STATUS_URL": env.get("SHOP_ORDER_STATUS_URL", "").strip() or None,
        "EMAIL_VERIFICATION_URL": env.get("SHOP_EMAIL_VERIFICATION_URL", "").strip() or None,
        # A pending card order not paid this long is cancelled by the worker (docs/payments.md).
        "UNPAID_ORDER_TTL": _int(env, "SHOP_UNPAID_ORDER_TTL", 3600, minimum=60),
        # Days a customer may ask to return shipped units (shop/returns, docs/returns.md).
        "RETURN_WINDOW_DAYS": _int(env, "SHOP_RETURN_WINDOW_DAYS", 30, minimum=0),
        # Card payments (docs/payments.md): the `stripe` method exists when both are set.
        "STRIPE_API_KEY": env.get("STRIPE_API_KEY", "").strip() or None,
        "STRIPE_WEBHOOK_SECRET": env.get("STRIPE_WEBHOOK_SECRET", "").strip() or None,
        # A brown-out of Stripe never takes the node (docs/operations.md): (connect, read)
        # timeouts, calls at once per process (half the web threads by default; the others
        # answer 503 at once), and a breaker: failures in a row, then seconds of fail-fast.
        "STRIPE_TIMEOUT": _seconds(env, "SHOP_STRIPE_TIMEOUT", 10, minimum=0.1),
        "STRIPE_CONNECT_TIMEOUT": _seconds(env, "SHOP_STRIPE_CONNECT_TIMEOUT", 2, minimum=0.1),
        "STRIPE_CONCURRENCY": _int(env, "SHOP_STRIPE_CONCURRENCY", max(1, threads // 2), 1),
        "STRIPE_BREAKER_FAILURES": _int(env, "SHOP_STRIPE_BREAKER_FAILURES", 5, minimum=1),
        "STRIPE_BREAKER_COOLDOWN": _seconds(env, "SHOP_STRIPE_BREAKER_COOLDOWN", 15, minimum=0.1),
        # For the test suite's fake Stripe only; unset in production.
        "STRIPE_API_BASE": env.get("STRIPE_API_BASE", "").strip() or None,
        # The storefront's card step (Stripe's Payment Element): the publishable key, and
        # where Stripe.js is loaded from (the test suite's fake Stripe serves its own).
        "STRIPE_PUBLISHABLE_KEY": env.get("STRIPE_PUBLISHABLE_KEY", "").strip() or None,
        "STRIPE_JS_URL": env.get("SHOP_STRIPE_JS_URL", "").strip() or "https://js.stripe.com/v3/",
        # Product search: the stemming language (shop/catalogue/search/).
        "SEARCH_LANGUAGE": _search_language(env),
        # Rankings each worker keeps, and ids per ranking (shop/catalogue/search/cache.py).
        "SEARCH_CACHE_SIZE": _int(env, "SHOP_SEARCH_CACHE_SIZE", 256, minimum=0),
        "SEARCH_CACHE_IDS": _int(env, "SHOP_SEARCH_CACHE_IDS", 200, minimum=100),
        "LOG_LEVEL": env.get("SHOP_LOG_LEVEL", "").strip().upper() or "INFO",
        # gunicorn's access log: a line per request costs a keyed read ~16 % of its CPU
        # (docs/performance.md), so it is off unless asked for; nginx in front logs requests.
        "ACCESS_LOG": _bool(env, "SHOP_ACCESS_LOG", False),
        # The web server (gunicorn.conf.py and shop/server.py read these).
        "PORT": _int(env, "PORT", 8000, minimum=1),
        "WEB_CONCURRENCY": _int(env, "WEB_CONCURRENCY", 1, minimum=1),
        "THREADS": threads,
        # One listening socket per worker, the kernel spreading connections over them
        # (docs/performance.md, "reuse_port behind nginx").
        "REUSE_PORT": _bool(env, "SHOP_REUSE_PORT", True),
    }


def check_redis(url: str, timeout: float = 1.0) -> str | None:
    """Why Redis at ``url`` cannot be used, in one line; None when it answers a PING."""
    import redis

    try:
        client = redis.Redis.from_url(url, socket_timeout=timeout, socket_connect_timeout=timeout)
    except ValueError as error:
        return f"REDIS_URL is not a Redis URL ({error}): use redis://host:6379/0"
    try:
        client.ping()
    except redis.RedisError as error:
        return f"REDIS_URL: Redis does not answer at {_without_password(url)} ({error})"
    finally:
        client.close()
    return None


def _without_password(url: str) -> str:
    """A URL fit for a log line: any password replaced by ***."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    if parts.password is None:
        return url
    return url.replace(f":{parts.password}@", ":***@", 1)
