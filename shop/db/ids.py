"""Identifiers and digests: the one format of every id the service makes."""

import hashlib
import hmac
import re
import secrets
import threading
import time

_HALF = 12  # hex digits of each half of an id: the milliseconds, then the random part

# The id format (``new_id``): 24 lowercase hex digits. The URL converter, the OpenAPI pattern
# and the console's links use these, never a copy.
ID_PATTERN = f"[0-9a-f]{{{2 * _HALF}}}"
ID_RE = re.compile(ID_PATTERN)

_last_id = [0, 0]  # the milliseconds and the random part of this process's newest id
_id_lock = threading.Lock()


def new_id() -> str:
    """An opaque, time-ordered identifier (``ID_PATTERN``): 12 hex digits of milliseconds,
    12 random.

    Monotonic within a process, as ULIDs are: an id made in the same millisecond as the one
    before (or after the system clock stepped back) counts up from it, so rows ordered by
    id, such as an order's status history, keep the order they were written in.
    """
    moment = time.time_ns() // 1_000_000
    with _id_lock:
        last_moment, last_random = _last_id
        if moment > last_moment:
            random_part = secrets.randbits(48)
        elif last_random + 1 < 1 << 48:
            moment, random_part = last_moment, last_random + 1
        else:
            moment, random_part = last_moment + 1, secrets.randbits(48)
        _last_id[:] = moment, random_part
    return f"{moment:0{_HALF}x}{random_part:0{_HALF}x}"


def sha256(text: str) -> str:
    """Hex SHA-256 of a secret; the only form in which secrets are stored."""
    return hashlib.sha256(text.encode()).hexdigest()


def hash_matches(stored: str | None, secret: str | None) -> bool:
    """Whether ``secret`` is the one whose ``sha256`` is ``stored``, in constant time."""
    if not stored or not secret or len(secret) > 100:
        return False
    return hmac.compare_digest(stored, sha256(secret))
