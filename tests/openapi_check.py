"""Every response a test sees must be one the OpenAPI description documents.

``ValidatingClient`` (the test client of every app built by the ``make_app`` fixture) checks
each response to a documented operation: its status is listed (5xx may fall to ``default``),
its JSON body matches the schema (``additionalProperties: false``, ``required`` and formats
included), a 204 has no body, and the headers documented as required are there. Requests to
undocumented paths or methods (the admin console, 404/405 of routing) are not checked.
"""

import re
from datetime import datetime

import jsonschema_rs
from flask.json.provider import DefaultJSONProvider
from flask.testing import FlaskClient

from shop.http.json_output import Provider

_cache = {}


class UndocumentedResponse(AssertionError):
    """A response the OpenAPI description does not allow."""


def _json_schema(node):
    """An OpenAPI 3.0 schema as JSON Schema (draft 7): ``nullable`` becomes ``null``."""
    if isinstance(node, list):
        return [_json_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: _json_schema(value) for key, value in node.items() if key != "nullable"}
    if node.get("nullable"):
        if "type" in out:
            out["type"] = [out["type"], "null"]
            if "enum" in out:
                out["enum"] = [*out["enum"], None]
        else:
            out = {"anyOf": [out, {"type": "null"}]}
    return out


def _date_time(value: str) -> bool:
    try:
        datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return False
    return "T" in value


class _Spec:
    def __init__(self, spec: dict):
        self.spec = spec
        self.components = _json_schema(spec["components"])
        self.routes = []
        for template, item in spec["paths"].items():
            pattern = re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(template))
            self.routes.append((re.compile(f"^{pattern}$"), template, item))
        self.validators = {}

    def operation(self, method: str, path: str):
        for pattern, template, item in self.routes:
            if pattern.match(path) and method in item:
                return template, item[method]
        return None, None

    def response(self, ref_or_response: dict) -> dict:
        ref = ref_or_response.get("$ref")
        if ref:
            return self.spec["components"]["responses"][ref.rsplit("/", 1)[1]]
        return ref_or_response

    def validator(self, key, schema: dict):
        if key not in self.validators:
            self.validators[key] = jsonschema_rs.Draft7Validator(
                {**_json_schema(schema), "components": self.components},
                validate_formats=True,
                formats={"date-time": _date_time},
            )
        return self.validators[key]


def _spec_of(app) -> _Spec:
    # The description is the same for every app the tests build: compute it once.
    if "spec" not in _cache:
        api = app.extensions["flask-smorest"]["apis"][""]["ext_obj"]
        _cache["spec"] = _Spec(api.spec.to_dict())
    return _cache["spec"]


class BytesChecked(Provider):
    """The app's JSON provider, checking that every answer it encodes (with orjson) has the
    bytes Flask's own provider writes (``json.dumps``, ASCII, compact, keys as given)."""

    def response(self, *args, **kwargs):
        fast = super().response(*args, **kwargs)
        reference = DefaultJSONProvider.response(self, *args, **kwargs)
        if fast.get_data() != reference.get_data():
            raise UndocumentedResponse(
                f"JSON not byte-identical to json.dumps: {fast.get_data()[:200]!r}"
                f" != {reference.get_data()[:200]!r}"
            )
        return fast


def check(app, method: str, path: str, response) -> None:
    """Raise ``UndocumentedResponse`` unless the description allows ``response``."""
    spec = _spec_of(app)
    template, operation = spec.operation(method.lower(), path)
    if operation is None:
        return
    where = f"{method} {path} -> {response.status_code}"
    status = str(response.status_code)
    responses = operation["responses"]
    if status not in responses:
        if response.status_code < 500 or "default" not in responses:
            raise UndocumentedResponse(
                f"{where}: status not documented ({operation['operationId']})"
            )
        status = "default"
    documented = spec.response(responses[status])
    for name, header in documented.get("headers", {}).items():
        if header.get("required") and name not in response.headers:
            raise UndocumentedResponse(f"{where}: header {name} missing")
    if response.mimetype != "application/json" and response.mimetype in documented.get(
        "content", {}
    ):
        return  # a documented non-JSON body (the metrics' text)
    content = documented.get("content", {}).get("application/json")
    if content is None:
        if response.get_data():
            raise UndocumentedResponse(f"{where}: a body where none is documented")
        return
    body = response.get_json(silent=True)
    validator = spec.validator((template, method, status), content["schema"])
    errors = [
        f"{'/'.join(map(str, e.instance_path))}: {e.message}" for e in validator.iter_errors(body)
    ]
    if errors:
        raise UndocumentedResponse(f"{where}: body does not match: " + "; ".join(errors[:5]))


class ValidatingClient(FlaskClient):
    """A test client that checks every response against the OpenAPI description."""

    def open(self, *args, **kwargs):
        """Send the request as FlaskClient does, then check the response."""
        if type(self.application.json) is not BytesChecked:
            self.application.json = BytesChecked(self.application)
        response = super().open(*args, **kwargs)
        request = response.request
        if not getattr(response, "is_streamed", False):
            check(self.application, request.method, request.path, response)
        return response
