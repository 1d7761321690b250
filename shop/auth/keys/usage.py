"""What API keys did, counted in memory and written in batches: no database write per request.

Each process keeps, per key, its requests per day (and the 401, 403 and 429 among them), its
last use and the addresses it was used from, and adds them to ``api_key_usage`` at most every
``SHOP_KEY_LAST_USED_INTERVAL`` seconds, in the teardown of the request that finds the time
has come (a key's first use is written by its own request). A read adds this process's
unwritten counts. What a crash loses, and several workers: docs/api-keys.md, "What a key did".
"""

import atexit
import logging
import threading
from datetime import timedelta

from flask import current_app

from shop import db
from shop.auth.keys.events import address_seen
from shop.clock import iso, now

log = logging.getLogger("shop")

_STATUS_COLUMN = {401: 1, 403: 2, 429: 3}  # index in a day's [requests, 401, 403, 429]
USAGE_DAYS = 30


class UsageBuffer:
    """One process's unwritten key usage, shared by its threads under a lock."""

    def __init__(self):
        self.lock = threading.Lock()
        # Kept as datetimes and dates, made text only when written: this runs per request.
        self.counts = {}  # (key_id, date) -> [requests, unauthorized, forbidden, rate_limited]
        self.last_use = {}  # key_id -> (datetime, ip)
        self.addresses = {}  # (key_id, ip) -> [first datetime, last datetime]
        self.next_flush = None  # when this process writes next (the app's clock)
        self.flushing = False
        self.interval = timedelta(seconds=60)  # SHOP_KEY_LAST_USED_INTERVAL (init_app)

    def note(self, key_id: str, status: int, ip: str | None, moment, accepted: bool) -> None:
        """Count one request made with ``key_id`` (``accepted``: the key was let in, from
        ``ip``). Only an accepted request that was not refused (401, 403, 429), whoever
        refused it (the key's address rule or limit, the route's scope check, the view), is
        a use: it alone moves the last use, and with it the idle expiry, and notes the
        address."""
        day = moment.date()
        with self.lock:
            row = self.counts.get((key_id, day))
            if row is None:
                row = self.counts[(key_id, day)] = [0, 0, 0, 0]
            row[0] += 1
            column = _STATUS_COLUMN.get(status)
            if column:
                row[column] += 1
            elif accepted:
                self.last_use[key_id] = (moment, ip)
                seen = self.addresses.get((key_id, ip))
                if seen is None:
                    self.addresses[(key_id, ip)] = [moment, moment]
                else:
                    seen[1] = moment

    def take(self) -> tuple[dict, dict, dict]:
        """Everything unwritten, leaving the buffer empty."""
        with self.lock:
            taken = self.counts, self.last_use, self.addresses
            self.counts, self.last_use, self.addresses = {}, {}, {}
        return taken

    def give_back(self, counts: dict, last_use: dict, addresses: dict) -> None:
        """Put back what a failed write took, merged with what came in meanwhile."""
        with self.lock:
            for key, row in counts.items():
                mine = self.counts.setdefault(key, [0, 0, 0, 0])
                for i, n in enumerate(row):
                    mine[i] += n
            for key_id, use in last_use.items():
                if key_id not in self.last_use or self.last_use[key_id][0] < use[0]:
                    self.last_use[key_id] = use
            for key, (first, last) in addresses.items():
                mine = self.addresses.setdefault(key, [first, last])
                mine[0], mine[1] = min(mine[0], first), max(mine[1], last)

    def pending_last_use(self, key_id: str):
        """This process's unwritten last use of a key: (iso time, ip) or None."""
        use = self.last_use.get(key_id)
        return None if use is None else (iso(use[0]), use[1])

    def pending_days(self, key_id: str) -> dict:
        """This process's unwritten counts of a key, by day (ISO date)."""
        with self.lock:
            return {
                day.isoformat(): list(row)
                for (kid, day), row in self.counts.items()
                if kid == key_id
            }

    def counted(self, use, status: int, moment) -> bool:
        """Count a request (``use``: ``[key_id, let_in, address, first_use]``, None without a
        key) and answer whether this request writes the batch: a never-used key's first use
        at once (another process, ``flask api-keys list``, never says "never" after it), else
        the first request once this process's interval is up."""
        first_use = False
        if use is not None:
            self.note(use[0], status, use[2], moment, use[1])
            first_use = use[3] and use[0] in self.last_use
        if first_use and not self.flushing:
            self.flushing = True
            return True
        if self.next_flush is None:
            self.next_flush = moment + self.interval
        elif moment >= self.next_flush and not self.flushing:
            self.flushing = True
            self.next_flush = moment + self.interval
            return True
        return False


def init_app(app) -> UsageBuffer:
    """Give ``app`` its buffer (one per app, so tests with several apps never mix keys) and,
    outside tests, a last write when the process exits normally. The request hooks that
    count into it are the edge's (``shop/http/key_usage.py``)."""
    usage = app.extensions["shop.key_usage"] = UsageBuffer()
    usage.interval = timedelta(seconds=app.config["KEY_LAST_USED_INTERVAL"])
    if not app.testing:
        atexit.register(_flush_at_exit, app)
    return usage


