"""The shape of a Stripe event: a validly signed event is still checked before it is used.

``checked`` answers an event's type and object, or a 400 naming the first field a handler
(``payments/stripe/intents.py``) would read that is not as Stripe sends it; nothing is
applied then. Types the shop does not handle are only recorded.
"""

from shop.errors import Invalid

_WANT = {
    "text": ("a non-empty string", lambda v: isinstance(v, str) and v != ""),
    "string": ("a string", lambda v: isinstance(v, str)),
    "count": ("a whole number, 0 or more", lambda v: type(v) is int and v >= 0),
    "object": ("an object", lambda v: isinstance(v, dict)),
    "list": ("a list", lambda v: isinstance(v, list)),
    "flag": ("true or false", lambda v: isinstance(v, bool)),
}
# Per event type, the fields its handler reads: (path, kind, may be null or absent).
_META = [
    ("metadata", "object", True),
    ("metadata.order_id", "string", True),
    ("metadata.order_number", "string", True),
]
_SHAPES = {
    "payment_intent.succeeded": [
        ("id", "text", False),
        ("amount_received", "count", False),
        ("currency", "text", False),
        *_META,
    ],
    "payment_intent.payment_failed": [
        ("id", "text", False),
        ("last_payment_error", "object", True),
        ("last_payment_error.message", "string", True),
        *_META,
    ],
    "payment_intent.canceled": [
        ("id", "text", False),
        ("cancellation_reason", "string", True),
        *_META,
    ],
    "charge.refunded": [
        ("payment_intent", "text", False),
        ("amount_refunded", "count", False),
        ("refunds", "object", True),
        ("refunds.data", "list", True),
        ("refunds.has_more", "flag", True),
        *_META,
    ],
}
_REFUND = [
    ("id", "text", False),
    ("amount", "count", False),
    ("status", "string", True),
    ("created", "count", True),
    ("metadata", "object", True),
    ("metadata.refund_id", "string", True),
]


def checked(event: dict) -> tuple[str, dict]:
    """The event's type and object; a 400 naming the first field a handler would read that
    is not as Stripe sends it (types we do not handle are only recorded)."""
    kind = event.get("type")
    if not isinstance(kind, str) or not kind:
        _malformed("type", "text")
    if kind not in _SHAPES:
        return kind, {}
    data = event.get("data")
    if not isinstance(data, dict) or not isinstance(data.get("object"), dict):
        _malformed("data.object", "object")
    obj = data["object"]
    _check(obj, _SHAPES[kind], "data.object")
    for n, item in enumerate(((obj.get("refunds") or {}).get("data")) or []):
        if not isinstance(item, dict):
            _malformed(f"data.object.refunds.data[{n}]", "object")
        _check(item, _REFUND, f"data.object.refunds.data[{n}]")
    return kind, obj


def _check(obj: dict, shape: list, where: str) -> None:
    for path, kind, optional in shape:
        value, parent = obj, None
        for name in path.split("."):
            parent, value = value, value.get(name) if isinstance(value, dict) else None
        if parent is None or (value is None and optional):
            continue  # an absent parent (null, when allowed) holds no fields to check
        if not _WANT[kind][1](value):
            _malformed(f"{where}.{path}", kind)


def _malformed(path: str, kind: str) -> None:
    raise Invalid(f"Malformed Stripe event: {path} must be {_WANT[kind][0]}; nothing was applied.")
