"""What no request may carry, decided once for every route and both engines.

NUL characters and lone surrogates are refused wherever text enters: the path, the query
string, cookies, header values, form fields and every string (key or value) of a JSON body.
PostgreSQL cannot store NUL and neither engine can encode a lone surrogate, so letting them
through would be a 500 on one engine and silently different data on the other. JSON bodies
nested deeper than ``MAX_DEPTH`` are refused too (Python's parser recurses). Each refusal is
a 400 ``{"message"}`` naming the field.
"""

import json

from flask import request
from marshmallow import fields

from shop.db.text import BAD, MAX_DEPTH, check, refuse
from shop.errors import Invalid

_FORMS = ("application/x-www-form-urlencoded", "multipart/form-data")


def refuse_bad_characters() -> None:
    """before_request: 400 for NUL or a lone surrogate in the path, query, headers or form.

    Runs on every request, so it looks at the raw values first: werkzeug decodes the path
    and query with replacement characters (no surrogate survives), so only NUL, raw or as
    ``%00``, can be there; a cookie gets one only through an escape (``"\\000"``).
    """
    req = request._get_current_object()  # once: each use of the proxy looks it up again
    environ = req.environ
    if "\x00" in req.path:
        refuse("path")
    query = environ.get("QUERY_STRING", "")
    if "%00" in query or "\x00" in query:
        for name, value in request.args.items(multi=True):
            if BAD.search(name):
                refuse("query")
            if BAD.search(value):
                refuse(name)
    # One search over every header value; only a hit looks for which header it was.
    if BAD.search("".join([v for k, v in environ.items() if k.startswith("HTTP_")])):
        for key, value in environ.items():
            if key.startswith("HTTP_") and BAD.search(value):
                refuse(f"header {key[5:].replace('_', '-').title()}")
    if "\\" in environ.get("HTTP_COOKIE", ""):
        for name, value in request.cookies.items(multi=True):
            if BAD.search(name) or BAD.search(value):
                refuse("cookie")
    if environ.get("CONTENT_TYPE") and request.mimetype in _FORMS:
        for name, value in request.form.items(multi=True):  # the console's forms
            if name is None:  # a part without a name (werkzeug keeps it): no field of ours
                continue
            if BAD.search(name):
                refuse("form")
            if BAD.search(value):
                refuse(name)


def loads(text: str | bytes):
    """``json.loads`` for request bodies: 400 on NUL, lone surrogates or deep nesting.

    Raises ``ValueError`` for what is not JSON at all, as ``json.loads`` does.
    """
    try:
        data = json.loads(text)
    except RecursionError:
        raise Invalid(f"The JSON body is nested too deeply: at most {MAX_DEPTH} levels.") from None
    except ValueError as error:
        if isinstance(error, json.JSONDecodeError | UnicodeDecodeError):
            raise
        # Python refuses integers of more than 4,300 digits with a plain ValueError.
        raise Invalid("Invalid JSON body: a number has more than 4,300 digits.") from None
    check(data)
    return data


class StrictBoolean(fields.Boolean):
    """A JSON body's boolean: ``true`` or ``false`` only (marshmallow also takes 1 and "yes").

    Query strings keep ``fields.Boolean``, where ``?active=1`` is the norm.
    """

    def _deserialize(self, value, attr, data, **kwargs):
        if not isinstance(value, bool):
            raise self.make_error("invalid", input=value)
        return value