def buffer() -> UsageBuffer:
    """This app's buffer."""
    return current_app.extensions["shop.key_usage"]


def flush_batch() -> None:
    """Write this process's batch, as the request that ``UsageBuffer.counted`` chose; never
    raises (``flush``), and lets the next interval's request write again."""
    try:
        flush()
    finally:
        buffer().flushing = False


def _flush_at_exit(app) -> None:
    """atexit: write what this process still holds."""
    try:
        with app.app_context():
            flush()
    except Exception:  # noqa: BLE001 - a worker on its way out: log and go
        log.warning("API key usage: could not write the last counts at exit", exc_info=True)


def flush() -> None:
    """Write what this process counted. Never raises."""
    usage = buffer()
    counts, last_use, addresses = usage.take()
    if counts or last_use or addresses:
        try:
            _write(counts, last_use, addresses)
        except Exception:  # noqa: BLE001 - the database is away: keep the counts for next time
            usage.give_back(counts, last_use, addresses)
            log.warning("API key usage: write failed, kept for the next try", exc_info=True)


def _write(counts: dict, last_use: dict, addresses: dict) -> None:
    """One transaction: add the counts, move last uses forward, record (and audit) addresses
    no process had recorded before."""
    with db.transaction():
        if counts:
            db.execute_many(
                "INSERT INTO api_key_usage (key_id, day, requests, unauthorized, forbidden,"
                " rate_limited) SELECT :key_id, :day, :r, :u, :f, :l"
                " WHERE EXISTS (SELECT 1 FROM api_keys WHERE id = :key_id)"  # deleted by hand?
                " ON CONFLICT (key_id, day) DO UPDATE SET"
                " requests = api_key_usage.requests + excluded.requests,"
                " unauthorized = api_key_usage.unauthorized + excluded.unauthorized,"
                " forbidden = api_key_usage.forbidden + excluded.forbidden,"
                " rate_limited = api_key_usage.rate_limited + excluded.rate_limited",
                [
                    {"key_id": k, "day": d.isoformat(), "r": r[0], "u": r[1], "f": r[2], "l": r[3]}
                    for (k, d), r in sorted(counts.items())
                ],
            )
        for key_id, (used_at, ip) in sorted(last_use.items()):
            db.execute(
                "UPDATE api_keys SET last_used_at = :at, last_used_ip = :ip WHERE id = :id"
                " AND (last_used_at IS NULL OR last_used_at < :at)",
                {"at": iso(used_at), "ip": ip, "id": key_id},
            )
        for (key_id, ip), (first, last) in sorted(addresses.items(), key=str):
            if ip is None:
                continue
            known = db.value(
                "SELECT COUNT(*) FROM api_key_addresses WHERE key_id = :k", {"k": key_id}
            )
            first, last = iso(first), iso(last)
            inserted = db.execute(
                "INSERT INTO api_key_addresses (key_id, ip, first_seen_at, last_seen_at)"
                " SELECT :k, :ip, :first, :last WHERE EXISTS (SELECT 1 FROM api_keys"
                " WHERE id = :k) ON CONFLICT (key_id, ip) DO NOTHING",
                {"k": key_id, "ip": ip, "first": first, "last": last},
            )
            if inserted:
                address_seen(key_id, ip, first, first_use=not known)
            else:
                db.execute(
                    "UPDATE api_key_addresses SET last_seen_at = :last"
                    " WHERE key_id = :k AND ip = :ip AND last_seen_at < :last",
                    {"k": key_id, "ip": ip, "last": last},
                )


def prune() -> int:
    """Forget the usage of days older than the 30 shown (and a margin); answer 0."""
    cutoff = (now() - timedelta(days=USAGE_DAYS + 5)).date().isoformat()
    with db.transaction():
        db.execute("DELETE FROM api_key_usage WHERE day < :cutoff", {"cutoff": cutoff})
    return 0


def summary(key_id: str) -> dict:
    """Requests per day over the last 30 days (oldest first) and the refusals among them."""
    today = now().date()
    first = today - timedelta(days=USAGE_DAYS - 1)
    days = {(first + timedelta(days=i)).isoformat(): [0, 0, 0, 0] for i in range(USAGE_DAYS)}
    rows = db.query(
        "SELECT day, requests, unauthorized, forbidden, rate_limited FROM api_key_usage"
        " WHERE key_id = :k AND day >= :first",
        {"k": key_id, "first": first.isoformat()},
    )
    stored = {
        r["day"]: [r["requests"], r["unauthorized"], r["forbidden"], r["rate_limited"]]
        for r in rows
    }
    for source in (stored, buffer().pending_days(key_id)):
        for day, row in source.items():
            if day in days:
                days[day] = [a + b for a, b in zip(days[day], row, strict=True)]
    names = ("requests", "unauthorized", "forbidden", "rate_limited")
    per_day = [{"date": day, **dict(zip(names, row, strict=True))} for day, row in days.items()]
    totals = {name: sum(d[name] for d in per_day) for name in names}
    return {"since": first.isoformat(), "days": per_day, **totals}
