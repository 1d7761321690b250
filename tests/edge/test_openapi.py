"""The OpenAPI description is one that generated clients can live on (docs/openapi.md).

These rules hold for every operation and schema, so a new route that breaks one fails here:
explicit ``operationId``s, the error statuses that follow from the route's guards, input and
path, the ``Error`` body on each, ``required`` on every field a response always carries,
``date-time`` on timestamps, named enums and nullable references that generators type well.
"""

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from shop import create_app

ERROR_REF = "#/components/schemas/Error"


@pytest.fixture(scope="module")
def spec(tmp_path_factory):
    folder = tmp_path_factory.mktemp("openapi")
    app = create_app({"TESTING": True, "DATABASE_URL": f"sqlite:///{folder / 'unused.db'}"})
    return app.test_client().get("/openapi.json").json


def operations(spec):
    for path, item in spec["paths"].items():
        for method, operation in item.items():
            if method in ("get", "post", "put", "patch", "delete"):
                yield f"{method.upper()} {path}", path, operation


def response(spec, operation, status):
    found = operation["responses"][status]
    if "$ref" in found:
        return spec["components"]["responses"][found["$ref"].rsplit("/", 1)[1]]
    return found


def schema_refs(node):
    """The names of the component schemas ``node`` refers to, directly."""
    if isinstance(node, dict):
        if "$ref" in node and node["$ref"].startswith("#/components/schemas/"):
            yield node["$ref"].rsplit("/", 1)[1]
        for value in node.values():
            yield from schema_refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from schema_refs(value)


def reachable(spec, roots):
    """Every component schema reachable from ``roots``."""
    seen, todo = set(), list(roots)
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo.extend(schema_refs(spec["components"]["schemas"][name]))
    return seen


def test_every_operation_has_a_stable_readable_operation_id(spec):
    ids = [op.get("operationId") for _, _, op in operations(spec)]
    missing = [where for where, _, op in operations(spec) if "operationId" not in op]
    assert not missing, f"add @blp.doc(operationId=...) to: {missing}"
    assert all(re.fullmatch(r"[a-z][a-zA-Z]+", i) for i in ids), ids
    assert [i for i, n in Counter(ids).items() if n > 1] == []
    assert {"listProducts", "getProduct", "changeOrderStatus", "checkout"} <= set(ids)


def test_every_operation_documents_its_errors_with_the_error_schema(spec):
    checked = 0
    for where, path, operation in operations(spec):
        checked += 1
        statuses = set(operation["responses"])
        assert any(s.startswith("4") for s in statuses), where
        assert "401" in statuses, where  # a bad API key is refused on every route
        assert "400" in statuses, where  # so is an unknown query parameter
        if operation["security"] and {} not in operation["security"]:
            assert {"401", "403"} <= statuses, where
        if "{" in path:
            assert "404" in statuses, where
        if "requestBody" in operation:
            assert "413" in statuses, where
        for status in statuses - {"200", "201", "202", "204", "304"}:  # 304: not an error
            content = response(spec, operation, status)["content"]["application/json"]
            assert content["schema"] == {"$ref": ERROR_REF}, (where, status)
    assert checked >= 76  # every operation (76 when this was written; new routes add to it)


def test_error_headers_are_documented(spec):
    checked = 0
    for where, _, operation in operations(spec):
        if "429" in operation["responses"]:
            headers = response(spec, operation, "429")["headers"]
            assert headers["Retry-After"]["required"] is True, where
        headers = response(spec, operation, "401").get("headers", {})
        assert "WWW-Authenticate" in headers, where
        checked += 1
    assert checked >= 76
    limited = {op["operationId"] for _, _, op in operations(spec) if "429" in op["responses"]}
    assert {"login", "registerCustomer", "checkout", "changePassword"} <= limited
    login = spec["paths"]["/auth/login"]["post"]["responses"]["200"]
    assert "Set-Cookie" in login["headers"]


def output_schemas(spec):
    """The component schemas that only responses use."""
    roots, inputs = set(), set()
    for _, _, operation in operations(spec):
        for status, found in operation["responses"].items():
            if status.startswith("2"):
                content = found.get("content", {}).get("application/json", {})
                roots.update(schema_refs(content.get("schema", {})))
        inputs.update(schema_refs(operation.get("requestBody", {})))
        inputs.update(schema_refs(operation.get("parameters", [])))
    return reachable(spec, roots) - reachable(spec, inputs)


# Fields an answer carries only when the request asks for them, each documented so.
ON_REQUEST = {
    "Product": {"variants"},  # GET /products?include=variants (issue 38)
}


def test_response_schemas_require_every_field_they_always_carry(spec):
    outputs = output_schemas(spec)
    assert {"Order", "Product", "ApiKeyCreated", "StatusChange"} <= outputs
    for name in sorted(outputs):
        schema = spec["components"]["schemas"][name]
        if schema.get("type") != "object":
            continue
        optional = set(schema.get("properties", {})) - set(schema.get("required", []))
        for field in ON_REQUEST.get(name, ()):
            assert "include=" in schema["properties"][field]["description"], (name, field)
        optional -= ON_REQUEST.get(name, set())
        assert not optional, f"{name}: {sorted(optional)} are always present: required=True"


