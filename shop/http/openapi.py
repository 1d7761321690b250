"""The conventions of our OpenAPI description, applied in one place for every route.

Views declare what only they know (an ``operationId``, a 409 they raise); what follows from
how a route is built (401, 403, 400, 404, 413, 429, ``default``, nullable nested objects,
``date-time`` fields, named enums, defaults said in descriptions, the ``Error`` body) is
added here. The rules and why: docs/openapi.md, "Conventions".
"""

import json
import re

from apispec import BasePlugin
from apispec.ext.marshmallow import MarshmallowPlugin, OpenAPIConverter
from flask_smorest.utils import deepupdate
from marshmallow import ValidationError, fields, missing, validate

from shop.clock import utc

_ERROR = {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}

# status: (component name, description, headers)
ERROR_RESPONSES = {
    400: ("BadRequest", "Invalid input; the message names the field.", ()),
    401: (
        "Unauthorized",
        "Not signed in, or an invalid, expired or revoked API key (then with"
        " `WWW-Authenticate: Bearer`).",
        ("WWW-Authenticate",),
    ),
    403: ("Forbidden", "Signed in, but without the permission or scope this needs.", ()),
    404: ("NotFound", "No such record, or not one the caller may see.", ()),
    409: ("Conflict", "The request conflicts with the current state; the message says why.", ()),
    413: ("PayloadTooLarge", "The body exceeds the size limit (`SHOP_MAX_BODY_BYTES`).", ()),
    415: ("UnsupportedMediaType", "The body's content is not of a type this operation takes.", ()),
    429: (
        "TooManyRequests",
        "Rate limit reached; retry after `Retry-After` s.",
        ("Retry-After", "RateLimit", "RateLimit-Policy"),
    ),
    502: (
        "BadGateway",
        "The payment provider refused the shop's own credentials; the operator must fix them.",
        (),
    ),
    503: (
        "ServiceUnavailable",
        "A dependency cannot be reached now; retry after `Retry-After` s.",
        ("Retry-After",),
    ),
}
SERVER_ERROR = "ServerError"

HEADERS = {
    "Retry-After": {
        "description": "Seconds to wait before retrying.",
        "schema": {"type": "integer", "minimum": 1},
    },
    "WWW-Authenticate": {
        "description": 'The scheme to authenticate with: `Bearer realm="shop"`.',
        "schema": {"type": "string"},
    },
    # draft-ietf-httpapi-ratelimit-headers-10; written by shop/http/limit_windows.py.
    "RateLimit": {
        "description": "What is left of each rate limit this request was counted against, by"
        ' policy name: `"route";r=7;t=53` (`r` requests left, `t` seconds until the oldest'
        " request in the moving window ages out and one more is allowed). Also on this"
        " operation's error answers; `api-key` is the key's own limit, on every answer to it.",
        "schema": {"type": "string"},
    },
    "RateLimit-Policy": {
        "description": 'The rate limits of `RateLimit`: `"route";q=10;w=60` (`q` requests in'
        " any `w` seconds).",
        "schema": {"type": "string"},
    },
    "Set-Cookie": {
        "description": "The session cookie (HttpOnly): `shop_admin_session` or"
        " `shop_customer_session`; cleared on sign-out.",
        "schema": {"type": "string"},
    },
}

SETS_COOKIE = "x-shop-sets-cookie"  # consumed by the plugin, not served
RATE_LIMITED = "x-shop-rate-limited"  # likewise

# How a caller authenticates (API_SPEC_OPTIONS in create_app); views name them in `security`.
_COOKIE_NOTE = (
    ' The cookie is HttpOnly: a browser keeps it. In Swagger UI, sign in with "Try it out"'
    " on `POST /auth/login`; the field here does nothing."
)
SECURITY_SCHEMES = {
    "adminSession": {
        "type": "apiKey",
        "in": "cookie",
        "name": "shop_admin_session",
        "description": "An administrator's session, set by `POST /auth/login`." + _COOKIE_NOTE,
    },
    "customerSession": {
        "type": "apiKey",
        "in": "cookie",
        "name": "shop_customer_session",
        "description": "A customer's session, set by `POST /auth/login` or `POST /auth/register`."
        + _COOKIE_NOTE,
    },
    "apiKey": {
        "type": "http",
        "scheme": "bearer",
        "bearerFormat": "eck_...",
        "description": "A scoped API key (`eck_...`), made under `/api-keys` or by"
        " `flask --app app api-keys create`: `Authorization: Bearer eck_...`.",
    },
}


