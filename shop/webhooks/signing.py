"""Standard Webhooks signatures (https://www.standardwebhooks.com).

A secret is ``whsec_`` + base64 of 24 random bytes. Each attempt sends ``webhook-id`` (the
delivery's, the same on every attempt), ``webhook-timestamp`` (the attempt's, in Unix
seconds) and ``webhook-signature``: ``v1,`` + base64 of the HMAC-SHA256 of
``{id}.{timestamp}.{body}`` keyed with the secret's bytes, once per live secret, separated
by spaces (two during the 24 hours after a rotation).
"""

import base64
import hashlib
import hmac
import secrets

PREFIX = "whsec_"


def new_secret() -> str:
    """A fresh signing secret."""
    return PREFIX + base64.b64encode(secrets.token_bytes(24)).decode()


def signature(secret: str, message_id: str, timestamp: int, body: bytes) -> str:
    """One ``v1,<base64>`` signature of a message."""
    key = base64.b64decode(secret.removeprefix(PREFIX))
    signed = f"{message_id}.{timestamp}.".encode() + body
    return "v1," + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()


def headers(secrets_: list[str], message_id: str, timestamp: int, body: bytes) -> dict:
    """The three Standard Webhooks headers, signed with every secret given."""
    return {
        "webhook-id": message_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": " ".join(signature(s, message_id, timestamp, body) for s in secrets_),
    }
