"""Signing in and out: the use cases the JSON API (``/auth/...``) and the console share, with
their one rate limit.

Without a single ``kind`` sign-in tries an administrator account, then a customer account,
checking a password hash for each, so the answer takes the same time whether or not the
email exists. A failure counts towards the lockout (``shop/auth/lockout.py``) of each account
tried: the account of each kind the email names, or that kind and the email when none does.
While an account is locked even its right password is refused with the same answer; a success
forgets the failures of the account signed into only. An administrator with two-factor
sign-in on also needs a code (TOTP or a recovery code); a wrong code counts as a failure of
that administrator's account.
"""

from shop import audit, db
from shop.actor import Actor
from shop.auth import lockout, sessions, two_factor
from shop.auth.passwords import check_password
from shop.clock import iso, iso_in, now_iso

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


def account(kind: str, row: dict) -> str:
    """The lockout counter of a signed-in (or signing-in) human's account."""
    return lockout.account(kind, row["id"])


def failed(email: str, reason: str, accounts: dict[str, str], origin: Actor) -> None:
    """Audit a failed sign-in from ``origin`` (the request's address) and count it against
    ``accounts`` (kind: lockout counter); audit each lockout it starts."""
    actor = origin.acting_as("anonymous", label=email)
    started = {kind: lockout.failed(key) for kind, key in accounts.items()}
    with db.transaction():
        audit.record(
            "login.failed",
            {"email": email, "reason": reason, "kinds": sorted(accounts)},
            actor=actor,
        )
        for kind, begun in started.items():
            if begun is None:
                continue
            until = iso(_from_ms(begun.until_ms))
            audit.record(
                "login.locked_out",
                {"email": email, "kind": kind, "until": until, "lockouts_in_a_row": begun.strikes},
                actor=actor,
            )


def is_locked(kind: str, row: dict, origin: Actor) -> bool:
    """Whether the account is locked; a refusal for that reason is audited."""
    key = account(kind, row)
    if not lockout.is_locked(key):
        return False
    failed(row["email"], "locked", {kind: key}, origin)  # counts nothing while locked
    return True


def _from_ms(ms: int):
    from datetime import UTC, datetime

    return datetime.fromtimestamp(ms / 1000, UTC)


def check_credentials(email: str, password: str, kinds, origin: Actor) -> tuple[str, dict] | None:
    """``(kind, row)`` of the first kind whose account has this password and is not locked,
    else None (audited, and counted against each kind's account). Each kind costs a password
    check, found, locked or not."""
    email = email.strip().lower()
    found, accounts, reason = None, {}, "password"
    for kind in kinds:
        row = db.one(_FIND[kind], {"email": email})
        accounts[kind] = lockout.account(kind, row["id"] if row else None, email)
        stored = row["password_hash"] if row else None
        right = check_password(stored, password) and row["active"]
        if lockout.is_locked(accounts[kind]):
            reason = "locked"
        elif right and found is None:
            found = kind, row
    if found is None:
        failed(email, reason, accounts, origin)
    return found


def open_session(
    kind: str, row: dict, second_factor: str | None, origin: Actor
) -> tuple[sessions.Kind, str]:
    """Open a session for a human whose sign-in succeeded; answer the cookie to set."""
    lockout.succeeded(account(kind, row))
    details = {"kind": kind}
    if second_factor:
        details["second_factor"] = second_factor
    with db.transaction():
        token = sessions.create(sessions.KINDS[kind], row["id"], origin)
        audit.record(
            "login.succeeded", details, actor=origin.acting_as(kind, row["id"], row["email"])
        )
    return sessions.KINDS[kind], token


def check_second_factor(kind: str, row: dict, code: str | None, origin: Actor) -> str | None:
    """The second factor used (``otp``/``recovery_code``), None when none is needed;
    raises ``SecondFactorNeeded`` when a code is missing or wrong (a wrong one is counted)."""
    if kind != "admin" or not two_factor.is_enabled(row["id"]):
        return None
    if not code:
        raise SecondFactorNeeded(kind, row, wrong=False)
    used = two_factor.check(row["id"], code)
    if used is None:
        failed(row["email"], "two_factor", {kind: account(kind, row)}, origin)
        raise SecondFactorNeeded(kind, row, wrong=True)
    return used


def sign_in(
    email: str, password: str, kinds, code: str | None, origin: Actor
) -> tuple[str, dict, tuple] | None:
    """Check credentials (and the second factor) and open a session: ``(kind, row, cookie
    to set)``, or None when wrong; raises ``SecondFactorNeeded``."""
    found = check_credentials(email, password, kinds, origin)
    if found is None:
        return None
    kind, row = found
    used = check_second_factor(kind, row, code, origin)
    return kind, row, open_session(kind, row, used, origin)


def sign_out(caller) -> list[sessions.Kind]:
    """End the caller's session (if any); answer the session cookies to clear."""
    if caller is not None and caller.session_id:
        with db.transaction():
            sessions.end(sessions.KINDS[caller.kind], caller.session_id)
            audit.record("logout", {"session_id": caller.session_id}, actor=caller.actor)
        return [sessions.KINDS[caller.kind]]
    return [sessions.ADMIN, sessions.CUSTOMER]


def end_session(caller, session_id: str) -> list[sessions.Kind] | None:
    """End one of the caller's own sessions: None when it is not theirs, else the session
    cookies to clear (its own, when it is the current one: signing out)."""
    kind = sessions.KINDS[caller.kind]
    with db.transaction():
        if not sessions.end(kind, session_id, holder_id=caller.id):
            return None
        audit.record("session.revoked", {"session_id": session_id}, actor=caller.actor)
    return [kind] if session_id == caller.session_id else []


# The console's second step: a browser whose password was right may send a code for a while.
CHALLENGE_SECONDS = 300


def remember_challenge(browser_token: str, user_id: str) -> None:
    """The password was right: the browser holding ``browser_token`` (its sign-in cookie) may
    send a code for ``user_id`` for ``CHALLENGE_SECONDS``. Only the token's hash is stored."""
    db.execute("DELETE FROM two_factor_challenges WHERE expires_at < :now", {"now": now_iso()})
    db.execute(
        "INSERT INTO two_factor_challenges (token_hash, user_id, expires_at)"
        " VALUES (:hash, :user_id, :expires) ON CONFLICT (token_hash) DO UPDATE SET"
        " user_id = excluded.user_id, expires_at = excluded.expires_at",
        {
            "hash": db.sha256(browser_token),
            "user_id": user_id,
            "expires": iso_in(CHALLENGE_SECONDS),
        },
    )


def challenged_user(browser_token: str) -> dict | None:
    """The administrator (id, email, name, active) the browser may send a code for now."""
    return db.one(
        "SELECT u.id, u.email, u.name, u.active FROM two_factor_challenges c"
        " JOIN users u ON u.id = c.user_id WHERE c.token_hash = :hash AND c.expires_at > :now",
        {"hash": db.sha256(browser_token), "now": now_iso()},
    )


def forget_challenge(browser_token: str) -> None:
    """The code was right: the browser's challenge is spent."""
    db.execute(
        "DELETE FROM two_factor_challenges WHERE token_hash = :hash",
        {"hash": db.sha256(browser_token)},
    )


# One budget per address for every sign-in form (this API and the admin console).
LOGIN_LIMIT = "5 per minute"
LOGIN_SCOPE = "sign-in"
