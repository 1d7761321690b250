"""Two-factor sign-in (TOTP, RFC 6238) for administrators, with one-time recovery codes.

Set-up stores a new secret, not yet in force; a right code confirms it and gives 10 recovery
codes, shown once and stored as SHA-256. A code is accepted one time step either side of
now (30 s steps) and only if its step is later than the last one accepted, so no code works
twice; the update that records the step is conditional, so two nodes cannot both accept it.
"""

import base64
import io
import re
import secrets

import pyotp
import segno

from shop import audit, db
from shop.auth import sessions
from shop.auth.keys.events import CLI_ACTOR
from shop.auth.passwords import check_password
from shop.clock import now, now_iso
from shop.errors import Conflict, Invalid
from shop.site import settings

ISSUER_FALLBACK = "shop"
RECOVERY_CODES = 10
# One budget per address for turning it off, a password and code check (this API and the
# console alike): ``limiter.shared_limit(TURN_OFF_LIMIT, scope=TURN_OFF_SCOPE)``.
TURN_OFF_LIMIT = "5 per minute"
TURN_OFF_SCOPE = "two-factor-off"
_CODE_RE = re.compile(r"\d{6}")


def state(user_id: str) -> dict | None:
    """The user's two-factor row, or None."""
    return db.one(
        "SELECT user_id, secret, enabled_at, last_step FROM user_two_factor WHERE user_id = :id",
        {"id": user_id},
    )


def is_enabled(user_id: str) -> bool:
    """Whether two-factor sign-in is on for the user."""
    row = state(user_id)
    return bool(row and row["enabled_at"])


def start(user_id: str, email: str) -> dict:
    """Store a new pending secret (replacing a pending one); answer what the app must show."""
    secret = pyotp.random_base32()
    db.execute(
        "INSERT INTO user_two_factor (user_id, secret, created_at, enabled_at, last_step)"
        " VALUES (:id, :secret, :now, NULL, 0) ON CONFLICT (user_id) DO UPDATE SET"
        " secret = excluded.secret, created_at = excluded.created_at, enabled_at = NULL,"
        " last_step = 0",
        {"id": user_id, "secret": secret, "now": now_iso()},
    )
    return _shown(secret, email)


def _shown(secret: str, email: str) -> dict:
    """What the authenticator app must be shown for ``secret``: the key, its URI, a QR code."""
    issuer = settings.current()["shop_name"] or ISSUER_FALLBACK
    uri = pyotp.TOTP(secret).provisioning_uri(name=email, issuer_name=issuer)
    return {"secret": secret, "otpauth_uri": uri, "qr_svg": qr_svg(uri)}


def qr_svg(text: str) -> str:
    """A QR code of ``text`` as an SVG document, made here (nothing leaves the server)."""
    out = io.BytesIO()
    segno.make(text, error="m").save(out, kind="svg", scale=5, xmldecl=False, svgns=True)
    return out.getvalue().decode()


def _step_of(secret: str, code: str) -> int | None:
    """The time step (now ±1) whose code ``code`` is, or None."""
    if not _CODE_RE.fullmatch(code):
        return None
    totp = pyotp.TOTP(secret)
    current = totp.timecode(now())
    found = None
    for step in (current - 1, current, current + 1):
        expected = totp.generate_otp(step)
        if secrets.compare_digest(expected, code):
            found = step
    return found


def use_code(user_id: str, code: str, *, pending: bool = False) -> bool:
    """Accept a TOTP code once (the secret in force, or the pending one when ``pending``)."""
    row = state(user_id)
    if row is None or bool(row["enabled_at"]) == pending:
        return False
    step = _step_of(row["secret"], code.strip().replace(" ", ""))
    if step is None or step <= row["last_step"]:
        return False
    return bool(
        db.execute(
            "UPDATE user_two_factor SET last_step = :step"
            " WHERE user_id = :id AND last_step < :step AND secret = :secret",
            {"step": step, "id": user_id, "secret": row["secret"]},
        )
    )


def _normal_recovery(code: str) -> str:
    return code.strip().lower().replace(" ", "").replace("-", "")


def use_recovery_code(user_id: str, code: str) -> bool:
    """Accept a recovery code once."""
    normal = _normal_recovery(code)
    if not normal or len(normal) > 64:
        return False
    return bool(
        db.execute(
            "UPDATE user_recovery_codes SET used_at = :now"
            " WHERE user_id = :id AND code_hash = :hash AND used_at IS NULL",
            {"now": now_iso(), "id": user_id, "hash": db.sha256(normal)},
        )
    )


def check(user_id: str, code: str) -> str | None:
    """Accept a TOTP code or a recovery code once: ``"otp"``, ``"recovery_code"`` or None."""
    if use_code(user_id, code):
        return "otp"
    if use_recovery_code(user_id, code):
        return "recovery_code"
    return None


def confirm(user_id: str) -> list[str]:
    """Put the pending secret in force (its code was just accepted); answer the recovery codes.

    Call inside a transaction, after ``use_code(..., pending=True)``.
    """
    db.execute(
        "UPDATE user_two_factor SET enabled_at = :now WHERE user_id = :id",
        {"now": now_iso(), "id": user_id},
    )
    db.execute("DELETE FROM user_recovery_codes WHERE user_id = :id", {"id": user_id})
    codes = []
    for _ in range(RECOVERY_CODES):
        raw = base64.b32encode(secrets.token_bytes(10)).decode().lower()  # 80 bits
        codes.append(f"{raw[:4]}-{raw[4:8]}-{raw[8:12]}-{raw[12:]}")
    db.execute_many(
        "INSERT INTO user_recovery_codes (user_id, code_hash, used_at) VALUES (:id, :hash, NULL)",
        [{"id": user_id, "hash": db.sha256(_normal_recovery(c))} for c in codes],
    )
    return codes


