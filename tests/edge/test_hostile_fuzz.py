"""Property: whatever hostile input reaches any documented operation, on either engine,
anonymous, as a customer or as the owner, the answer is never a 5xx and every error is
exactly ``{"message": "..."}``.

hypothesis draws, per operation, a fixed number of requests from the OpenAPI description:
path and query values, header values and JSON bodies built from the operation's own fields,
filled with NUL, lone surrogates, huge strings and numbers, deep nesting, out-of-range dates
and non-ASCII digits. The runtime stays bounded by ``EXAMPLES`` per operation.

Property: a query parameter an operation does not document is a 400 naming it, on every
documented operation, for whoever gets past the operation's guard (issue 22).
"""

import json
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

EXAMPLES = 15  # per operation and engine: about 70 operations, ~20 s an engine

# Routes that would end the fuzzer's own session or lock its owner out: tests cover them.
SKIPPED = ("/auth/logout", "/auth/password", "/auth/sessions", "/users/")

HOSTILE_TEXT = [
    "a\x00b",
    "\x00",
    "\ud800",
    "x\udfffy",
    "\U0001f600",
    "²",
    "٣",
    "x" * 70_000,
    "0001-01-01T00:00:00+05:00",
    "9999-12-31T23:59:59-01:00",
    "-1",
    "99999999999999999999999",
    "1e999",
    "' OR 1=1 --",
    "%00",
    "\r\nSet-Cookie: a=b",
    "",
]

# JSON text, not Python values: some of these no encoder would write (deep nesting).
RAW_JSON = [
    "[" * 2000 + "]" * 2000,
    '{"a":' * 500 + "1" + "}" * 500,
    "1" * 5000,
    "-" + "9" * 400,
    "1e999",
    "NaN",
    "null",
    "true",
    "[]",
    "{}",
    '"\\u0000"',
    '"\\ud800"',
    '{"\\u0000": 1}',
]

text = st.sampled_from(HOSTILE_TEXT) | st.text(max_size=20)
json_value = (
    st.sampled_from(RAW_JSON)
    | text.map(json.dumps)
    | st.integers(min_value=-(2**70), max_value=2**70).map(str)
    | st.lists(text.map(json.dumps), max_size=3).map(lambda items: "[" + ",".join(items) + "]")
)


def url_part(value: str) -> str:
    """A value percent-encoded as a client would put it in a path or query."""
    return quote(value.encode("utf-8", "surrogatepass"), safe="")


