"""Response schemas compiled into plain functions: the same JSON, a third of the time.

marshmallow serialises each field of each row through several generic calls (accessor,
missing-value and default handling, type conversion). Our responses are dicts built from SQL
rows whose values already have the right type, so ``compile_dump`` turns a schema into one
function that copies such values straight through and hands anything else to the field's
own ``_serialize``, or to marshmallow altogether:

- a key missing from a row: left out of the answer, as marshmallow leaves it out (a field
  only some answers carry, such as a product's ``variants``, costs no fallback);
- a row that is not a dict: marshmallow's own ``dump``;
- a field type not listed below, a dotted ``attribute``, a ``dump_default``: that field's
  ``serialize``, as marshmallow would call it;
- a schema with ``pre_dump``/``post_dump`` hooks: not compiled at all (load hooks do not
  matter here).
"""

from flask import Response, current_app
from marshmallow import Schema, fields
from marshmallow.utils import missing

# Field types whose _serialize returns a value of this exact type unchanged.
_PASS_THROUGH = {
    fields.String: str,
    fields.Integer: int,
    fields.Boolean: bool,
}


class _Fallback(Exception):
    """The fast path cannot take this object: let marshmallow dump it."""


def compile_dump(schema: Schema):
    """A ``dump(obj, many=None)`` equivalent to ``schema.dump``, or None if not worth it.

    The function for one object is written at the first dump, not here: every response
    schema is wrapped when its module is imported, and writing all of them (with their
    nested schemas' instances) was a fifth of the app's import, paid again by every process
    that starts it: a worker, each CLI command, a test's server. Two threads dumping first at
    once each write the same function; one is kept.
    """
    if schema._hooks.get("pre_dump") or schema._hooks.get("post_dump"):
        return None
    original = schema.dump
    one = None

    def dump(obj, *, many=None):
        """``schema.dump``, compiled (see the module docstring)."""
        nonlocal one
        if one is None:
            one = _compile_one(schema)
        many = schema.many if many is None else many
        try:
            return [one(item) for item in obj] if many else one(obj)
        except _Fallback:
            return original(obj, many=many)

    return dump


def _compile_one(schema: Schema):
    """A function serialising one object with ``schema``; raises _Fallback when it cannot.

    Its source is written out for the schema's fields, one straight line each (as dataclasses
    writes ``__init__``): a loop over the fields cost a tuple unpack and two tests per field,
    and lists of orders or products dump thousands of fields a page (issue 29).
    """
    names = {"missing": missing, "_Fallback": _Fallback}
    lines = ["def one(obj):", "    if type(obj) is not dict:", "        raise _Fallback"]
    lines += ["    get = obj.get", "    gone = ()"]
    steps = [_step(name, field, schema) for name, field in schema.dump_fields.items()]
    for i, (key, attr, exact, convert) in enumerate(steps):
        names[f"c{i}"] = convert
        if attr is None:  # marshmallow's own way for this field
            lines.append(f"    v{i} = c{i}(None, obj)")
            lines += [f"    if v{i} is missing:", f"        gone += ({key!r},)"]
            continue
        lines.append(f"    v{i} = get({attr!r}, missing)")
        if exact is not None:  # the common case: no call
            names[f"t{i}"] = exact
            lines.append(f"    if v{i} is not None and type(v{i}) is not t{i}:")
            indent = "        "
        else:
            indent = "    "
        lines += [
            f"{indent}if v{i} is missing:",
            f"{indent}    gone += ({key!r},)",
            f"{indent}else:",
            f"{indent}    v{i} = c{i}(v{i}, obj)",
        ]
    lines.append(
        "    out = {" + ", ".join(f"{step[0]!r}: v{i}" for i, step in enumerate(steps)) + "}"
    )
    # A key the row lacks is left out, in marshmallow's order for the rest: deleted, not
    # the dict built again (a product in a list lacks ``variants``: every item, every page).
    lines += ["    for key in gone:", "        del out[key]", "    return out"]
    exec("\n".join(lines), names)  # noqa: S102 - our own schema's field names, quoted by repr
    return names["one"]


def _step(name: str, field: fields.Field, schema: Schema):
    """(output key, source key or None, pass-through type or None, convert(value, obj))."""
    key = field.data_key or name
    attr = field.attribute or name
    convert = None
    if "." not in attr and field.dump_default is missing:
        convert = _converter(field, attr)
    if convert is None:
        return key, None, None, _generic(name, field, schema)
    return key, attr, _exact_type(field), convert


def _exact_type(field: fields.Field) -> type | None:
    """The type whose values the field passes through unchanged, if it has one."""
    if getattr(field, "as_string", False):
        return None
    return _PASS_THROUGH.get(type(field))


def _converter(field: fields.Field, attr: str):
    """convert(value, obj) for a field of a known type (None passes through), else None."""
    kind = type(field)
    exact = _exact_type(field)
    if exact is not None:

        def convert(value, obj):
            if value is None or type(value) is exact:
                return value
            return field._serialize(value, attr, obj)

        return convert
    if kind is fields.Raw:
        return lambda value, obj: value
    if kind is fields.Dict and _text_to_text(field):
        return lambda value, obj: (
            value if type(value) is dict else field._serialize(value, attr, obj)
        )
    if kind is fields.Nested and isinstance(field.schema, Schema):
        inner = compile_dump(field.schema)
        if inner is None:
            return None
        many = field.many

        def nested(value, obj):
            return None if value is None else inner(value, many=many)

        return nested
    if kind is fields.List:
        item = _converter(field.inner, attr)
        if item is None:
            inner = field.inner

            def item(value, obj):
                return inner._serialize(value, attr, obj)

        exact = _exact_type(field.inner)

        def each(value, obj):
            if value is None:
                return None
            if exact is not None and type(value) is list:  # strings to strings: a copy
                for element in value:
                    if element is not None and type(element) is not exact:
                        break
                else:
                    return value.copy()
            return [item(element, obj) for element in value]

        return each
    return None


def _text_to_text(field: fields.Dict) -> bool:
    """A dict of strings to strings: its values pass through as they are (ours come from JSON)."""
    return all(
        type(f) is fields.String and not getattr(f, "as_string", False)
        for f in (field.key_field, field.value_field)
    )


def _generic(name: str, field: fields.Field, schema: Schema):
    """convert(_, obj) running marshmallow's own serialisation of one field."""

    def convert(_value, obj):
        return field.serialize(name, obj, accessor=schema.get_attribute)

    return convert


# -- answers whose JSON the database wrote ------------------------------------------------


def json_text(text: str) -> Response:
    """A 200 answer of JSON ``text`` already in its response schema's shape (an order, built
    by ``orders/order_json.py``): copied as it is, neither parsed, dumped nor encoded."""
    return current_app.response_class(text + "\n", mimetype="application/json")


def json_page(page: dict) -> Response:
    """A list's answer (``shop.db.pages.paginate``) whose ``items`` are such JSON texts: the
    envelope is encoded here, in the page schema's field order, and the items copied into it.
    A page of 20 orders so costs a string join instead of a dump of ~1,500 fields and their
    encoding (issue 29)."""
    rest = {k: v for k, v in page.items() if k != "items"}
    envelope = current_app.json.dumps(rest, separators=(",", ":"))
    return json_text('{"items":[' + ",".join(page["items"]) + "]," + envelope[1:])