def recovery_codes_left(user_id: str) -> int:
    """How many recovery codes the user has not used."""
    return db.value(
        "SELECT COUNT(*) FROM user_recovery_codes WHERE user_id = :id AND used_at IS NULL",
        {"id": user_id},
    )


def turn_off(user_id: str) -> None:
    """Remove the secret and the recovery codes (inside the caller's transaction)."""
    db.execute("DELETE FROM user_two_factor WHERE user_id = :id", {"id": user_id})
    db.execute("DELETE FROM user_recovery_codes WHERE user_id = :id", {"id": user_id})


# The use cases of the API and the console (the caller is the signed-in administrator) ----


def required_by_settings() -> bool:
    """Whether the site setting ``require_two_factor`` is on."""
    return bool(settings.current()["require_two_factor"])


def status(user_id: str) -> dict:
    """What the API says about a user's two-factor sign-in."""
    row = state(user_id)
    enabled = bool(row and row["enabled_at"])
    return {
        "enabled": enabled,
        "enabled_at": row["enabled_at"] if enabled else None,
        "recovery_codes_left": recovery_codes_left(user_id) if enabled else 0,
        "required": required_by_settings(),
    }


def set_up(caller) -> dict:
    """Start (or restart) setting up; 409 when already on."""
    if is_enabled(caller.id):
        raise Conflict("Two-factor sign-in is already on: turn it off first to set up another app.")
    with db.transaction():
        started = start(caller.id, caller.email)
        audit.record("two_factor.setup_started", {"user_id": caller.id}, actor=caller.actor)
    return started


def pending_setup(caller) -> dict | None:
    """The set-up in progress (a secret not yet confirmed), shown again; None when none.

    The console keeps it until it is confirmed or cancelled, so the entry already scanned
    stays the right one after a wrong code or a reload."""
    row = state(caller.id)
    if row is None or row["enabled_at"]:
        return None
    return _shown(row["secret"], caller.email)


def cancel_setup(caller) -> bool:
    """Drop the set-up in progress (its secret never was in force); False when none."""
    with db.transaction():
        dropped = db.execute(
            "DELETE FROM user_two_factor WHERE user_id = :id AND enabled_at IS NULL",
            {"id": caller.id},
        )
        if dropped:
            audit.record("two_factor.setup_cancelled", {"user_id": caller.id}, actor=caller.actor)
    return bool(dropped)


def confirm_setup(caller, code: str) -> list[str]:
    """Turn two-factor sign-in on with a code of the new app; answer the recovery codes.

    Ends every other session of the caller, as a password change does: none of them passed
    the second factor."""
    row = state(caller.id)
    if row is None or row["enabled_at"]:
        raise Conflict("Nothing to confirm: set up two-factor sign-in first.")
    with db.transaction():
        if not use_code(caller.id, code, pending=True):
            raise Invalid("otp: this is not the app's current code; check the phone's clock.")
        codes = confirm(caller.id)
        ended = sessions.end_all(sessions.ADMIN, caller.id, caller.session_id)
        audit.record(
            "two_factor.enabled",
            {"user_id": caller.id, "other_sessions_ended": ended},
            actor=caller.actor,
        )
    return codes


def turn_off_with(caller, password: str, code: str) -> None:
    """Turn two-factor sign-in off with the password and a code; 400 naming what is wrong."""
    if not is_enabled(caller.id):
        raise Conflict("Two-factor sign-in is not on.")
    if required_by_settings():
        raise Conflict("The shop's settings require two-factor sign-in of administrators.")
    stored = db.value("SELECT password_hash FROM users WHERE id = :id", {"id": caller.id})
    if not check_password(stored, password):
        raise Invalid("password: does not match your password.")
    with db.transaction():
        if check(caller.id, code) is None:
            raise Invalid("otp: not a current code or an unused recovery code.")
        turn_off(caller.id)
        audit.record("two_factor.disabled", {"user_id": caller.id}, actor=caller.actor)


def reset_by_operator(email: str) -> dict | None:
    """The owner's way back for a lost device (``flask users reset-two-factor``): remove the
    user's second factor (on or pending) and end all their sessions, audited as the CLI's.
    None when no administrator has that email."""
    user = db.one("SELECT id FROM users WHERE LOWER(email) = LOWER(:e)", {"e": email})
    return reset(user["id"], CLI_ACTOR) if user is not None else None


def reset(user_id: str, actor) -> dict:
    """Remove an administrator's second factor (on or pending) and end all their sessions,
    audited as ``actor``'s (the CLI, or an administrator in the console)."""
    with db.transaction():
        user = db.one("SELECT id, email FROM users WHERE id = :id", {"id": user_id})
        was_on = is_enabled(user["id"])
        turn_off(user["id"])
        ended = sessions.end_all(sessions.ADMIN, user["id"])
        audit.record(
            "two_factor.reset",
            {"user_id": user["id"], "was_on": was_on, "sessions_ended": ended},
            actor=actor,
        )
    return {"email": user["email"], "was_on": was_on, "sessions_ended": ended}