def add_doc(func, **doc):
    """Merge OpenAPI operation fields into a view function's documentation."""
    func._apidoc = dict(getattr(func, "_apidoc", {}))
    func._apidoc["manual_doc"] = deepupdate(dict(func._apidoc.get("manual_doc", {})), doc)
    return func


def responds(*statuses: int, **descriptions: str):
    """Document error statuses a view raises itself (``@responds(409)``), with the ``Error``
    body; ``descriptions`` (``e409="..."``) replace the generic description."""

    def decorator(func):
        responses = {}
        for status in statuses:
            text = descriptions.get(f"e{status}")
            responses[str(status)] = _error(status, text) if text else ERROR_RESPONSES[status][0]
        return add_doc(func, responses=responses)

    return decorator


def sets_cookie(func):
    """Document that the success response sets (or clears) the session cookie."""
    return add_doc(func, **{SETS_COOKIE: True})


def rate_limited(func):
    """Document 429 with ``Retry-After`` and the ``RateLimit`` fields on every answer
    (``@limiter.limit`` does this itself)."""
    return add_doc(func, responses={"429": ERROR_RESPONSES[429][0]}, **{RATE_LIMITED: True})


def enum_field(name: str, values, *, validate_input: bool = True, **kwargs) -> fields.String:
    """A string field whose values are the component schema ``name`` (one enum, reused)."""
    metadata = {**kwargs.pop("metadata", {}), "x-enum-component": name, "enum": list(values)}
    if validate_input:
        kwargs["validate"] = validate.OneOf(list(values))
    return fields.String(metadata=metadata, **kwargs)


class DateOrDateTime(fields.DateTime):
    """An ISO 8601 date or date-time (a query string's): documented as either, converted to
    UTC (naive means UTC); out of range is a 400."""

    def _deserialize(self, value, attr, data, **kwargs):
        try:
            return utc(super()._deserialize(value, attr, data, **kwargs))
        except ValueError as error:
            raise ValidationError(str(error)) from None


def _header(name: str) -> dict:
    return dict(HEADERS[name])


def _error(status, description: str | None = None) -> dict:
    """The response of an error ``status`` (``default`` for 5xx), with the ``Error`` body."""
    if status == "default":
        headers = ("Retry-After",)  # a 503's
    else:
        _name, generic, headers = ERROR_RESPONSES[status]
        description = description or generic
    response = {"description": description, "content": _ERROR}
    if headers:
        response["headers"] = {h: _header(h) for h in headers}
    if status in (429, 503):
        response["headers"]["Retry-After"]["required"] = True
    return response


def register_components(spec) -> None:
    """The error responses, lazily: only those used appear."""
    spec.components.schemas.pop("PaginationMetadata", None)  # flask-smorest's; we use none
    for status, (name, _description, _headers) in ERROR_RESPONSES.items():
        spec.components.response(name, _error(status), lazy=True)
    description = "Unexpected error (5xx); a 503 carries `Retry-After`."
    spec.components.response(SERVER_ERROR, _error("default", description), lazy=True)


