"""What may go into an API key: the input rules every path that makes or changes one applies
(the JSON API, the console and the CLI), and the ceiling of the owner's permissions.

Each parser raises ``ValueError`` whose text starts with the field it is about; ``issue_input``
and ``roll_input`` turn a form or a body into stored values, or a 400 with that text.
"""

import ipaddress
import re
from datetime import datetime

from shop import db
from shop.auth.caller import Caller
from shop.clock import iso, now, utc
from shop.errors import Forbidden, Invalid
from shop.permissions import ALL_SCOPES, OWNER_PERMISSIONS_SQL, SCOPES, rights_of

_SCOPE_RE = re.compile(r"(read|write):[a-z_]+")
MAX_GRACE_SECONDS = 7 * 24 * 3600
DEFAULT_GRACE_SECONDS = 24 * 3600
MAX_ALLOWED_IPS = 100
LABEL_LENGTH = (1, 100)


class ScopeError(ValueError):
    """A scope list that cannot be granted; the message names the offending scope."""


def parse_scopes(scopes) -> list[str]:
    """Validate a scope list (a list, or a string split on commas and spaces)."""
    if isinstance(scopes, str):
        scopes = [s for s in re.split(r"[\s,]+", scopes) if s]
    if not scopes:
        raise ScopeError("scopes: give at least one scope, such as read:product.")
    result = []
    for scope in scopes:
        if scope not in SCOPES:
            if _SCOPE_RE.fullmatch(scope or ""):
                reason = f"{scope.split(':', 1)[1]} is not a scopable resource"
            else:
                reason = "scopes have the form read:<resource> or write:<resource>"
            raise ScopeError(
                f"scopes: {scope!r} is not a valid scope ({reason}); valid scopes: "
                + ", ".join(ALL_SCOPES)
                + "."
            )
        if scope not in result:
            result.append(scope)
    return sorted(result)


def grantable_scopes(caller: Caller) -> list[str]:
    """The scopes ``caller`` may put on a key: those whose permissions they all hold."""
    return [scope for scope in ALL_SCOPES if SCOPES[scope] <= caller.permissions]


_OWNER_PERMISSIONS = f"SELECT {OWNER_PERMISSIONS_SQL} FROM users u WHERE u.id = :id"


def check_ceiling(scopes, owner_id: str | None, actor: Caller | None = None) -> None:
    """403 naming the first scope beyond the key owner's current permissions.

    The one ceiling of every path that sets a key's scopes (create, roll): it is the key's
    owner's, whoever sets them (the owner role rolling an editor's key grants no more than
    the editor holds), and it is ``rights_of``, the rule a key's requests are checked by. A
    CLI key (no owner) holds exactly its scopes.
    """
    if owner_id is None:
        return
    held = db.one(_OWNER_PERMISSIONS, {"id": owner_id}) or {}
    for scope in scopes:
        rights = rights_of(
            {
                "scopes": scope,
                "source": "admin",
                "role_permissions": held.get("role_permissions"),
                "extra_permissions": held.get("extra_permissions"),
            }
        )
        lacking = sorted(SCOPES[scope] - rights)
        if lacking:
            who = "you lack" if actor is not None and actor.id == owner_id else "its owner lacks"
            raise Forbidden(
                f"Access denied: you cannot grant the scope {scope} to this key"
                f" ({who} {', '.join(lacking)}).",
            )


def parse_expiry(value: str) -> str:
    """A future ISO 8601 date or date-time (UTC when no zone is given), as stored."""
    try:
        moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except (AttributeError, ValueError):
        raise ValueError(
            "expires_at: use an ISO 8601 date or date-time, such as 2027-01-31."
        ) from None
    try:
        moment = utc(moment)
    except ValueError as error:
        raise ValueError(f"expires_at: {error}") from None
    if moment <= now():
        raise ValueError("expires_at: must be in the future.")
    return iso(moment)


def parse_allowed_ips(values) -> str | None:
    """Validate ``allowed_ips`` (addresses and CIDR ranges, IPv4 or IPv6) as stored.

    None or an empty list means "from anywhere". A range with host bits set is refused,
    naming the range it probably meant.
    """
    if values is None:
        return None
    if isinstance(values, str) or not isinstance(values, list | tuple):
        raise ValueError("allowed_ips: give a list of addresses or CIDR ranges, or null.")
    if len(values) > MAX_ALLOWED_IPS:
        raise ValueError(f"allowed_ips: at most {MAX_ALLOWED_IPS} entries.")
    result = []
    for value in values:
        text = value.strip() if isinstance(value, str) else ""
        try:
            network = ipaddress.ip_network(text, strict=True)
        except ValueError:
            try:
                meant = ipaddress.ip_network(text, strict=False)
            except ValueError:
                raise ValueError(
                    f"allowed_ips: {value!r} is not an IPv4 or IPv6 address or CIDR range"
                    " (such as 203.0.113.7, 10.0.0.0/8 or 2001:db8::/32)."
                ) from None
            raise ValueError(
                f"allowed_ips: {value!r} has bits set after the prefix; did you mean {meant}?"
            ) from None
        if str(network) not in result:
            result.append(str(network))
    return " ".join(result) or None


def _bad_input(parse, *args):
    """``parse(*args)``, or 400 with its message."""
    try:
        return parse(*args)
    except ValueError as error:
        raise Invalid(str(error)) from None


def issue_input(data: dict) -> dict:
    """The stored values of a new key from its input (``label``, ``scopes``, optional
    ``expires_at``, ``allowed_ips`` and ``rate_limit_per_minute``): 400 naming the field."""
    label = data["label"]
    if not LABEL_LENGTH[0] <= len(label) <= LABEL_LENGTH[1]:
        raise Invalid(f"label: Length must be between {LABEL_LENGTH[0]} and {LABEL_LENGTH[1]}.")
    expires = data.get("expires_at")
    return {
        "label": label.strip() or label,
        "scopes": _bad_input(parse_scopes, data["scopes"]),
        "expires_at": _bad_input(parse_expiry, expires) if expires else None,
        "allowed_ips": _bad_input(parse_allowed_ips, data.get("allowed_ips")),
        "rate_limit": data.get("rate_limit_per_minute"),
    }


def roll_scopes(data: dict) -> list[str] | None:
    """The successor's scopes of a roll's input (None: the old key's): 400 naming a bad one."""
    if data.get("scopes") is None:
        return None
    return _bad_input(parse_scopes, data["scopes"])


def allowed_ips_input(values) -> str | None:
    """``parse_allowed_ips``, or 400 with its message."""
    return _bad_input(parse_allowed_ips, values)
