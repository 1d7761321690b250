"""Verified API keys kept in memory for a few seconds, so a keyed request reads no key row.

A key that resolved to a live caller is kept by the SHA-256 of its secret for
``SHOP_API_KEY_CACHE_SECONDS`` (at most 10, 0: off), with the rights computed from it. Every
write that changes what a key may do (revoke, roll, scopes, allowed_ips, limit, and its
owner's role, permissions, activity or removal) calls ``changed`` after its commit: this node
forgets at once, and with Redis every node hears it on one pub/sub channel within a second
(``shop/net/announcements.py``).
A node whose subscription is down uses no cache until it is back (and forgets all it held),
so a lost message costs at most the TTL. The promise, beside other services': docs/api-keys.md.
"""

import threading
import time

from flask import current_app

from shop import db
from shop.net.announcements import API_KEYS, EVERYTHING, Announcements

MAX_SECONDS = 10
EVERY_KEY = EVERYTHING
TOPIC = API_KEYS  # its channel: <prefix>:api-keys:changed, as before


class KeyCache:
    """One app's verified keys: token hash -> (deadline, row, rights, scopes, active_until);
    ``active_until`` is when the kept row's state may stop being ``active`` (its expiry or
    idle deadline; None: never), so a request before it needs no date arithmetic."""

    def __init__(self, seconds: int, announcements: Announcements):
        self.seconds = min(seconds, MAX_SECONDS)
        self.entries = {}
        self.lock = threading.Lock()
        self.generation = 0  # moves on every forgetting: a read begun before it is not kept
        self.announcements = announcements
        announcements.listen(TOPIC, self.forget)

    @property
    def listening(self) -> bool:
        """Whether this node hears every node's changes (``shop/net/announcements.py``)."""
        return self.announcements.listening

    def get(self, token_hash: str):
        """The kept entry of a secret's hash, or None (expired, unknown, or cache unusable)."""
        if not self.seconds or not self.announcements.usable():
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
        self.announcements.announce(TOPIC, key_id)


def init_app(app) -> KeyCache:
    """Give ``app`` its cache (one per app: tests with two apps are two nodes), forgotten
    through the app's ``shop.announcements``."""
    cache = KeyCache(
        app.config.get("API_KEY_CACHE_SECONDS", MAX_SECONDS),
        app.extensions["shop.announcements"],
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
