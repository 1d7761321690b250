"""Server-side sessions of administrators (``user_session``) and customers
(``customer_session``).

The cookie holds 32 random bytes (base64url); the table holds only their SHA-256. A session
lives ``SESSION_LIFETIME`` seconds after its last refresh, and never more than
``SESSION_MAX_LIFETIME`` seconds after it was opened (OWASP's absolute timeout); a request
refreshes it (row and cookie) at most once per ``SESSION_REFRESH`` seconds, so ordinary
reads write nothing.
Another User-Agent ends the session; another address is audited and the session goes on.
"""

import functools
import secrets
from dataclasses import dataclass
from datetime import timedelta

import ua_parser
from flask import current_app

from shop import audit, db
from shop.actor import Actor
from shop.auth.caller import Caller
from shop.clock import iso, now, parse


@dataclass(frozen=True)
class Kind:
    """Where one kind of human's sessions live."""

    name: str
    table: str
    holder: str
    cookie: str


ADMIN = Kind("admin", "user_session", "user_id", "shop_admin_session")
CUSTOMER = Kind("customer", "customer_session", "customer_id", "shop_customer_session")
KINDS = {k.name: k for k in (ADMIN, CUSTOMER)}


def _agent(origin: Actor) -> str:
    """The User-Agent as a session keeps it (at most 512 characters)."""
    return (origin.user_agent or "")[:512]


@dataclass(frozen=True, slots=True)
class Resolved:
    """A session cookie read: the caller (None when the session is over, with the
    ``problem`` to tell), and whether the cookie is to be sent again (``renew``)."""

    caller: Caller | None
    problem: str | None = None
    renew: bool = False


_RESOLVE = {
    "admin": """
        SELECT s.id AS session_id, s.user_agent, s.ip, s.last_seen_at, s.expires_at,
               s.created_at, u.id, u.email, u.name, u.active, r.name AS role,
               (SELECT t.enabled_at FROM user_two_factor t WHERE t.user_id = u.id)
                 AS two_factor_at,
               (SELECT st.value FROM settings st WHERE st.key = 'require_two_factor')
                 AS two_factor_required,
               (SELECT string_agg(rp.permission, ' ') FROM role_permissions rp
                 WHERE rp.role_id = u.role_id) AS role_permissions,
               (SELECT string_agg(up.permission, ' ') FROM user_permissions up
                 WHERE up.user_id = u.id) AS extra_permissions
        FROM user_session s
        JOIN users u ON u.id = s.user_id
        JOIN roles r ON r.id = u.role_id
        WHERE s.token_hash = :token_hash""",
    "customer": """
        SELECT s.id AS session_id, s.user_agent, s.ip, s.last_seen_at, s.expires_at,
               s.created_at, c.id, c.email, c.name, c.active, NULL AS role, NULL AS two_factor_at,
               NULL AS two_factor_required,
               NULL AS role_permissions, NULL AS extra_permissions
        FROM customer_session s
        JOIN customers c ON c.id = s.customer_id
        WHERE s.token_hash = :token_hash""",
}


def create(kind: Kind, holder_id: str, origin: Actor) -> str:
    """Open a session for a human signing in from ``origin``; answer the cookie value (shown to
    nobody else)."""
    token = secrets.token_urlsafe(32)
    moment = now()
    config = current_app.config
    lifetime = min(config["SESSION_LIFETIME"], config["SESSION_MAX_LIFETIME"])
    db.execute(
        f"INSERT INTO {kind.table} (id, token_hash, {kind.holder}, created_at, last_seen_at,"
        " expires_at, user_agent, ip)"
        " VALUES (:id, :token_hash, :holder, :now, :now, :expires, :ua, :ip)",
        {
            "id": db.new_id(),
            "token_hash": db.sha256(token),
            "holder": holder_id,
            "now": iso(moment),
            "expires": iso(moment + timedelta(seconds=lifetime)),
            "ua": _agent(origin),
            "ip": origin.ip,
        },
    )
    return token


