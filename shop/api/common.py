"""What every resource blueprint shares: the Blueprint and Api classes, the error schema,
the list envelope and pagination.

Lists answer ``{"items": [...], "page": 1, "page_size": 20, "total": N, "total_is_exact": true,
"next_cursor": ...}`` with ``page_size`` at most 100, from one query for the page and one for
the total (``shop.db.pages.paginate``).

Every operation takes the query parameters its ``@blp.arguments(..., location="query")``
schema declares (the ones OpenAPI documents) and no others: an unknown one is a 400 naming
it (``slug: Unknown field.``), on every method of every route of these blueprints, also on
operations that declare none. HEAD takes GET's; OPTIONS takes none.
"""

import functools
import inspect
import threading

import flask_smorest
from flask import Response, current_app, g, request
from marshmallow import Schema, fields, validate
from webargs import missing
from webargs.flaskparser import FlaskParser, is_json_request
from webargs.multidictproxy import MultiDictProxy
from werkzeug.exceptions import RequestEntityTooLarge
from werkzeug.routing import BaseConverter

from shop import db
from shop.api.dump import compile_dump
from shop.api.load import compile_load
from shop.db.pages import ASKED, LIKE, Where, changed_since, like_pattern, paginate, paginate_rows  # noqa: F401 - the blueprints' helpers
from shop.http import inbound
from shop.http.decorators import request_view
from shop.http.errors import abort, error_response
from shop.http.extensions import limiter
from shop.http.inbound import StrictBoolean  # noqa: F401 - the blueprints' JSON booleans
from shop.http.openapi import (
    ConventionsPlugin,
    DateOrDateTime,
    ShopMarshmallowPlugin,
    register_components,
)

MAX_PAGE_SIZE = 100
MAX_PAGE = 10_000_000  # keeps OFFSET within a 64-bit integer on both engines
MAX_CURSOR = 4096


def read_body(req) -> bytes:
    """The request body; 413 past the route's limit, also for a chunked body."""
    data = req.get_data(cache=True)
    limit = req.max_content_length
    # A chunked body is cut at the limit without a word (werkzeug's LimitedStream): one
    # more byte from the server's own stream tells a body over the limit.
    cut = req.content_length is None and limit is not None and len(data) >= limit
    if cut and req.environ["wsgi.input"].read(1):
        raise RequestEntityTooLarge()
    return data


class _Present(MultiDictProxy):
    """webargs' proxy, answering an absent key without an exception.

    marshmallow asks the query string for every field of the schema (twenty for the product
    list) and werkzeug's ``MultiDict.get`` answers an absent one by building and catching a
    ``BadRequestKeyError``: a quarter of the argument parsing (issue 29).
    """

    def __getitem__(self, key):
        if key not in self.data:
            return missing
        return super().__getitem__(key)


