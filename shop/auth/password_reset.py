"""Password reset by e-mail: the use case the JSON API and the console share.

A request always looks the same to the caller. When the account exists (and has not had
``PER_ACCOUNT_PER_HOUR`` requests in the last hour) a token of 32 random bytes is stored as
its SHA-256, valid ``PASSWORD_RESET_LIFETIME`` seconds, and a link carrying it is queued for
mail in the same transaction. Confirming sets the password, uses up every token of the
account, ends every session of the account and lifts its sign-in lockout.
"""

import secrets
from datetime import timedelta

from flask import current_app

from shop import audit, db, mail
from shop.actor import Actor
from shop.auth import lockout, sessions
from shop.auth.passwords import hash_password
from shop.clock import iso, now, now_iso

PER_ACCOUNT_PER_HOUR = 3
# One budget per address for asking, in the API and the console alike:
# ``limiter.shared_limit(REQUEST_LIMIT, scope=REQUEST_SCOPE)``.
REQUEST_LIMIT = "5 per minute;20 per hour"
REQUEST_SCOPE = "password-reset-request"
# What every request is told, whether or not the account exists.
ACCEPTED = (
    "If an account with this email exists, we have sent it a link to choose a new password."
    " It works once, within 30 minutes."
)

_TABLES = {"admin": "users", "customer": "customers"}
_FIND = {
    "admin": "SELECT id, email, name FROM users WHERE email = :email AND active = 1",
    "customer": (
        "SELECT id, email, name FROM customers"
        " WHERE email = :email AND active = 1 AND erased_at IS NULL AND password_hash IS NOT NULL"
    ),
}


def _link(kind: str, token: str) -> str:
    """The link of a reset e-mail, from the settings only: never from the request's Host
    (anyone could send a victim a link to their own server). Without SHOP_PUBLIC_URL (only
    allowed without SMTP_URL, in development) it points at this service on 127.0.0.1. A
    customer's: ``CUSTOMER_RESET_URL``, by default the storefront's page."""
    config = current_app.config
    base = config["PUBLIC_URL"] or f"http://127.0.0.1:{config['PORT']}"
    if kind == "admin":
        return f"{base}/admin/password-reset?token={token}"
    # The storefront's page when the shop has one, else a page of the shop's own front end.
    page = config["STOREFRONT_PREFIX"] + "/account" if config.get("STOREFRONT") else ""
    template = config["CUSTOMER_RESET_URL"] or base + page + "/password-reset?token={token}"
    return template.replace("{token}", token)


def request_reset(email: str, kind: str, origin: Actor) -> None:
    """Send a reset link to ``email`` if it is a ``kind`` account; say nothing either way.
    ``origin``: the request's address, audited."""
    email = email.strip().lower()
    row = db.one(_FIND[kind], {"email": email})
    if row is None:
        return
    moment = now()
    actor = origin.acting_as("anonymous", label=email)
    with db.transaction():
        db.lock(f"password-reset:{kind}:{row['id']}")
        recent = db.value(
            "SELECT COUNT(*) FROM password_resets"
            " WHERE kind = :kind AND holder_id = :id AND created_at > :since",
            {"kind": kind, "id": row["id"], "since": iso(moment - timedelta(hours=1))},
        )
        if recent >= PER_ACCOUNT_PER_HOUR:
            audit.record("password_reset.limited", {"kind": kind, "id": row["id"]}, actor=actor)
            return
        token = secrets.token_urlsafe(32)
        lifetime = current_app.config["PASSWORD_RESET_LIFETIME"]
        db.execute(
            "INSERT INTO password_resets (id, token_hash, kind, holder_id, created_at,"
            " expires_at, used_at) VALUES (:id, :hash, :kind, :holder, :now, :expires, NULL)",
            {
                "id": db.new_id(),
                "hash": db.sha256(token),
                "kind": kind,
                "holder": row["id"],
                "now": iso(moment),
                "expires": iso(moment + timedelta(seconds=lifetime)),
            },
        )
        mail.queue_rendered(
            email,
            "Reset your password",
            "password_reset",
            name=row["name"],
            email=email,
            link=_link(kind, token),
            minutes=lifetime // 60,
        )
        audit.record("password_reset.requested", {"kind": kind, "id": row["id"]}, actor=actor)


def confirm(token: str, new_password: str, origin: Actor) -> str | None:
    """Set a new password with a reset token (from ``origin``, the request's address);
    answer the account's kind, or None when the token is unknown, used or expired."""
    if not token or len(token) > 100:
        return None
    new_hash = hash_password(new_password)
    with db.transaction():
        row = db.one(
            "SELECT id, kind, holder_id FROM password_resets"
            " WHERE token_hash = :hash AND used_at IS NULL AND expires_at > :now",
            {"hash": db.sha256(token), "now": now_iso()},
        )
        if row is None:
            return None
        kind, holder = row["kind"], row["holder_id"]
        used = db.execute(
            "UPDATE password_resets SET used_at = :now"
            " WHERE kind = :kind AND holder_id = :holder AND used_at IS NULL",
            {"now": now_iso(), "kind": kind, "holder": holder},
        )
        changed = db.execute(
            f"UPDATE {_TABLES[kind]} SET password_hash = :hash, updated_at = :now"
            " WHERE id = :id AND active = 1",
            {"hash": new_hash, "now": now_iso(), "id": holder},
        )
        if not used or not changed:
            return None
        email = db.value(f"SELECT email FROM {_TABLES[kind]} WHERE id = :id", {"id": holder})
        ended = sessions.end_all(sessions.KINDS[kind], holder)
        audit.record(
            "password.reset",
            {"kind": kind, "id": holder, "sessions_ended": ended},
            actor=origin.acting_as(kind, holder, email),
        )
    lockout.clear(lockout.account(kind, holder))
    return kind
