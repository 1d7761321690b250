"""What text both engines can store, checked before it reaches them: NUL characters (which
PostgreSQL cannot store) and lone surrogates (which neither engine can encode) are refused,
and so is parsed JSON nested deeper than ``MAX_DEPTH``; each refusal is an ``Invalid`` naming
the field. The HTTP edge runs these on every request; the importer on every row."""

import re

from shop.errors import Invalid

MAX_DEPTH = 64

# NUL, and UTF-16 surrogate code points, which are never valid on their own in UTF-8 text.
BAD = re.compile("[\x00\ud800-\udfff]")


def refuse(field: str) -> None:
    """Raise the refusal of a NUL or lone surrogate in ``field``."""
    raise Invalid(f"{field}: NUL characters and lone surrogates are not allowed.")


def check(data) -> None:
    """400 naming the field when ``data`` (parsed JSON) is too deep or holds bad text."""
    stack = [(data, "", 1)]
    while stack:
        value, path, depth = stack.pop()
        if isinstance(value, str):
            if BAD.search(value):
                refuse(path or "body")
            continue
        if not isinstance(value, dict | list):
            continue
        if depth > MAX_DEPTH:
            raise Invalid(f"{path or 'body'}: nested too deeply: at most {MAX_DEPTH} levels.")
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for key, item in items:
            if isinstance(key, str) and BAD.search(key):
                refuse(path or "body")
            child = f"{path}.{key}" if path else str(key)
            stack.append((item, child, depth + 1))
