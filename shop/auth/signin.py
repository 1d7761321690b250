"""Signing in and out: the use cases the JSON API (``/auth/...``) and the console share, with
their one rate limit.

Without a single ``kind`` sign-in tries an administrator account, then a customer account,
checking a password hash for each, so the answer takes the same time whether or not the
email exists. Failures count towards the email's lockout (``shop/auth/lockout.py``); while
it is locked even the right password is refused with the same answer. An administrator with
two-factor sign-in on also needs a code (TOTP or a recovery code); a wrong code counts as a
failure too.
"""

from flask import g

from shop import audit, db
from shop.auth import lockout, sessions, two_factor
from shop.auth.passwords import check_password
from shop.clock import iso

_FIND = {
    "admin": "SELECT id, email, name, password_hash, active FROM users WHERE email = :email",
    "customer": (
        "SELECT id, email, name, password_hash, active FROM customers"
        " WHERE email = :email AND erased_at IS NULL"
    ),
}


class SecondFactorNeeded(Exception):
    """The password was right; the account needs a two-factor code (``wrong``: one was bad)."""

    def __init__(self, kind: str, row: dict, wrong: bool):
        super().__init__("two-factor code needed")
        self.kind, self.row, self.wrong = kind, row, wrong


def _anonymous(email: str) -> dict:
    return {"kind": "anonymous", "label": email}


def failed(email: str, reason: str) -> None:
    """Audit a failed sign-in and count it; audit the lockout it may start."""
    started = lockout.failed(email)
    with db.transaction():
        audit.record("login.failed", {"email": email, "reason": reason}, actor=_anonymous(email))
        if started is not None:
            until = iso(_from_ms(started.until_ms))
            audit.record(
                "login.locked_out",
                {"email": email, "until": until, "lockouts_in_a_row": started.strikes},
                actor=_anonymous(email),
            )


def _from_ms(ms: int):
    from datetime import UTC, datetime

    return datetime.fromtimestamp(ms / 1000, UTC)


def check_credentials(email: str, password: str, kinds) -> tuple[str, dict] | None:
    """``(kind, row)`` when the password is right and the email not locked, else None
    (audited and counted). Each kind costs a password check, found or not."""
    email = email.strip().lower()
    locked = lockout.is_locked(email)
    found = None
    for kind in kinds:
        row = db.one(_FIND[kind], {"email": email})
        stored = row["password_hash"] if row else None
        if check_password(stored, password) and row["active"] and found is None:
            found = kind, row
    if locked:
        with db.transaction():
            audit.record(
                "login.failed", {"email": email, "reason": "locked"}, actor=_anonymous(email)
            )
        return None
    if found is None:
        failed(email, "password")
    return found


def open_session(kind: str, row: dict, second_factor: str | None = None) -> None:
    """Open a session for a human whose sign-in succeeded (sets the cookie)."""
    lockout.succeeded(row["email"])
    details = {"kind": kind}
    if second_factor:
        details["second_factor"] = second_factor
    with db.transaction():
        sessions.create(sessions.KINDS[kind], row["id"])
        audit.record(
            "login.succeeded", details, actor={"kind": kind, "id": row["id"], "label": row["email"]}
        )


def check_second_factor(kind: str, row: dict, code: str | None) -> str | None:
    """The second factor used (``otp``/``recovery_code``), None when none is needed;
    raises ``SecondFactorNeeded`` when a code is missing or wrong (a wrong one is counted)."""
    if kind != "admin" or not two_factor.is_enabled(row["id"]):
        return None
    if not code:
        raise SecondFactorNeeded(kind, row, wrong=False)
    used = two_factor.check(row["id"], code)
    if used is None:
        failed(row["email"], "two_factor")
        raise SecondFactorNeeded(kind, row, wrong=True)
    return used


def sign_in(email: str, password: str, kinds, code: str | None = None) -> tuple[str, dict] | None:
    """Check credentials (and the second factor) and open a session: ``(kind, row)``, or
    None when wrong; raises ``SecondFactorNeeded``."""
    found = check_credentials(email, password, kinds)
    if found is None:
        return None
    kind, row = found
    used = check_second_factor(kind, row, code)
    open_session(kind, row, used)
    return found


def sign_out(caller) -> None:
    """End the caller's session (if any) and clear its cookie in the response."""
    if caller is not None and caller.session_id:
        with db.transaction():
            sessions.end(sessions.KINDS[caller.kind], caller.session_id)
            audit.record("logout", {"session_id": caller.session_id})
        g.clear_session_cookies = [sessions.KINDS[caller.kind]]
    else:
        g.clear_session_cookies = [sessions.ADMIN, sessions.CUSTOMER]


def end_session(caller, session_id: str) -> bool:
    """End one of the caller's own sessions (signing out if it is the current one)."""
    kind = sessions.KINDS[caller.kind]
    with db.transaction():
        if not sessions.end(kind, session_id, holder_id=caller.id):
            return False
        audit.record("session.revoked", {"session_id": session_id})
    if session_id == caller.session_id:
        g.clear_session_cookies = [kind]
    return True


# One budget per address for every sign-in form (this API and the admin console).
LOGIN_LIMIT = "5 per minute"
LOGIN_SCOPE = "sign-in"
