"""The ``RateLimit`` and ``RateLimit-Policy`` response fields, from the windows the limits saw.

The fields are those of draft-ietf-httpapi-ratelimit-headers-10 (27 September 2025): a list
of policies, each a quoted name with its quota ``q`` and window ``w`` in seconds, and per
policy what is left, ``r``, and the seconds ``t`` until a unit of it comes back. Every limit
is a moving window, so ``t`` is when the oldest request in the window ages out.

A limit's hit reads its window in the same storage call (``MovingWindow.hit``): on Redis one
Lua script acquires and counts (limits' own two scripts, run as one); in memory the count is
a bisection. What each hit saw is kept for the request (``g``), so the fields and a 429's
``Retry-After`` cost no further storage call. Why: docs/performance.md, "Rate-limit headers".
"""

import math
import time

from flask import g, has_request_context
from limits.storage import RedisStorage
from limits.strategies import MovingWindowRateLimiter
from limits.util import WindowStats

# limits' acquire_moving_window.lua, then the count and oldest entry of its moving_window.lua,
# in one call: the list holds a key's hits, newest first, at most ``limit`` of them.
_ACQUIRE_AND_COUNT = """
local timestamp = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local expiry = tonumber(ARGV[3])
local amount = tonumber(ARGV[4])
local start = timestamp - expiry
local acquired = 0
if amount <= limit then
    local entry = redis.call('lindex', KEYS[1], limit - amount)
    if not (entry and tonumber(entry) >= start) then
        local entries = {}
        for i = 1, amount do
            entries[i] = timestamp
        end
        redis.call('lpush', KEYS[1], unpack(entries))
        redis.call('ltrim', KEYS[1], 0, limit - 1)
        redis.call('expire', KEYS[1], expiry)
        acquired = 1
    end
end
local len = redis.call('llen', KEYS[1])
if len == 0 then
    return {acquired, 0, ARGV[1]}
end
local last = redis.call('lindex', KEYS[1], len - 1)
if tonumber(last) >= start then
    return {acquired, len, last}
end
local low, high, found = 0, len - 1, nil
while low <= high do
    local mid = math.floor((low + high) / 2)
    local value = redis.call('lindex', KEYS[1], mid)
    if tonumber(value) >= start then
        found = mid
        low = mid + 1
    else
        high = mid - 1
    end
end
if found then
    return {acquired, found + 1, redis.call('lindex', KEYS[1], found)}
end
return {acquired, 0, ARGV[1]}
"""


class MovingWindow(MovingWindowRateLimiter):
    """limits' moving window, whose hits keep the window they saw for this request's fields."""

    def __init__(self, storage):
        super().__init__(storage)
        self._script = None
        if isinstance(storage, RedisStorage):
            self._script = storage.get_connection().register_script(_ACQUIRE_AND_COUNT)

    def hit(self, item, *identifiers: str, cost: int = 1) -> bool:
        """Take ``cost`` from the window if it has room; keep the window's state either way."""
        key = item.key_for(*identifiers)
        expiry = item.get_expiry()
        if self._script is not None:
            now = time.time()
            acquired, count, oldest = self._script(
                [self.storage.prefixed_key(key)], [now, item.amount, expiry, cost]
            )
            start = float(oldest)
        else:
            acquired = self.storage.acquire_entry(key, item.amount, expiry, amount=cost)
            start, count = self.storage.get_moving_window(key, item.amount, expiry)
        if has_request_context():
            windows = g.get("rate_windows")
            if windows is None:
                windows = g.rate_windows = {}
            windows[key] = (item, WindowStats(start + expiry, item.amount - count))
        return bool(acquired)

    def get_window_stats(self, item, *identifiers: str) -> WindowStats:
        """The window this request's hit saw, else limits' own read of it."""
        windows = g.get("rate_windows") if has_request_context() else None
        seen = windows.get(item.key_for(*identifiers)) if windows else None
        if seen is not None:
            return seen[1]
        return super().get_window_stats(item, *identifiers)


def add_fields(response, names: dict) -> None:
    """Add ``RateLimit-Policy`` and ``RateLimit`` for every limit this request was counted
    against; ``names`` maps a limit's storage key to its policy name (default ``api-key``)."""
    windows = g.get("rate_windows")
    if not windows:
        return
    now = time.time()
    policies, states, used = [], [], set()
    for key, (item, stats) in windows.items():
        name = names.get(key, "api-key")
        window = item.get_expiry()
        if name in used:  # one scope with several windows ("5 per minute;20 per hour")
            name = f"{name}-{window}"
        used.add(name)
        policies.append(f'"{name}";q={item.amount};w={window}')
        states.append(f'"{name}";r={max(0, stats.remaining)};t={seconds_until(stats, now)}')
    response.headers["RateLimit-Policy"] = ", ".join(policies)
    response.headers["RateLimit"] = ", ".join(states)


def seconds_until(stats: WindowStats, now: float) -> int:
    """Whole seconds until the window's oldest request ages out (at least 1 when none is
    left, so that a client waiting that long finds room)."""
    seconds = max(0, math.ceil(stats.reset_time - now))
    return max(1, seconds) if stats.remaining <= 0 else seconds


def retry_after() -> int | None:
    """Seconds until every window this request found full has room again; None if none."""
    windows = g.get("rate_windows")
    now = time.time()
    waits = [seconds_until(s, now) for _, s in (windows or {}).values() if s.remaining <= 0]
    return max(waits) if waits else None
