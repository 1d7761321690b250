"""Per-account sign-in lockout: after ``LOCKOUT_THRESHOLD`` failures within ``LOCKOUT_WINDOW``
seconds an account is locked for ``LOCKOUT_COOLDOWN`` seconds, doubling on each repeat (up
to ``LOCKOUT_MAX_COOLDOWN``); a day without a lockout forgets the repeats.

Counted per account (``account()``): its kind and id, or its kind and the email as typed
(lower-cased) when no account of that kind has it, so an unknown email locks exactly like a
known one and the answer tells nothing. An administrator and a customer with one email are
two accounts with two counters: one's success never clears the other's failures. The
counters live in Redis when ``REDIS_URL`` is set (one Lua script per failure: exact across
workers and nodes), in this process's memory otherwise. The time is the app's clock
(``CLOCK``), so tests move it. Redis keys hold a hash of the account.
"""

import hashlib
import logging
import secrets
import threading
import time
from dataclasses import dataclass

from flask import current_app

from shop.clock import now

log = logging.getLogger("shop.lockout")

# KEYS: failures (sorted set of ms stamps), state (hash: until, strikes, at).
# ARGV: now_ms, window_ms, threshold, cooldown_ms, max_cooldown_ms, member, ttl_s, forget_ms.
_FAIL_SCRIPT = """
local now = tonumber(ARGV[1])
local locked_until = tonumber(redis.call('HGET', KEYS[2], 'until') or '0')
if locked_until > now then return {1, tostring(locked_until), 0} end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[2]))
redis.call('ZADD', KEYS[1], now, ARGV[6])
redis.call('EXPIRE', KEYS[1], ARGV[7])
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[3]) then return {0, '0', 0} end
local strikes = tonumber(redis.call('HGET', KEYS[2], 'strikes') or '0')
local last = tonumber(redis.call('HGET', KEYS[2], 'at') or '0')
if now - last > tonumber(ARGV[8]) then strikes = 0 end
strikes = strikes + 1
local cooldown = math.min(tonumber(ARGV[4]) * 2 ^ (strikes - 1), tonumber(ARGV[5]))
locked_until = now + cooldown
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[2], 'until', tostring(locked_until), 'strikes', strikes, 'at', now)
redis.call('EXPIRE', KEYS[2], ARGV[7])
return {2, tostring(locked_until), strikes}
"""


@dataclass(frozen=True)
class Lockout:
    """A lockout that has just begun."""

    until_ms: int
    strikes: int


def _settings() -> dict:
    config = current_app.config
    return {
        "window": config["LOCKOUT_WINDOW"] * 1000,
        "threshold": config["LOCKOUT_THRESHOLD"],
        "cooldown": config["LOCKOUT_COOLDOWN"] * 1000,
        "max_cooldown": config["LOCKOUT_MAX_COOLDOWN"] * 1000,
        "forget": 24 * 3600 * 1000 + config["LOCKOUT_MAX_COOLDOWN"] * 1000,
    }


def _now_ms() -> int:
    return int(now().timestamp() * 1000)