class Parser(FlaskParser):
    """Invalid input is a 400, not webargs' 422; a route that takes a body needs one."""

    DEFAULT_VALIDATION_STATUS = 400

    def _makeproxy(self, multidict, schema, *, cls=MultiDictProxy):
        """webargs' proxy over the query string, headers, form or cookies (``_Present``)."""
        return super()._makeproxy(multidict, schema, cls=_Present if cls is MultiDictProxy else cls)

    KEPT_LOADS = 1024

    def get_default_request(self):
        """The request itself rather than Flask's proxy of it: webargs reads it several
        times a request, and each read through the proxy looks the context up again."""
        return request._get_current_object()

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._kept: dict[tuple, dict] = {}

    def parse(self, argmap, req=None, *, location=None, **kwargs):
        """webargs' ``parse``; a list's query (``PageQuerySchema``) also answers the path and
        filters it was asked with (``pages.ASKED``), which bind its cursors to it."""
        loaded = self._parse(argmap, req, location=location, **kwargs)
        if location == "query" and _is_page_query(argmap):
            req = req if req is not None else self.get_default_request()
            skip = ("cursor", "page", "page_size")
            loaded[ASKED] = [
                req.path,
                sorted(i for i in req.args.items(multi=True) if i[0] not in skip),
            ]
        return loaded

    def _parse(self, argmap, req=None, *, location=None, **kwargs):
        """A query schema marked ``LOADS_KEPT`` is loaded once per
        distinct query string (issue 29: twenty fields parsed on every list request).

        Only for schemas whose load is a pure function of the query string, with scalar
        fields only (``ProductQuerySchema``): each request gets its own copy of the dict, and
        a query string that fails to load is not kept, so its 400 comes every time. At most
        ``KEPT_LOADS`` query strings are kept; the next one starts afresh.
        """
        if (
            location != "query"
            or not getattr(argmap, "LOADS_KEPT", False)
            or kwargs.get("validate")
            or kwargs.get("error_headers")
        ):
            return super().parse(argmap, req, location=location, **kwargs)
        req = req if req is not None else self.get_default_request()
        unknown, status = kwargs.get("unknown"), kwargs.get("error_status_code")
        key = (id(argmap), req.query_string, unknown, status)
        loaded = self._kept.get(key)
        if loaded is None:
            loaded = super().parse(argmap, req, location=location, **kwargs)
            if len(self._kept) >= self.KEPT_LOADS:
                self._kept.clear()  # one-off strings (cursors) must not crowd out the rest
            self._kept[key] = loaded
        return dict(loaded)

    def _raw_load_json(self, req):
        """The body parsed by ``inbound.loads``: no NUL, lone surrogate or deep nesting."""
        if not is_json_request(req):
            return missing
        return inbound.loads(read_body(req))

    def load_json(self, req, schema):
        """The JSON body; a missing or non-JSON body is a 400 rather than an empty object."""
        data = super().load_json(req, schema)
        if data is missing:
            abort(400, "Send a JSON object as the body, with Content-Type: application/json.")
        return data


def _public_by_default(doc, doc_info, **_kwargs):
    """Operations not marked by an auth decorator are public: ``security: []``."""
    doc.setdefault("security", [])
    return doc


@functools.cache
def declared_query_parameters(view) -> frozenset[str]:
    """The query parameters ``view`` declares: its ``location="query"`` schemas' fields, as
    flask-smorest records them for the OpenAPI description (so taken = documented)."""
    names = set()
    for parameter in getattr(view, "_apidoc", {}).get("arguments", {}).get("parameters", []):
        if parameter["in"] == "query":
            fields_ = parameter["schema"].fields.items()
            names.update(field.data_key or name for name, field in fields_ if not field.dump_only)
    return frozenset(names)


def refuse_unknown_query_parameters() -> None:
    """before_request of every API blueprint (after the app's, so after the guards: 401 and
    403 come first): 400 naming each query parameter the operation does not declare.

    A refused request counts against the view's rate limits, as any invalid one does.
    """
    # Without a query string there is nothing to parse (a keyed read, /auth/me). The request
    # found once: each use of Flask's proxy looks its context up again (~3 µs here).
    req = request._get_current_object()
    if not req.environ.get("QUERY_STRING") or not req.args:
        return
    view = request_view()
    allowed = declared_query_parameters(view)
    prefixes = getattr(view, "query_prefixes", ())
    unknown = [n for n in req.args if n not in allowed and not n.startswith(prefixes)]
    if unknown:
        limiter.count_refused(view)
        abort(400, " ".join(f"{name or '(empty name)'}: Unknown field." for name in unknown))


def query_object(name: str, description: str, *, kept_prefixes: tuple[str, ...] = ()):
    """Let a view take the query parameters ``<name>[<key>]=<value>`` (``option[Size]=M``),
    documented as the one parameter ``name``, an object of string values in OpenAPI's
    ``deepObject`` style, which generated clients (openapi-fetch, openapi-python-client)
    build from a dict. ``kept_prefixes`` are older spellings still taken (``option.Size=M``),
    described in ``description`` rather than as parameters: OpenAPI cannot name a family of
    parameters. The view reads them from ``request.args`` itself."""

    def decorator(func):
        # Every key starting with ``name`` reaches the view, which refuses a malformed one
        # (``option=M``) with a message saying how to write it.
        func.query_prefixes = (*getattr(func, "query_prefixes", ()), name, *kept_prefixes)
        parameter = {
            "name": name,
            "in": "query",
            "description": description,
            "schema": {"type": "object", "additionalProperties": {"type": "string"}},
            "style": "deepObject",
            "explode": True,
        }
        func._apidoc = dict(getattr(func, "_apidoc", {}))
        func._apidoc["prefixed_parameters"] = [
            *func._apidoc.get("prefixed_parameters", ()),
            parameter,
        ]
        return func

    return decorator


