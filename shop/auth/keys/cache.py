"""Verified API keys kept in memory for a few seconds, so a keyed request reads no key row.

A key that resolved to a live caller is kept by the SHA-256 of its secret for
``SHOP_API_KEY_CACHE_SECONDS`` (at most 10, 0: off), with the rights computed from it. Every
write that changes what a key may do (revoke, roll, scopes, allowed_ips, limit, and its
owner's role, permissions, activity or removal) calls ``changed`` after its commit: this node
forgets at once, and with Redis every node hears it on one pub/sub channel within a second.
A node whose subscription is down uses no cache until it is back (and forgets all it held),
so a lost message costs at most the TTL. The promise, beside other services': docs/api-keys.md.
"""

import contextlib
import logging
import os
import threading
import time

from flask import current_app

from shop import db

log = logging.getLogger("shop")

MAX_SECONDS = 10
EVERY_KEY = "*"


class KeyCache:
    """One app's verified keys: token hash -> (deadline, row, rights, scopes, active_until);
    ``active_until`` is when the kept row's state may stop being ``active`` (its expiry or
    idle deadline; None: never), so a request before it needs no date arithmetic."""

    def __init__(self, seconds: int, redis_url: str | None, prefix: str, timeout: float):
        self.seconds = min(seconds, MAX_SECONDS)
        self.entries = {}
        self.lock = threading.Lock()
        self.generation = 0  # moves on every forgetting: a read begun before it is not kept
        self.redis_url = redis_url
        self.channel = f"{prefix}:api-keys:changed"
        self.timeout = timeout
        self.listening = redis_url is None  # one node: its own writes are all there is
        self._listener_pid = None
        self._publisher = None
        self._stopped = threading.Event()

    def get(self, token_hash: str):
        """The kept entry of a secret's hash, or None (expired, unknown, or cache unusable)."""
        if not self.seconds:
            return None
        if self.redis_url is not None and self._listener_pid != os.getpid():
            self._listen_in_background()
        if not self.listening:
            return None
        entry = self.entries.get(token_hash)
        if entry is None or entry[0] <= time.monotonic():
            return None
        return entry

    def put(
        self, token_hash: str, generation: int, row: dict, rights, scopes, active_until=None
    ) -> None:
        """Keep a key read when the generation was ``generation``, unless something was
        forgotten since (the read may predate that change)."""
        if not self.seconds:
            return
        with self.lock:
            if generation != self.generation or not self.listening:
                return
            if len(self.entries) > 10_000:  # bounded: forget the lot rather than grow
                self.entries = {}
            self.entries[token_hash] = (
                time.monotonic() + self.seconds,
                row,
                rights,
                scopes,
                active_until,
            )

    def forget(self, key_id: str) -> None:
        """Drop one key's entries (``EVERY_KEY``: all of them), in this process only."""
        with self.lock:
            self.generation += 1
            if key_id == EVERY_KEY:
                self.entries = {}
            else:
                self.entries = {h: e for h, e in self.entries.items() if e[1]["id"] != key_id}

    def announce(self, key_id: str) -> None:
        """Forget a key here and tell every other node (never raises: the change committed)."""
        self.forget(key_id)
        if self.redis_url is None:
            return
        import redis

        try:
            if self._publisher is None:
                self._publisher = redis.Redis.from_url(
                    self.redis_url,
                    socket_timeout=self.timeout,
                    socket_connect_timeout=self.timeout,
                )
            self._publisher.publish(self.channel, key_id)
        except (
            redis.RedisError,
            OSError,
        ) as error:  # other nodes forget within their TTL, or on reconnect
            log.warning(
                "api key change not announced over Redis (%s): other nodes keep it at most %s s",
                error,
                self.seconds,
            )

    def _listen_in_background(self) -> None:
        with self.lock:
            if self._listener_pid == os.getpid():
                return
            self._listener_pid = os.getpid()  # a forked worker starts its own listener
            self.listening = False
            self.entries = {}
        threading.Thread(target=self._listen, name="api-key-cache", daemon=True).start()

    def _listen(self) -> None:
        """Forget what other nodes announce; while not subscribed, keep nothing."""
        import redis

        client = redis.Redis.from_url(
            self.redis_url, socket_connect_timeout=self.timeout, health_check_interval=5
        )
        while not self._stopped.is_set():
            pubsub = client.pubsub()
            try:
                pubsub.subscribe(self.channel)
                confirmed = pubsub.get_message(timeout=max(self.timeout, 1.0))
                if not confirmed or confirmed["type"] != "subscribe":
                    raise redis.ConnectionError("no confirmation of the subscription")
                self.forget(EVERY_KEY)  # what changed while away
                self.listening = True
                while not self._stopped.is_set():
                    message = pubsub.get_message(timeout=1.0)
                    if message and message["type"] == "message":
                        self.forget(message["data"].decode())
            except (redis.RedisError, OSError) as error:
                if self.listening:
                    log.warning("api key cache off: Redis subscription lost (%s)", error)
            finally:
                self.listening = False
                self.forget(EVERY_KEY)
                with contextlib.suppress(redis.RedisError, OSError):
                    pubsub.close()
            self._stopped.wait(1.0)

    def stop(self) -> None:
        """End this process's listener (tests that build many apps)."""
        self._stopped.set()


def init_app(app) -> KeyCache:
    """Give ``app`` its cache (one per app: tests with two apps are two nodes)."""
    config = app.config
    cache = KeyCache(
        config.get("API_KEY_CACHE_SECONDS", MAX_SECONDS),
        config.get("REDIS_URL"),
        config.get("RATELIMIT_KEY_PREFIX", "shop"),
        config.get("REDIS_TIMEOUT", 0.5),
    )
    app.extensions["shop.key_cache"] = cache
    return cache


def of_app() -> KeyCache:
    """The current app's cache."""
    return current_app.extensions["shop.key_cache"]


def changed(key_id: str = EVERY_KEY) -> None:
    """A key (``EVERY_KEY``: any, as when an owner's rights change) changed: forget it on
    every node once the open transaction commits (at once outside one)."""
    cache = of_app()
    db.after_commit(lambda: cache.announce(key_id))