class MemoryStore:
    """The counters of one process (no REDIS_URL)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._failures = {}
        self._state = {}

    def locked(self, key: str, moment: int) -> bool:
        with self._lock:
            return self._state.get(key, {}).get("until", 0) > moment

    def fail(self, key: str, moment: int, s: dict) -> Lockout | None:
        with self._lock:
            state = self._state.setdefault(key, {"until": 0, "strikes": 0, "at": 0})
            if state["until"] > moment:
                return None
            stamps = [t for t in self._failures.get(key, []) if t > moment - s["window"]]
            stamps.append(moment)
            self._failures[key] = stamps
            if len(stamps) < s["threshold"]:
                return None
            strikes = 1 if moment - state["at"] > s["forget"] else state["strikes"] + 1
            until = moment + min(s["cooldown"] * 2 ** (strikes - 1), s["max_cooldown"])
            self._failures.pop(key, None)
            state.update(until=until, strikes=strikes, at=moment)
            return Lockout(until, strikes)

    def succeeded(self, key: str) -> None:
        with self._lock:
            self._failures.pop(key, None)

    def clear(self, key: str) -> bool:
        with self._lock:
            self._failures.pop(key, None)
            state = self._state.pop(key, None)
            return bool(state and state["until"])


class RedisStore:
    """The counters shared by every worker and node through Redis."""

    def __init__(self, url: str, prefix: str, timeout: float):
        import redis

        self._redis = redis.Redis.from_url(
            url, socket_timeout=timeout, socket_connect_timeout=timeout
        )
        self._script = self._redis.register_script(_FAIL_SCRIPT)
        self._prefix = f"{prefix}:lockout"

    def _keys(self, key: str) -> tuple[str, str]:
        return f"{self._prefix}:f:{key}", f"{self._prefix}:s:{key}"

    def locked(self, key: str, moment: int) -> bool:
        until = self._redis.hget(self._keys(key)[1], "until")
        return until is not None and int(float(until)) > moment

    def fail(self, key: str, moment: int, s: dict) -> Lockout | None:
        ttl = (s["forget"] + s["window"]) // 1000
        args = [moment, s["window"], s["threshold"], s["cooldown"], s["max_cooldown"]]
        args += [f"{moment}:{secrets.token_hex(4)}", ttl, s["forget"]]
        state, until, strikes = self._script(keys=self._keys(key), args=args)
        return Lockout(int(float(until)), int(strikes)) if state == 2 else None

    def succeeded(self, key: str) -> None:
        self._redis.delete(self._keys(key)[0])

    def clear(self, key: str) -> bool:
        failures, state = self._keys(key)
        pipe = self._redis.pipeline()
        pipe.hget(state, "until")
        pipe.delete(failures, state)
        until, _ = pipe.execute()
        return until is not None


# After Redis fails, sign-ins count in memory for this long before Redis is tried again: a
# Redis that is down or hung costs one request one timeout, not every request one each.
RETRY_REDIS_AFTER = 2.0


class _Stores:
    """This app's stores: Redis (when configured) and memory, and whether Redis is resting."""

    def __init__(self, shared, memory):
        self.shared, self.memory = shared, memory
        self.resting_until = None  # time.monotonic() until which Redis is not asked
        self.lock = threading.Lock()


def _store() -> _Stores:
    """This app's stores, made on first use."""
    extensions = current_app.extensions
    if "shop.lockout" not in extensions:
        config = current_app.config
        url, prefix = config["REDIS_URL"], config["RATELIMIT_KEY_PREFIX"]
        shared = RedisStore(url, prefix, config["REDIS_TIMEOUT"]) if url else None
        extensions["shop.lockout"] = _Stores(shared, MemoryStore())
    return extensions["shop.lockout"]


def _call(method: str, *args):
    """Ask Redis when configured and not resting after a failure, else memory.

    The first failure of an outage is logged as a warning, the return to Redis once.
    """
    stores = _store()
    if stores.shared is not None:
        resting = stores.resting_until
        if resting is None or time.monotonic() >= resting:
            try:
                answer = getattr(stores.shared, method)(*args)
            except Exception as error:  # noqa: BLE001 - Redis down must not stop sign-in
                with stores.lock:
                    if stores.resting_until is None:
                        log.warning(
                            "lockout counters: Redis failed (%s); counting in memory",
                            type(error).__name__,
                        )
                    stores.resting_until = time.monotonic() + RETRY_REDIS_AFTER
            else:
                if resting is not None:
                    with stores.lock:
                        stores.resting_until = None
                    log.warning("lockout counters: Redis answers again; counting there")
                return answer
    return getattr(stores.memory, method)(*args)


def account(kind: str, account_id: str | None, email: str = "") -> str:
    """The counter of one account: ``kind`` and its id, or ``kind`` and the normalised
    ``email`` when no account of that kind has it."""
    if account_id:
        return f"{kind}:id:{account_id}"
    return f"{kind}:email:{email.strip().lower()}"


def _key(account_key: str) -> str:
    return hashlib.sha256(account_key.encode()).hexdigest()[:32]


def is_locked(account_key: str) -> bool:
    """Whether sign-in to the account (``account()``) is locked right now."""
    return _call("locked", _key(account_key), _now_ms())


def failed(account_key: str) -> Lockout | None:
    """Count a failed sign-in to the account; answer the lockout when it started one."""
    return _call("fail", _key(account_key), _now_ms(), _settings())


def succeeded(account_key: str) -> None:
    """A right password (and code) for the account: forget its failures counted so far."""
    _call("succeeded", _key(account_key))


def clear(account_key: str) -> bool:
    """Lift the account's lockout and forget failures and repeats; answer whether one was
    in force."""
    return _call("clear", _key(account_key))