def resolve(kind: Kind, token: str, origin: Actor) -> Resolved:
    """The caller a session cookie sent from ``origin`` stands for, if any."""
    if not token or len(token) > 100:
        return Resolved(None)
    row = db.one(_RESOLVE[kind.name], {"token_hash": db.sha256(token)})
    if row is None:
        return Resolved(None, "Your session has ended; sign in again.")
    moment = now()
    cap = timedelta(seconds=current_app.config["SESSION_MAX_LIFETIME"])
    if (
        parse(row["expires_at"]) <= moment
        or parse(row["created_at"]) + cap <= moment
        or (not row["active"])
    ):
        db.execute(f"DELETE FROM {kind.table} WHERE id = :id", {"id": row["session_id"]})
        return Resolved(None, "Your session has expired; sign in again.")
    caller = Caller(
        kind=kind.name,
        id=row["id"],
        email=row["email"],
        name=row["name"],
        role=row["role"],
        permissions=frozenset(
            f"{row['role_permissions'] or ''} {row['extra_permissions'] or ''}".split()
        ),
        session_id=row["session_id"],
        needs_two_factor=not row["two_factor_at"] and row["two_factor_required"] == "true",
        ip=origin.ip,
        user_agent=origin.user_agent,
    )
    if row["user_agent"] != _agent(origin):
        with db.transaction():
            db.execute(f"DELETE FROM {kind.table} WHERE id = :id", {"id": row["session_id"]})
            audit.record(
                "session.user_agent_mismatch",
                {"session_id": row["session_id"], "user_agent_at_login": row["user_agent"]},
                actor=caller.actor,
            )
        return Resolved(None, "Your session was ended because the browser changed; sign in again.")
    ip_changed = row["ip"] != origin.ip
    refresh_due = moment - parse(row["last_seen_at"]) >= timedelta(
        seconds=current_app.config["SESSION_REFRESH"]
    )
    if ip_changed or refresh_due:
        with db.transaction():
            if ip_changed:
                audit.record(
                    "session.ip_changed",
                    {"session_id": row["session_id"], "from": row["ip"], "to": origin.ip},
                    actor=caller.actor,
                )
            expires = min(
                moment + timedelta(seconds=current_app.config["SESSION_LIFETIME"]),
                parse(row["created_at"])
                + timedelta(seconds=current_app.config["SESSION_MAX_LIFETIME"]),
            )
            db.execute(
                f"UPDATE {kind.table} SET last_seen_at = :now, expires_at = :expires, ip = :ip"
                " WHERE id = :id",
                {
                    "now": iso(moment),
                    "expires": iso(expires),
                    "ip": origin.ip,
                    "id": row["session_id"],
                },
            )
    return Resolved(caller, renew=refresh_due)


def end(kind: Kind, session_id: str, holder_id: str | None = None) -> int:
    """End one session (only if it is ``holder_id``'s, when given); answer 0 or 1."""
    if holder_id is None:
        return db.execute(f"DELETE FROM {kind.table} WHERE id = :id", {"id": session_id})
    return db.execute(
        f"DELETE FROM {kind.table} WHERE id = :id AND {kind.holder} = :holder",
        {"id": session_id, "holder": holder_id},
    )


def end_all(kind: Kind, holder_id: str, keep_session_id: str | None = None) -> int:
    """End every session of a human but ``keep_session_id``; answer how many ended."""
    return db.execute(
        f"DELETE FROM {kind.table} WHERE {kind.holder} = :holder AND id <> :keep",
        {"holder": holder_id, "keep": keep_session_id or ""},
    )


def live(kind: Kind, holder_id: str) -> list[dict]:
    """A human's live sessions, newest first, each with its device in words."""
    rows = db.query(
        f"SELECT id, created_at, last_seen_at, expires_at, user_agent, ip FROM {kind.table}"
        f" WHERE {kind.holder} = :holder AND expires_at > :now ORDER BY last_seen_at DESC",
        {"holder": holder_id, "now": iso(now())},
    )
    for row in rows:
        row["device"] = device_name(row["user_agent"])
    return rows


@functools.lru_cache(maxsize=256)
def device_name(user_agent: str) -> str:
    """A User-Agent in words, as ua-parser reads it: ``Firefox on Mac OS X``."""
    if not user_agent:
        return "Unknown device"
    parsed = ua_parser.parse(user_agent)
    browser = parsed.user_agent.family if parsed.user_agent else None
    system = parsed.os.family if parsed.os else None
    browser = None if browser in (None, "Other") else browser
    system = None if system in (None, "Other") else system
    if browser and system:
        return f"{browser} on {system}"
    return browser or system or "Unknown device"


def set_cookie(response, kind: Kind, token: str) -> None:
    """Put a session cookie on a response: HttpOnly, Secure, SameSite=Strict."""
    response.set_cookie(
        kind.cookie,
        token,
        max_age=current_app.config["SESSION_LIFETIME"],
        path="/",
        secure=current_app.config["COOKIE_SECURE"],
        httponly=True,
        samesite="Strict",
    )


def clear_cookie(response, kind: Kind) -> None:
    """Remove a session cookie from the browser."""
    response.delete_cookie(
        kind.cookie,
        path="/",
        secure=current_app.config["COOKIE_SECURE"],
        httponly=True,
        samesite="Strict",
    )
