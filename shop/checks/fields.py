"""Plain checks of a write's fields, without a schema library: a ``Field`` says what one
field may hold, ``check`` loads a dict by a mapping of them, and every refusal is an
``Invalid`` whose words are those the API's schemas give for the same input (the edge
derives its OpenAPI validators from the same ``Length``, ``Range`` and ``Pattern``)."""

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from shop.errors import Invalid

MISSING = object()


@dataclass(frozen=True)
class Length:
    """A length from ``min`` to ``max`` (either may be None)."""

    min: int | None = None
    max: int | None = None

    def __call__(self, value) -> str | None:
        size = len(value)
        if self.min is not None and size < self.min:
            if self.max is None:
                return f"Shorter than minimum length {self.min}."
            return f"Length must be between {self.min} and {self.max}."
        if self.max is not None and size > self.max:
            if self.min is None:
                return f"Longer than maximum length {self.max}."
            return f"Length must be between {self.min} and {self.max}."
        return None


@dataclass(frozen=True)
class Range:
    """A number from ``min`` to ``max``, both included."""

    min: int
    max: int

    def __call__(self, value) -> str | None:
        if value < self.min or value > self.max:
            return (
                f"Must be greater than or equal to {self.min} and less than or equal to {self.max}."
            )
        return None


@dataclass(frozen=True)
class Pattern:
    """Text that ``regex`` matches from its start; ``error`` otherwise."""

    regex: str
    error: str

    def __call__(self, value) -> str | None:
        return None if re.match(self.regex, value) else self.error


# A host name's letters: A-Z, 0-9 and any non-ASCII letter (as marshmallow's URL field reads).
_LETTERS = "A-Z0-9\u00a1-\uffff"
_HOSTS = (
    rf"(?:[{_LETTERS}](?:[{_LETTERS}-]{{0,61}}[{_LETTERS}])?\.)+"
    rf"(?:[A-Z\u00a1-\uffff]{{2,6}}\.?|[{_LETTERS}-]{{2,}}\.?)",  # a domain name
    r"localhost",
    r"\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}",  # IPv4
    r"\[[A-F0-9]*:[A-F0-9:]+\]",  # IPv6
)
_DOTLESS = rf"(?:[{_LETTERS}](?:[{_LETTERS}-]{{0,61}}[{_LETTERS}])?\.?)"


@dataclass(frozen=True)
class Url:
    """An absolute URL of one of ``schemes``; a dotless host name passes unless
    ``require_tld``. Refused as "Not a valid URL.", the API's words."""

    schemes: tuple[str, ...] = ("http", "https")
    require_tld: bool = True

    def __call__(self, value) -> str | None:
        hosts = _HOSTS if self.require_tld else (*_HOSTS, _DOTLESS)
        regex = (
            r"^(?:[a-z0-9\.\-\+]*)://"  # the scheme, checked below
            r"(?:(?:[a-z0-9\-._~!$&'()*+,;=:]|%[0-9a-f]{2})*@)?"  # user info
            rf"(?:{'|'.join(hosts)})(?::\d+)?"  # host and port
            r"(?:/?|[/?#]\S+)\Z"
        )
        scheme = value.split("://", maxsplit=1)[0].lower() if "://" in value else None
        if not value or (scheme is not None and scheme not in self.schemes):
            return "Not a valid URL."
        return None if re.search(regex, value, re.IGNORECASE) else "Not a valid URL."


@dataclass(frozen=True)
class Field:
    """What one field may hold.

    ``kind`` is string, url (a string refused as "Not a valid URL."), integer, boolean,
    list (of ``item``), mapping (``key`` to ``item``) or object (the fields of ``shape``,
    then ``rule``, which answers a (field, message) refusal or None). ``checks`` run on a
    value of the right kind, in order.
    """

    kind: str
    required: bool = False
    allow_none: bool = False
    default: object = MISSING
    checks: tuple[Callable, ...] = ()
    item: "Field | None" = None
    key: "Field | None" = None
    shape: Mapping[str, "Field"] | None = None
    rule: Callable | None = None


_INVALID = {
    "string": "Not a valid string.",
    "url": "Not a valid URL.",  # text, as a URL field calls any value not text
    "integer": "Not a valid integer.",
    "boolean": "Not a valid boolean.",
    "list": "Not a valid list.",
    "mapping": "Not a valid mapping type.",
}


class _Refused(Exception):
    """Lines ``(path, message)`` refused below a field, in the order they were found."""

    def __init__(self, lines: list[tuple[str, str]]):
        super().__init__(lines)
        self.lines = lines


def _below(path: str, lines: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return [(f"{path}.{sub}" if sub else path, message) for sub, message in lines]


def _typed(field: Field, value):
    """``value`` as ``field``'s kind; _Refused with the lines under it otherwise."""
    kind = field.kind
    if kind in ("string", "url"):
        ok = isinstance(value, str)
    elif kind == "integer":
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif kind == "boolean":
        ok = isinstance(value, bool)
    elif kind == "list":
        ok = isinstance(value, list | tuple)
    elif kind == "mapping":
        ok = isinstance(value, Mapping)
    else:
        return _object(field, value)
    if not ok:
        raise _Refused([("", _INVALID[kind])])
    if kind == "list":
        return _list(field, value)
    if kind == "mapping":
        return _mapping(field, value)
    return int(value) if kind == "integer" else value


def _list(field: Field, value) -> list:
    items, lines = [], []
    for index, item in enumerate(value):
        try:
            items.append(_value(field.item, item))
        except _Refused as refused:
            lines.extend(_below(str(index), refused.lines))
    if lines:
        raise _Refused(lines)
    return items


def _mapping(field: Field, value) -> dict:
    problems: dict = {}  # key -> lines, grouped by key as the keys are met
    for key in value:
        try:
            _value(field.key, key)
        except _Refused as refused:
            problems.setdefault(key, []).extend(_below("key", refused.lines))
    for key, item in value.items():
        try:
            _value(field.item, item)
        except _Refused as refused:
            problems.setdefault(key, []).extend(_below("value", refused.lines))
    if problems:
        raise _Refused([line for key, lines in problems.items() for line in _below(key, lines)])
    return dict(value)


def _object(field: Field, value) -> dict:
    if not isinstance(value, Mapping):
        raise _Refused([("", "Invalid input type.")])
    loaded, lines = {}, []
    for name, member in field.shape.items():
        raw = value.get(name, MISSING)
        if raw is MISSING:
            if member.required:
                lines.append((name, "Missing data for required field."))
            elif member.default is not MISSING:
                loaded[name] = member.default
            continue
        try:
            loaded[name] = _value(member, raw)
        except _Refused as refused:
            lines.extend(_below(name, refused.lines))
    lines.extend((str(key), "Unknown field.") for key in value if key not in field.shape)
    if not lines and field.rule is not None:
        refusal = field.rule(loaded)
        if refusal:
            lines.append(refusal)
    if lines:
        raise _Refused(lines)
    return loaded


def _value(field: Field, value):
    if value is None:
        if field.allow_none:
            return None
        raise _Refused([("", "Field may not be null.")])
    value = _typed(field, value)
    messages = [message for check in field.checks if (message := check(value))]
    if messages:
        raise _Refused([("", message) for message in messages])
    return value


def check(shape: Mapping[str, Field], data) -> dict:
    """``data`` loaded by ``shape``, defaults filled; an ``Invalid`` naming every bad field."""
    try:
        return _object(Field("object", shape=shape), data)
    except _Refused as refused:
        raise Invalid(
            " ".join(f"{path}: {message}" if path else message for path, message in refused.lines)
        ) from None
