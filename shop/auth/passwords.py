"""Password hashing with scrypt (memory-hard), and checks that take the same time whether or
not the account exists."""

from flask import current_app
from werkzeug.security import check_password_hash, generate_password_hash

MIN_LENGTH = 8
MAX_LENGTH = 1024

_dummy_hashes = {}


def hash_password(password: str) -> str:
    """The stored form of a password."""
    return generate_password_hash(password, method=current_app.config["PASSWORD_HASH_METHOD"])


def check_password(stored_hash: str | None, password: str) -> bool:
    """Whether ``password`` matches; with no account, spends the same time and says no."""
    if stored_hash is None:
        method = current_app.config["PASSWORD_HASH_METHOD"]
        if method not in _dummy_hashes:
            _dummy_hashes[method] = generate_password_hash("not a password", method=method)
        check_password_hash(_dummy_hashes[method], password)
        return False
    return check_password_hash(stored_hash, password)