def _prefixed_parameters(doc, doc_info, **_kwargs):
    """The parameters of ``query_object``, after those of the view's query schema."""
    for parameter in doc_info.get("prefixed_parameters", ()):
        doc.setdefault("parameters", []).append(parameter)
    return doc


class Blueprint(flask_smorest.Blueprint):
    """flask-smorest's Blueprint with our parser, public-by-default documentation and no
    query parameter but those declared (``refuse_unknown_query_parameters``)."""

    ARGUMENTS_PARSER = Parser()
    PAGINATION_ARGUMENTS_PARSER = Parser()

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._prepare_doc_cbks.append(_public_by_default)
        self._prepare_doc_cbks.append(_prefixed_parameters)
        self.before_request(refuse_unknown_query_parameters)

    def response(self, status_code, schema=None, **kwargs):
        """flask-smorest's ``response``, its schema's dump compiled (``shop.api.dump``), and a
        view's plain ``dict`` or ``list`` answered without flask-smorest's wrapper
        (``_plain_answer``)."""
        if schema is not None and not isinstance(schema, str | dict):
            schema = schema() if isinstance(schema, type) else schema
            fast = compile_dump(schema)
            if fast is not None:
                schema.dump = fast  # the instance flask-smorest keeps; OpenAPI sees the same
        decorate = super().response(status_code, schema, **kwargs)
        if schema is not None and not isinstance(schema, Schema):
            return decorate  # a schema named by a string or a dict: flask-smorest's own way

        def decorator(func):
            return _plain_answer(func, decorate, schema, int(status_code))

        return decorator

    @staticmethod
    def doc(**kwargs):
        """flask-smorest's ``doc`` (the operation's documentation), its wrapper calling the
        view directly rather than through ``current_app.ensure_sync`` on every request."""
        decorate = flask_smorest.Blueprint.doc(**kwargs)

        def decorator(func):
            documented = decorate(func)
            if inspect.iscoroutinefunction(func):
                return documented

            @functools.wraps(func)
            def wrapper(*args, **kwargs):
                return func(*args, **kwargs)

            wrapper._apidoc = documented._apidoc
            return wrapper

        return decorator

    def arguments(self, schema, *args, **kwargs):
        """flask-smorest's ``arguments``, with a schema class instantiated once, here.

        Given a class, webargs builds a new schema (deep-copying every field) on each request.
        A body's schema marked ``LOAD_COMPILED`` is loaded by ``shop.api.load``.
        """
        if isinstance(schema, type):
            schema = schema()
        body = kwargs.get("location", "json") == "json"
        if body and getattr(schema, "LOAD_COMPILED", False):
            fast = compile_load(schema)
            if fast is not None:
                schema.load = fast  # the instance webargs loads with; OpenAPI sees the same
        return super().arguments(schema, *args, **kwargs)