class Converter(OpenAPIConverter):
    """apispec's converter with our nullable references, timestamps and named enums."""

    def field2property(self, field):
        """The property of ``field``, with our conventions applied."""
        ret = super().field2property(field)
        if isinstance(field, DateOrDateTime):
            ret.pop("type", None), ret.pop("format", None)
            ret["anyOf"] = [
                {"type": "string", "format": "date"},
                {"type": "string", "format": "date-time"},
            ]
        enum_name = field.metadata.get("x-enum-component")
        if enum_name:
            ret.pop("x-enum-component", None)
            values = [v for v in ret.pop("enum") if v is not None]
            if enum_name not in self.spec.components.schemas:
                self.spec.components.schema(enum_name, _enum_schema(values))
            for key in ("type", "nullable", "anyOf"):
                ret.pop(key, None)
            ret["allOf"] = [{"$ref": f"#/components/schemas/{enum_name}"}]
            if field.allow_none:
                ret["nullable"] = True
            elif len(ret) == 1:
                ret = ret["allOf"][0]  # a bare reference
        # A response's timestamp; input fields (with validators) may take a date, too.
        timestamp = _is_timestamp(field.name) and not field.validators
        if ret.get("type") == "string" and "format" not in ret and timestamp:
            ret["format"] = "date-time"
        return ret

    def _field2parameter(self, field, *, name: str, location: str) -> dict:
        """A query parameter: its description moves up to the parameter, so a named enum's
        ``allOf`` of one reference is left alone: the bare reference instead."""
        ret = super()._field2parameter(field, name=name, location=location)
        schema = ret.get("schema", {})
        if set(schema) == {"allOf"} and len(schema["allOf"]) == 1:
            ret["schema"] = schema["allOf"][0]
        return ret

    def fields2jsonschema(self, fields, *, partial=None):
        """An object schema (a body's or a response's): the defaults of input fields move into
        their descriptions (see the module docstring)."""
        ret = super().fields2jsonschema(fields, partial=partial)
        for name, field in fields.items():
            prop = ret["properties"].get(field.data_key or name)
            if prop is None or "default" not in prop or field.load_default is missing:
                continue
            default = json.dumps(prop.pop("default"))
            text = prop.get("description", "")
            prop["description"] = f"{text} Default: `{default}`.".strip()
        return ret

    def field2nullable(self, field, ret) -> dict:
        """OpenAPI 3.0: ``allOf: [{$ref}]`` + ``nullable``, which generators type as the
        referenced schema (apispec's ``anyOf`` with an untyped object branch is not)."""
        if field.allow_none and "$ref" in ret:
            return {"allOf": [{"$ref": ret.pop("$ref")}], "nullable": True}
        if field.allow_none and "allOf" in ret:
            return {"nullable": True}
        return super().field2nullable(field, ret)


def _enum_schema(values) -> dict:
    """A string enum; values that are not identifiers get readable generated names through
    ``x-enum-varnames`` (``-name`` -> ``NAME_DESC``, not ``VALUE_1``; ``read:order`` ->
    ``READ_ORDER``, not ``READORDER``)."""
    schema = {"type": "string", "enum": values}
    if not all(re.fullmatch(r"[A-Za-z]\w*", v) for v in values):
        schema["x-enum-varnames"] = [
            re.sub(r"\W+", "_", v.lstrip("-")).upper() + ("_DESC" if v.startswith("-") else "")
            for v in values
        ]
    return schema


def _is_timestamp(name) -> bool:
    return bool(name) and (name == "at" or name.endswith("_at"))


class ShopMarshmallowPlugin(MarshmallowPlugin):
    Converter = Converter


class ConventionsPlugin(BasePlugin):
    """Adds the error responses and headers that follow from how each operation is built."""

    def operation_helper(self, path=None, operations=None, **kwargs):
        """Complete each operation's responses (see the module docstring)."""
        for operation in (operations or {}).values():
            responses = operation.setdefault("responses", {})
            # flask-smorest names its own (BAD_REQUEST, DEFAULT_ERROR): ours replace them.
            for status in [s for s, r in responses.items() if isinstance(r, str)]:
                if responses[status].isupper():
                    del responses[status]
            responses = {str(status): response for status, response in responses.items()}
            wanted = {400, 401}
            if operation.get("security"):
                wanted.add(403)
            if "{" in (path or ""):
                wanted.add(404)
            if "requestBody" in operation:
                wanted.add(413)
            for status in sorted(wanted):
                responses.setdefault(str(status), ERROR_RESPONSES[status][0])
            responses["default"] = SERVER_ERROR
            success_headers = []
            if operation.pop(SETS_COOKIE, False):
                success_headers.append("Set-Cookie")
            if operation.pop(RATE_LIMITED, False):
                success_headers += ["RateLimit", "RateLimit-Policy"]
            for status, response in responses.items():
                if status.startswith("2") and isinstance(response, dict):
                    for name in success_headers:
                        response.setdefault("headers", {})[name] = _header(name)
            operation["responses"] = dict(sorted(responses.items()))
