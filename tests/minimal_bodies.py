"""The minimal request body of every operation that takes one, written from ``/openapi.json``
for both generated clients, so that the CI's client checks cover every operation, also those
added after this file (docs/openapi.md):

    python -m tests.minimal_bodies ts openapi.json > bodies.ts   # openapi-typescript's types
    python -m tests.minimal_bodies py openapi.json > bodies.py   # openapi-python-client's models

"Minimal" is what an integrator writes first: the required fields only, each with a value of
its type (the first value of an enum). The files are type-checked, not run: ``tsc --strict``
(``.ci/openapi``) and ``mypy --strict`` (``tests/edge/test_generated_client.py``). The Python
script calls each operation with a signed-in cookie client typed ``AuthenticatedClient``, as
docs/openapi.md shows.
"""

import json
import sys

PACKAGE = "shop_client"
METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")


BODY_TYPES = ("application/json", "multipart/form-data")


def operations(spec: dict):
    """``(path, method, operation)`` of every operation with a request body (JSON, or a
    form with a file)."""
    for path, item in spec["paths"].items():
        for method, operation in item.items():
            if method not in METHODS:
                continue
            if set(operation.get("requestBody", {}).get("content", {})) & set(BODY_TYPES):
                yield path, method, operation


def body_of(operation: dict) -> tuple[str, dict]:
    """``(content type, schema)`` of the operation's request body."""
    content = operation["requestBody"]["content"]
    kind = next(kind for kind in BODY_TYPES if kind in content)
    return kind, content[kind]["schema"]


def _component(ref: str) -> str:
    return ref.rsplit("/", 1)[-1]


def _resolved(spec: dict, schema: dict) -> tuple[str | None, dict]:
    """``(component name or None, schema)``, through ``$ref`` and a one-element ``allOf``."""
    if len(schema.get("allOf", [])) == 1:
        schema = schema["allOf"][0]
    if "$ref" in schema:
        name = _component(schema["$ref"])
        return name, spec["components"]["schemas"][name]
    return None, schema


def minimal(spec: dict, schema: dict):
    """The smallest JSON value of ``schema`` (required properties only)."""
    _name, schema = _resolved(spec, schema)
    if "enum" in schema:
        return schema["enum"][0]
    if "anyOf" in schema or "oneOf" in schema:
        return minimal(spec, (schema.get("anyOf") or schema["oneOf"])[0])
    kind = schema.get("type", "object")
    if kind == "object":
        props = schema.get("properties", {})
        return {key: minimal(spec, props[key]) for key in schema.get("required", [])}
    if kind == "array":
        return [minimal(spec, schema["items"])] * schema.get("minItems", 0)
    if kind == "string":
        return {"date-time": "2030-01-01T00:00:00Z", "date": "2030-01-01", "binary": "x"}.get(
            schema.get("format"), "x" * max(1, schema.get("minLength", 1))
        )
    if kind in ("integer", "number"):
        return schema.get("minimum", 1)
    return False  # boolean


def typescript(spec: dict) -> str:
    """A TypeScript module: one typed constant per operation."""
    lines = [
        "// Written by tests/minimal_bodies.py from /openapi.json: do not edit.",
        'import type { operations } from "./schema";',
        "type Content<K extends keyof operations> =",
        '  NonNullable<operations[K]["requestBody"]>["content"];',
        "type Body<K extends keyof operations, T extends keyof Content<K>> = Content<K>[T];",
    ]
    for _path, _method, operation in operations(spec):
        op_id = operation["operationId"]
        kind, schema = body_of(operation)
        value = json.dumps(minimal(spec, schema))
        lines.append(f'export const {op_id}: Body<"{op_id}", "{kind}"> = {value};')
    return "\n".join(lines) + "\n"


