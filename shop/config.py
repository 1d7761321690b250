"""Every setting, read from the environment in one place, with its default.

``README.md`` lists the same variables. A bad value stops the service at start with a message
naming the variable, never later on a request.
"""

import os


class ConfigError(ValueError):
    """A setting in the environment has a value we cannot use."""


def _int(environ, name: str, default: int, minimum: int = 0) -> int:
    raw = environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ConfigError(f"{name} must be a whole number, got {raw!r}") from None
    if value < minimum:
        raise ConfigError(f"{name} must be at least {minimum}, got {value}")
    return value


def _bool(environ, name: str, default: bool) -> bool:
    raw = environ.get(name, "").strip().lower()
    if not raw:
        return default
    if raw in ("1", "true", "yes", "on"):
        return True
    if raw in ("0", "false", "no", "off"):
        return False
    raise ConfigError(f"{name} must be 1 or 0, got {raw!r}")


def _list(environ, name: str) -> list[str]:
    return [item.strip() for item in environ.get(name, "").split(",") if item.strip()]


def check(settings: dict) -> None:
    """Refuse settings that are each valid but make no sense together (ConfigError)."""
    if settings["SESSION_REFRESH"] >= settings["SESSION_LIFETIME"]:
        raise ConfigError(
            "SHOP_SESSION_REFRESH must be less than SHOP_SESSION_LIFETIME"
            f" (got {settings['SESSION_REFRESH']} >= {settings['SESSION_LIFETIME']}):"
            " sessions would never slide"
        )


def from_environment(environ=None) -> dict:
    """The service's settings from environment variables (``os.environ`` by default)."""
    env = os.environ if environ is None else environ
    settings = _read(env)
    check(settings)
    return settings


def _read(env) -> dict:
    return {
        # Where data lives.
        "DATABASE_URL": env.get("DATABASE_URL", "").strip() or "sqlite:///instance/shop.db",
        "REDIS_URL": env.get("REDIS_URL", "").strip() or None,
        # Human sessions.
        "SESSION_LIFETIME": _int(env, "SHOP_SESSION_LIFETIME", 7 * 24 * 3600, minimum=60),
        "SESSION_REFRESH": _int(env, "SHOP_SESSION_REFRESH", 60),
        "COOKIE_SECURE": _bool(env, "SHOP_COOKIE_SECURE", True),
        "PASSWORD_HASH_METHOD": env.get("SHOP_PASSWORD_HASH", "").strip() or "scrypt:32768:8:1",
        # API keys.
        "KEY_LAST_USED_INTERVAL": _int(env, "SHOP_KEY_LAST_USED_INTERVAL", 60),
        "KEY_DORMANT_DAYS": _int(env, "SHOP_KEY_DORMANT_DAYS", 30, minimum=1),
        # Requests.
        "MAX_CONTENT_LENGTH": _int(env, "SHOP_MAX_BODY_BYTES", 1024 * 1024, minimum=1024),
        "CONTENT_SYNC_MAX_BYTES": _int(
            env, "SHOP_CONTENT_SYNC_MAX_BYTES", 16 * 1024 * 1024, minimum=1024
        ),
        "TRUSTED_PROXIES": _int(env, "SHOP_TRUSTED_PROXIES", 0),
        # Flask's TRUSTED_HOSTS: None accepts any Host (redirects are then relative).
        "TRUSTED_HOSTS": _list(env, "SHOP_TRUSTED_HOSTS") or None,
        "RATELIMIT_ENABLED": _bool(env, "SHOP_RATELIMIT_ENABLED", True),
        "RATELIMIT_KEY_PREFIX": env.get("SHOP_RATELIMIT_KEY_PREFIX", "").strip() or "shop",
        # Diagnostics.
        "SQL_COUNT_HEADERS": _bool(env, "SHOP_DEBUG_SQL_COUNT", False),
        "LOG_LEVEL": env.get("SHOP_LOG_LEVEL", "").strip().upper() or "INFO",
    }
