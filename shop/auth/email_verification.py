"""A customer proves they hold their e-mail address (issue 38): ``request`` mails a link with
a token of 32 random bytes (stored as its SHA-256, valid ``EMAIL_VERIFICATION_LIFETIME``
seconds, at most ``PER_HOUR`` an hour); ``confirm`` marks the address verified
(``customers.email_verified_at``) and runs the caller's ``on_verified(customer_id, email)``
in the same transaction (the API attaches the guest orders placed with it:
``orders/guests.attach``). A token works once, and only while the customer's address is
still the one it was sent to.
"""

import secrets
from datetime import timedelta

from flask import current_app

from shop import audit, db, mail
from shop.actor import Actor
from shop.clock import iso, now, now_iso
from shop.errors import Throttled

PER_HOUR = 3
LIFETIME = 24 * 3600


def _link(token: str) -> str:
    """The link of the e-mail: ``SHOP_EMAIL_VERIFICATION_URL`` with ``{token}``, by default a
    page of the storefront at ``/verify-email``; never from a request's Host."""
    config = current_app.config
    base = config["PUBLIC_URL"] or f"http://127.0.0.1:{config['PORT']}"
    template = config.get("EMAIL_VERIFICATION_URL") or base + "/verify-email?token={token}"
    return template.replace("{token}", token)


def request(customer_id: str, email: str, name: str | None, origin: Actor) -> None:
    """Mail ``email`` (the customer's) a verification link; a 429 past ``PER_HOUR``."""
    moment = now()
    with db.transaction():
        db.lock(f"email-verification:{customer_id}")
        recent = db.value(
            "SELECT COUNT(*) FROM email_verifications"
            " WHERE customer_id = :id AND created_at > :since",
            {"id": customer_id, "since": iso(moment - timedelta(hours=1))},
        )
        if recent >= PER_HOUR:
            raise Throttled(
                f"At most {PER_HOUR} verification e-mails an hour; try later.",
                {"Retry-After": "3600"},
            )
        token = secrets.token_urlsafe(32)
        db.execute(
            "INSERT INTO email_verifications (id, token_hash, customer_id, email, created_at,"
            " expires_at) VALUES (:id, :hash, :customer, :email, :now, :expires)",
            {
                "id": db.new_id(),
                "hash": db.sha256(token),
                "customer": customer_id,
                "email": email,
                "now": iso(moment),
                "expires": iso(moment + timedelta(seconds=LIFETIME)),
            },
        )
        mail.queue_rendered(
            email,
            "Confirm your e-mail address",
            "email_verification",
            name=name,
            email=email,
            link=_link(token),
            hours=LIFETIME // 3600,
        )
        audit.record(
            "customer.email_verification_requested",
            {"customer_id": customer_id},
            actor=origin.acting_as("customer", customer_id, email),
        )


def confirm(token: str, origin: Actor, on_verified=None) -> bool:
    """Verify the address a token was sent to; answer False for an unknown, used or
    expired token, or one whose customer's address has changed or been erased."""
    if not token or len(token) > 100:
        return False
    with db.transaction():
        row = db.one(
            "SELECT v.id, v.customer_id, v.email FROM email_verifications v"
            " JOIN customers c ON c.id = v.customer_id AND c.email = v.email"
            " WHERE v.token_hash = :hash AND v.used_at IS NULL AND v.expires_at > :now",
            {"hash": db.sha256(token), "now": now_iso()},
        )
        if row is None:
            return False
        moment = now_iso()
        db.execute(
            "UPDATE email_verifications SET used_at = :now WHERE customer_id = :customer"
            " AND used_at IS NULL",
            {"now": moment, "customer": row["customer_id"]},
        )
        db.execute(
            "UPDATE customers SET email_verified_at = :now WHERE id = :id"
            " AND email_verified_at IS NULL",
            {"now": moment, "id": row["customer_id"]},
        )
        attached = on_verified(row["customer_id"], row["email"]) if on_verified else 0
        audit.record(
            "customer.email_verified",
            {"customer_id": row["customer_id"], "guest_orders_attached": attached},
            actor=origin.acting_as("customer", row["customer_id"], row["email"]),
        )
    return True