def test_timestamps_are_date_times(spec):
    for name in output_schemas(spec):
        for field, prop in spec["components"]["schemas"][name].get("properties", {}).items():
            if field == "at" or field.endswith("_at"):
                assert prop.get("format") == "date-time", (name, field)
    parameters = spec["paths"]["/orders"]["get"]["parameters"]
    schemas = {p["name"]: p["schema"] for p in parameters}
    assert [s["format"] for s in schemas["created_after"]["anyOf"]] == ["date", "date-time"]
    expires_at = spec["components"]["schemas"]["ApiKeyCreate"]["properties"]["expires_at"]
    assert "format" not in expires_at


def walk(node, path=""):
    if isinstance(node, dict):
        yield path, node
        for key, value in node.items():
            yield from walk(value, f"{path}/{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from walk(value, f"{path}/{i}")


def test_nullable_references_keep_their_type(spec):
    for where, node in walk(spec):
        for branch in node.get("anyOf", []) + node.get("oneOf", []):
            assert branch.get("type") != "object" or "properties" in branch, where
        if "allOf" in node and node.get("nullable"):
            assert len(node["allOf"]) == 1 and "$ref" in node["allOf"][0], where
    order = spec["components"]["schemas"]["Order"]["properties"]
    assert order["payment"] == {
        "allOf": [{"$ref": "#/components/schemas/Payment"}],
        "nullable": True,
    }


def test_enums_are_named_and_do_not_clash(spec):
    schemas = spec["components"]["schemas"]
    named = {tuple(s["enum"]): n for n, s in schemas.items() if "enum" in s}
    inline = Counter()
    for where, node in walk(spec):
        if "enum" in node and not re.fullmatch(r"/components/schemas/\w+", where):
            inline[tuple(node["enum"])] += 1
            assert tuple(node["enum"]) not in named, f"{where}: use the enum {named}"
    assert [values for values, n in inline.items() if n > 1] == [], "name repeated enums"
    assert schemas["Order"]["properties"]["status"] == {
        "$ref": "#/components/schemas/OrderStatusValue"
    }
    # openapi-python-client names an inline enum <Schema><Property>: no component may clash.
    for name, schema in schemas.items():
        for field, prop in schema.get("properties", {}).items():
            generated = name + "".join(part.title() for part in field.split("_"))
            if "enum" in prop or "enum" in prop.get("items", {}):
                assert generated not in schemas, f"{name}.{field} clashes with {generated}"


def test_servers_tags_and_security_schemes(spec):
    assert spec["servers"] == [{"url": "/", "description": "This shop."}]
    tags = [t["name"] for t in spec["tags"]]
    assert tags[:6] == ["products", "variants", "images", "categories", "collections", "orders"]
    assert tags[-1] == "audit"
    for name, scheme in spec["components"]["securitySchemes"].items():
        assert scheme["description"], name
    products = spec["paths"]["/products"]["get"]
    assert products["security"] == [{}, {"adminSession": []}, {"apiKey": []}]


def test_the_response_check_refuses_what_is_not_documented(app, owner_client):
    """The check every test client runs (tests/openapi_check.py) bites."""
    from flask import Response

    from tests.openapi_check import UndocumentedResponse, ValidatingClient, check

    assert isinstance(owner_client, ValidatingClient)
    product = owner_client.post("/products", json={"name": "Mug", "price_cents": 900}).json
    good = owner_client.get(f"/products/{product['id']}")
    check(app, "GET", f"/products/{product['id']}", good)
    wrong = [
        (418, {"message": "teapot"}, "status not documented"),
        (200, {**product, "extra": 1}, "body does not match"),
        (200, {**product, "created_at": "yesterday"}, "body does not match"),
        (200, {k: v for k, v in product.items() if k != "sku"}, "body does not match"),
        (404, {"error": "x"}, "body does not match"),
    ]
    for status, body, problem in wrong:
        response = Response(json.dumps(body), status, mimetype="application/json")
        with pytest.raises(UndocumentedResponse, match=problem):
            check(app, "GET", f"/products/{product['id']}", response)
    limited = Response(json.dumps({"message": "slow down"}), 429, mimetype="application/json")
    with pytest.raises(UndocumentedResponse, match="Retry-After"):
        check(app, "POST", "/auth/login", limited)
    outage = Response('{"message": "down"}', 503, mimetype="application/json")
    check(app, "GET", "/products", outage)  # 5xx: the default response


def test_the_readme_and_the_orders_guide_quote_real_answers(client, customer_client):
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    quoted = re.search(r"field errors named: `([^`]+)`", readme).group(1)
    body = {"email": "short@example.com", "password": "short", "name": "A"}
    assert client.post("/auth/register", json=body).json == {"message": quoted}
    guide = (Path(__file__).resolve().parents[2] / "docs" / "orders.md").read_text()
    comment = re.search(r'customer\.txt" "\$BASE/orders"\s+# (.*)', guide).group(1)
    assert comment.startswith('{"items": [') and comment.endswith('"next_cursor": null}')
    listed = customer_client.get("/orders").json
    assert set(listed) == {"items", "page", "page_size", "total", "total_is_exact", "next_cursor"}