def schema_fields(spec: dict, schema: dict) -> list[str]:
    """The property names of a request body schema (following one $ref)."""
    if "$ref" in schema:
        schema = spec["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    return list(schema.get("properties", {}))


def operations(spec: dict):
    for path, item in spec["paths"].items():
        if path.startswith(SKIPPED):
            continue
        for method, operation in item.items():
            if method in ("get", "post", "put", "patch", "delete"):
                yield path, method, operation


def well_formed(parameter: dict) -> str:
    """A path parameter's value of the documented form (an id no record has), so it routes."""
    return "0" * 24 if parameter["schema"].get("pattern") == "^[0-9a-f]{24}$" else "fuzz"


@st.composite
def hostile_request(draw, spec, path, operation):
    """One request to ``operation``: its path, query string, headers and body text."""
    url = path
    query, headers = [], {}
    # Path parameters are documented on the path, the others on the operation.
    parameters = spec["paths"][path].get("parameters", []) + operation.get("parameters", [])
    for parameter in parameters:
        where, name = parameter["in"], parameter["name"]
        value = draw(text)
        if where == "path":
            # Half the time of the documented form, so that the request reaches the view.
            value = well_formed(parameter) if draw(st.booleans()) else url_part(value) or "x"
            url = url.replace("{" + name + "}", value)
        elif where == "query" and draw(st.booleans()):
            query.append(f"{url_part(name)}={url_part(value)}")
        elif where == "header" and draw(st.booleans()):
            headers[name] = value.replace("\r", "").replace("\n", "")[:1000]
    if draw(st.booleans()):
        query.append(f"{url_part(draw(text))}={url_part(draw(text))}")
    body = None
    content = operation.get("requestBody", {}).get("content", {}).get("application/json")
    if content is not None:
        names = schema_fields(spec, content["schema"])
        if draw(st.integers(0, 4)) == 0:
            body = draw(json_value)
        else:
            chosen = draw(st.lists(st.sampled_from(names), unique=True)) if names else []
            if draw(st.booleans()):
                chosen.append(draw(text))
            members = [json.dumps(name) + ":" + draw(json_value) for name in chosen]
            body = "{" + ",".join(members) + "}"
    if query:
        url += "?" + "&".join(query)
    return url, headers, body


def repeatable(examples: int):
    """hypothesis settings: ``examples`` draws, the same on every run, no deadline."""
    return settings(
        max_examples=examples,
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
    )


def assert_no_5xx(response, method, url):
    where = f"{method.upper()} {url[:200]}"
    assert response.status_code < 500, (where, response.get_data(as_text=True)[:500])
    if response.status_code >= 400:
        assert response.is_json, where
        body = response.json
        assert set(body) == {"message"} and isinstance(body["message"], str), (where, body)


def fuzz_operation(spec, callers, path, method, operation) -> None:
    """``EXAMPLES`` hostile requests to one operation, each by one of ``callers``."""

    @repeatable(EXAMPLES)
    @given(
        request=hostile_request(spec, path, operation),
        who=st.sampled_from(sorted(callers)),
    )
    def run(request, who):
        url, headers, body = request
        response = callers[who].open(
            url,
            method=method.upper(),
            headers=headers,
            data=body.encode("utf-8", "surrogatepass") if body is not None else None,
            content_type="application/json" if body is not None else None,
        )
        assert_no_5xx(response, method, url)

    try:
        run()
    except Exception as error:  # name the operation in the failure
        raise AssertionError(f"{method.upper()} {path}: {error}") from error


def test_no_hostile_input_reaches_a_5xx(app, owner_client, make_customer):
    spec = app.test_client().get("/openapi.json").json
    callers = {
        "anonymous": app.test_client(),
        "customer": make_customer(),
        "owner": owner_client,
    }
    checked = 0
    for path, method, operation in operations(spec):
        fuzz_operation(spec, callers, path, method, operation)
        checked += 1
    assert checked >= 66  # every operation but those that end sessions (66 when written)


@pytest.mark.parametrize("body", RAW_JSON)
def test_every_raw_body_on_a_json_route_is_answered(owner_client, body):
    """The raw bodies above, each on a route that stores JSON as given (content)."""
    response = owner_client.put(
        "/content/fuzz",
        data='{"type": "page", "data": {"x": ' + body + "}}",
        content_type="application/json",
    )
    assert_no_5xx(response, "put", "/content/fuzz")


# An undeclared query parameter ------------------------------------------------------------

UNDECLARED_EXAMPLES = 8  # per operation and engine, each sent by three callers

undeclared_name = st.sampled_from(["limit", "offset", "cursor", "foo", "slug", "Page", "q "]) | (
    st.text(st.characters(codec="utf-8", exclude_characters="\x00"), min_size=1, max_size=20)
)


def routable(spec: dict, path: str) -> str:
    """``path`` with each parameter filled in the documented form, so that it routes."""
    for parameter in spec["paths"][path].get("parameters", []):
        path = path.replace("{" + parameter["name"] + "}", well_formed(parameter))
    return path


def check_undeclared(callers, url, method, declared) -> None:
    """Each caller gets a 400 naming the parameter, or the guard's 401 or 403 first."""

    @repeatable(UNDECLARED_EXAMPLES)
    @given(name=undeclared_name.filter(lambda name: name not in declared), value=text)
    def run(name, value):
        query = f"{url}?{url_part(name)}={url_part(value)}"
        statuses = []
        for client in callers.values():
            response = client.open(query, method=method.upper())
            statuses.append(response.status_code)
            assert response.status_code in (400, 401, 403), response.get_data(as_text=True)
            if response.status_code == 400:
                assert response.json["message"].startswith(f"{name}: "), response.json
        assert 400 in statuses, statuses

    try:
        run()
    except Exception as error:
        raise AssertionError(f"{method.upper()} {url}: {error}") from error


def test_an_undeclared_query_parameter_is_400_on_every_operation(app, owner_client, make_customer):
    """Every documented operation, those that end a session included: the refusal comes
    before the view does anything."""
    spec = app.test_client().get("/openapi.json").json
    callers = {"anonymous": app.test_client(), "customer": make_customer(), "owner": owner_client}
    checked = 0
    for path, item in spec["paths"].items():
        for method, operation in item.items():
            if method not in ("get", "post", "put", "patch", "delete"):
                continue
            parameters = operation.get("parameters", [])
            declared = {p["name"] for p in parameters if p["in"] == "query"}
            check_undeclared(callers, routable(spec, path), method, declared)
            checked += 1
    assert checked >= 70
