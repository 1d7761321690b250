"""Password hashing with scrypt (memory-hard), and checks that take the same time whether or
not the account exists.

scrypt at N=32768, r=8 takes 32 MiB for each hash while it runs: eight threads hashing at
once took a worker from 50 to 310 MB. At most SHOP_PASSWORD_HASH_CONCURRENCY hashes run at
once per process (1 by default), the other sign-ins wait their turn (a hash takes about a
tenth of a second): a worker's peak stays under 100 MB (docs/operations.md).
"""

import threading

from flask import current_app
from werkzeug.security import check_password_hash, generate_password_hash

MIN_LENGTH = 8
MAX_LENGTH = 1024

_dummy_hashes = {}
_slots: dict[int, threading.BoundedSemaphore] = {}


def _hashing() -> threading.BoundedSemaphore:
    """The slots for hashes running at once in this process."""
    limit = current_app.config["PASSWORD_HASH_CONCURRENCY"]
    slots = _slots.get(limit)
    if slots is None:
        slots = _slots.setdefault(limit, threading.BoundedSemaphore(limit))
    return slots


def hash_password(password: str) -> str:
    """The stored form of a password."""
    method = current_app.config["PASSWORD_HASH_METHOD"]
    with _hashing():
        return generate_password_hash(password, method=method)


def check_password(stored_hash: str | None, password: str) -> bool:
    """Whether ``password`` matches; with no account, spends the same time and says no."""
    if stored_hash is None:
        method = current_app.config["PASSWORD_HASH_METHOD"]
        if method not in _dummy_hashes:
            _dummy_hashes[method] = hash_password("not a password")
        with _hashing():
            check_password_hash(_dummy_hashes[method], password)
        return False
    with _hashing():
        return check_password_hash(stored_hash, password)