class _Python:
    """Python expressions of minimal values, with openapi-python-client's own names."""

    def __init__(self, spec: dict):
        from openapi_python_client.strings import ClassName, PythonIdentifier, pascal_case

        self.spec, self.cls, self.ident = spec, ClassName, PythonIdentifier
        self.pascal = pascal_case

    def value(self, schema: dict, parent: str, prop: str) -> str:
        """The expression of ``schema``, the property ``prop`` of the class ``parent``."""
        name, schema = _resolved(self.spec, schema)
        cls = self.cls(name, "field_") if name else self.pascal(parent) + self.pascal(prop)
        if "enum" in schema:
            return f"m.{cls}({schema['enum'][0]!r})"
        if "anyOf" in schema or "oneOf" in schema:
            formats = {s.get("format") for s in schema.get("anyOf") or schema["oneOf"]}
            schema = {"type": "string", "format": "date-time" if "date-time" in formats else None}
        kind = schema.get("type", "object")
        if kind == "object":
            props = schema.get("properties", {})
            args = ", ".join(
                f"{self.ident(key, 'field_')}={self.value(props[key], cls, key)}"
                for key in schema.get("required", [])
            )
            return f"m.{cls}({args})"
        if kind == "array":
            item = self.value(schema["items"], parent, prop)
            return f"[{item}]" if schema.get("minItems") else "[]"
        if kind == "string" and schema.get("format") == "date-time":
            return "datetime.datetime(2030, 1, 1, tzinfo=datetime.UTC)"
        if kind == "string" and schema.get("format") == "date":
            return "datetime.date(2030, 1, 1)"
        if kind == "string" and schema.get("format") == "binary":
            return 'File(payload=io.BytesIO(b"x"), file_name="x.png")'
        return repr(minimal(self.spec, schema))

    def call(self, path: str, operation: dict) -> tuple[str, str]:
        """``(import line, call)`` of ``operation`` with its minimal body."""
        tag = self.ident(operation["tags"][0], "field_")
        module = self.ident(operation["operationId"], "field_")
        args = []
        shared = self.spec["paths"][path].get("parameters", [])
        parameters = operation.get("parameters", []) + shared
        for parameter in parameters:
            if parameter["in"] == "path":
                args.append(repr(minimal(self.spec, parameter["schema"])))
        args.append("client=client")
        kind, schema = body_of(operation)
        # The generator prefixes the body's type names with its kind when there are several.
        parent = operation["operationId"]
        if len(operation["requestBody"]["content"]) > 1:
            parent += "_" + {"application/json": "json", "multipart/form-data": "files"}[kind]
        args.append(f"body={self.value(schema, parent, 'body')}")
        for parameter in parameters:
            if parameter["in"] != "path" and parameter.get("required"):
                value = self.value(parameter["schema"], "", parameter["name"])
                args.append(f"{self.ident(parameter['name'], 'field_')}={value}")
        line = f"from {PACKAGE}.api.{tag} import {module}"
        return line, f"    {module}.sync_detailed({', '.join(args)})"


def python(spec: dict) -> str:
    """A Python module for mypy --strict: every operation with its minimal body."""
    writer = _Python(spec)
    imports, calls = set(), []
    for path, _method, operation in operations(spec):
        line, call = writer.call(path, operation)
        imports.add(line)
        calls.append(call)
    return "\n".join(
        [
            '"""Written by tests/minimal_bodies.py from /openapi.json: do not edit."""',
            "",
            "import datetime",
            "import io",
            "",
            f"from {PACKAGE} import models as m",
            f"from {PACKAGE}.api.auth import login",
            f"from {PACKAGE}.client import AuthenticatedClient",
            f"from {PACKAGE}.types import File",
            *sorted(imports - {f"from {PACKAGE}.api.auth import login"}),
            "",
            "",
            "def signed_in(url: str, email: str, password: str) -> AuthenticatedClient:",
            '    """A session: no key (an empty Authorization is no credential), the cookie."""',
            '    client = AuthenticatedClient(base_url=url, token="", prefix="")',
            "    login.sync(client=client, body=m.Login(email=email, password=password))",
            "    return client",
            "",
            "",
            "def every_body(client: AuthenticatedClient) -> None:",
            '    """Each operation that takes a body, with its minimal one."""',
            *calls,
            "",
        ]
    )


if __name__ == "__main__":
    with open(sys.argv[2], encoding="utf-8") as file:
        document = json.load(file)
    sys.stdout.write({"ts": typescript, "py": python}[sys.argv[1]](document))