def _plain_answer(func, decorate, schema: Schema | None, status: int):
    """``decorate(func)`` (flask-smorest's response wrapper) with a short way for the common
    answer: when the view returns a plain ``dict`` or ``list``, it is dumped with ``schema``
    and encoded as flask-smorest would (``jsonify`` of the dump, then ``status``), without
    its tuple unpacking, header merging and the copy of the dump it keeps in the app context
    for ``@blp.etag`` (not used here: ``tests/edge/test_plain_answer.py``). Anything else (a
    tuple, a ``Response``, ``None``) goes through flask-smorest's wrapper as before.
    """
    documented = decorate(func)
    if inspect.iscoroutinefunction(func):
        return documented
    returned = threading.local()

    def replay(*_args, **_kwargs):
        return returned.value

    general = decorate(replay)  # flask-smorest's handling of a value already computed

    @functools.wraps(documented)
    def answer(*args, **kwargs):
        result = func(*args, **kwargs)
        kind = type(result)
        if kind is dict or kind is list:
            answered = result if schema is None else schema.dump(result)
            response = current_app._get_current_object().json.response(answered)
            if status != 200:
                response.status_code = status
            return response
        returned.value = result
        try:
            return general(*args, **kwargs)
        finally:
            del returned.value

    answer.smorest_wrapper = documented  # what it stands for (tests/edge/test_plain_answer.py)
    return answer


class IdConverter(BaseConverter):
    """``<id:name>``: an identifier made by ``db.new_id`` (``db.ID_PATTERN``).

    Keeps fixed sub-paths such as ``/api-keys/revoke-leaked`` apart from ``/api-keys/<id>``.
    """

    regex = db.ID_PATTERN


def _id_parameter_schema(_converter) -> dict:
    return {"type": "string", "pattern": f"^{db.ID_PATTERN}$"}


class RowErrorSchema(Schema):
    """One bad row of an imported file."""

    row = fields.Integer(required=True, metadata={"description": "1 is the first data row."})
    field = fields.String(required=True, metadata={"description": "The column."})
    message = fields.String(required=True)


class ErrorSchema(Schema):
    """Every error body: ``message``; a file refused for its rows (``POST /products/import``)
    also names each bad row in ``errors``."""

    message = fields.String(required=True)
    errors = fields.List(
        fields.Nested(RowErrorSchema),
        metadata={"description": "Only from imports: every bad row, its column and why."},
    )


class Api(flask_smorest.Api):
    """flask-smorest's Api whose errors are all ``{"message"}``, and whose OpenAPI description
    is written when first read.

    flask-smorest documents each blueprint as it is registered: two thirds of what building
    the app costs (~0.1 s), paid by every ``flask`` command and every test's app though most
    never read the description. Here registering a blueprint routes its views at once and
    queues its documentation; the first read of ``spec`` (``/openapi.json``, ``flask openapi``,
    the tests' response checks) writes the queue in registration order, under a lock, so the
    description is the same as if written eagerly.
    """

    ERROR_SCHEMA = ErrorSchema

    def __init__(self, app=None, *, spec_kwargs=None, **kwargs):
        self._undocumented = []
        self._documenting = threading.Lock()
        spec_kwargs = {
            "marshmallow_plugin": ShopMarshmallowPlugin(),
            "extra_plugins": [ConventionsPlugin()],
            **(spec_kwargs or {}),
        }
        super().__init__(app, spec_kwargs=spec_kwargs, **kwargs)

    def init_app(self, app, *args, **kwargs):
        """Also teach the app and the OpenAPI description the ``id`` path converter, and
        register our error responses (``shop.http.openapi``)."""
        self._error_pages = {}
        app.url_map.converters["id"] = IdConverter
        super().init_app(app, *args, **kwargs)
        self.register_converter(IdConverter, _id_parameter_schema)
        register_components(self.spec)

    @property
    def spec(self):
        """The OpenAPI description (apispec's ``APISpec``), with every blueprint documented."""
        if self._undocumented:
            with self._documenting:
                while self._undocumented:
                    blp, name, parameters = self._undocumented.pop(0)
                    blp.register_views_in_doc(
                        self, self._app, self._spec, name=name, parameters=parameters
                    )
                    self._spec.tag({"name": name, "description": blp.description})
        return self._spec

    @spec.setter
    def spec(self, value) -> None:
        self._spec = value

    def register_blueprint(self, blp, *, parameters=None, **options):
        """Route ``blp``'s views now and document them when the description is first read
        (flask-smorest's ``register_blueprint`` does both at once)."""
        name = options.get("name", blp.name)
        self._app.extensions["flask-smorest"]["blp_name_to_api"][name] = self
        self._app.register_blueprint(blp, **options)
        self._undocumented.append((blp, name, parameters))

    def serve_error_pages(self, prefix: str, handler) -> None:
        """Send the errors of requests under ``prefix`` that matched no route (404, 405) to
        ``handler`` rather than answering JSON: the admin console's pages are HTML."""
        self._error_pages[prefix] = handler

    def handle_http_exception(self, error):
        """Every HTTP error, and every unhandled exception as a 500."""
        if request.url_rule is None:
            for prefix, handler in self._error_pages.items():
                if request.path == prefix or request.path.startswith(prefix + "/"):
                    return handler(error)
        return error_response(error)


