"""What a node keeps in memory and every node must forget when it changes: the changes are
announced on Redis pub/sub, one channel per topic (``<prefix>:<topic>:changed``).

A cache registers its topic and how to forget (``listen``); a write that changes what it keeps
calls ``announce`` after its commit: this process forgets at once, and with Redis every
other process hears it within a second. Each process listens on one thread and one
connection for every topic. While its subscription is down (or before it is confirmed) a
node must keep nothing (``listening`` is False) and it forgets all it held on losing or
regaining it, so a lost message costs at most a cache's own TTL. Without Redis a node's own
writes are all there is. Users: the API key cache (``shop/auth/keys/cache.py``) and the
webhooks ``emit`` reads (``shop/webhooks/outbox.py``).
"""

import contextlib
import logging
import os
import threading

log = logging.getLogger("shop")

EVERYTHING = "*"
# The API key cache's topic (shop/auth/keys/cache.py): a key changed, or a person's rights
# (every key's ceiling), which the webhooks kept for their owners follow too.
API_KEYS = "api-keys"


class Announcements:
    """One app's topics: topic -> its forget(item) callbacks, and the listener of them all."""

    def __init__(self, redis_url: str | None, prefix: str, timeout: float):
        self.redis_url = redis_url
        self.prefix = prefix
        self.timeout = timeout
        self.forgetters = {}
        self.lock = threading.Lock()
        self.listening = redis_url is None  # one node: its own writes are all there is
        self._listener_pid = None
        self._publisher = None
        self._stopped = threading.Event()

    def channel(self, topic: str) -> str:
        """The Redis channel of ``topic``."""
        return f"{self.prefix}:{topic}:changed"

    def listen(self, topic: str, forget) -> None:
        """Call ``forget(item)`` on each change of ``topic`` announced by any node (item
        ``EVERYTHING`` when all of it must go); a topic may have several listeners. Register
        before the first ``usable``."""
        self.forgetters.setdefault(topic, []).append(forget)

    def usable(self) -> bool:
        """Whether a cache may answer now: this process hears every node's changes (its
        listener starts on the first call in each process, a forked worker's too)."""
        if self.redis_url is not None and self._listener_pid != os.getpid():
            self._listen_in_background()
        return self.listening

    def announce(self, topic: str, item: str = EVERYTHING) -> None:
        """Forget ``item`` of ``topic`` here and tell every other node (never raises: the
        change committed)."""
        self._forget(topic, item)
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
            self._publisher.publish(self.channel(topic), item)
        except (redis.RedisError, OSError) as error:  # others forget on their TTL or reconnect
            log.warning("%s change not announced over Redis (%s)", topic, error)

    def _forget(self, topic: str, item: str) -> None:
        for forget in self.forgetters.get(topic, ()):
            forget(item)

    def _forget_all(self) -> None:
        for topic in self.forgetters:
            self._forget(topic, EVERYTHING)

    def _listen_in_background(self) -> None:
        with self.lock:
            if self._listener_pid == os.getpid():
                return
            self._listener_pid = os.getpid()  # a forked worker starts its own listener
            self.listening = False
        self._forget_all()
        threading.Thread(target=self._listen, name="announcements", daemon=True).start()

    def _listen(self) -> None:
        """Forget what other nodes announce; while not subscribed, keep nothing."""
        import redis

        client = redis.Redis.from_url(
            self.redis_url, socket_connect_timeout=self.timeout, health_check_interval=5
        )
        topics = {self.channel(topic): topic for topic in self.forgetters}
        while not self._stopped.is_set():
            pubsub = client.pubsub()
            try:
                pubsub.subscribe(*topics)
                for _ in topics:
                    confirmed = pubsub.get_message(timeout=max(self.timeout, 1.0))
                    if not confirmed or confirmed["type"] != "subscribe":
                        raise redis.ConnectionError("no confirmation of the subscription")
                self._forget_all()  # what changed while away
                self.listening = True
                while not self._stopped.is_set():
                    message = pubsub.get_message(timeout=1.0)
                    if message and message["type"] == "message":
                        topic = topics[message["channel"].decode()]
                        self._forget(topic, message["data"].decode())
            except (redis.RedisError, OSError) as error:
                if self.listening:
                    log.warning("in-memory caches off: Redis subscription lost (%s)", error)
            finally:
                self.listening = False
                self._forget_all()
                with contextlib.suppress(redis.RedisError, OSError):
                    pubsub.close()
            self._stopped.wait(1.0)

    def stop(self) -> None:
        """End this process's listener (tests that build many apps)."""
        self._stopped.set()


def init_app(app) -> Announcements:
    """Give ``app`` its announcements (one per app: tests with two apps are two nodes)."""
    config = app.config
    announcements = Announcements(
        config.get("REDIS_URL"),
        config.get("RATELIMIT_KEY_PREFIX", "shop"),
        config.get("REDIS_TIMEOUT", 0.5),
    )
    app.extensions["shop.announcements"] = announcements
    return announcements