def _is_page_query(argmap) -> bool:
    """Whether ``argmap`` (a schema or its class) is a list's query."""
    kind = argmap if isinstance(argmap, type) else type(argmap)
    return issubclass(kind, PageQuerySchema)


class PageQuerySchema(Schema):
    """``page`` and ``page_size`` of a list, or the ``cursor`` of the page before."""

    page = fields.Integer(
        load_default=1,
        validate=validate.Range(min=1, max=MAX_PAGE),
        metadata={"description": "Reads past every row before the page: `cursor` costs less."},
    )
    page_size = fields.Integer(load_default=20, validate=validate.Range(min=1, max=MAX_PAGE_SIZE))
    cursor = fields.String(
        validate=validate.Length(min=1, max=MAX_CURSOR),
        metadata={
            "description": "The `next_cursor` of the page before, as it came: the next page,"
            " at the same cost at any depth. Send the same filters and sort as that request;"
            " not with `page`."
        },
    )


def _since(what: str) -> DateOrDateTime:
    return DateOrDateTime(
        metadata={
            "description": f"Only records {what} at or after this ISO 8601 date or date-time"
            " (UTC unless given)."
        }
    )


class CreatedSinceQuerySchema(PageQuerySchema):
    """A list of records that do not change once made: ``created_after``."""

    created_after = _since("created")


class ChangedSinceQuerySchema(CreatedSinceQuerySchema):
    """A list an integration syncs: ``created_after`` and ``updated_after``; the latter sorts
    the list by ``updated_at``, then ``id``, oldest first (``shop.db.pages.changed_since``)."""

    updated_after = DateOrDateTime(
        metadata={
            "description": "Only records created or changed at or after this ISO 8601 date or"
            " date-time (UTC unless given), sorted by `updated_at`, then `id`, oldest first:"
            " pass the largest `updated_at` of your last run (docs/openapi.md)."
        }
    )


_page_schemas = {}


def page_schema(item_schema: type[Schema]) -> type[Schema]:
    """The list envelope of ``item_schema`` (one class per item schema, named for OpenAPI)."""
    name = item_schema.__name__.removesuffix("Schema") + "PageSchema"
    if name not in _page_schemas:
        _page_schemas[name] = type(
            name,
            (Schema,),
            {
                "items": fields.List(fields.Nested(item_schema), required=True),
                "page": fields.Integer(required=True),
                "page_size": fields.Integer(required=True),
                "total": fields.Integer(
                    required=True,
                    metadata={
                        "description": "The records the list holds; past the count cap (1,000"
                        " by default) the cap, with `total_is_exact` false."
                    },
                ),
                "total_is_exact": fields.Boolean(
                    required=True,
                    metadata={"description": "false: `total` is the cap, and there are more."},
                ),
                "next_cursor": fields.String(
                    required=True,
                    allow_none=True,
                    metadata={
                        "description": "Pass it as `cursor` for the next page; null on the"
                        " last page."
                    },
                ),
                "__doc__": f"A page of {item_schema.__name__.removesuffix('Schema')} records.",
            },
        )
    return _page_schemas[name]


WRITE_ONLY = "The caller may change this but not read it: nothing is answered."


def readable(permission: str, body):
    """``body`` when the caller holds ``permission``, else an empty 204.

    Write does not imply read: a caller that may change a record but not read it learns
    nothing of it beyond what it sent.
    """
    if g.caller.can(permission):
        return body
    return Response(status=204)
