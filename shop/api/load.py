"""Request-body schemas compiled into plain functions: the same answer for a valid body, a
fraction of the time (issue 42: marshmallow's load was a tenth of checkout's CPU).

marshmallow loads each field through several generic calls (missing and null handling, type
checks, error stores, hooks found by introspection). ``compile_load`` turns a schema of plain
fields into one function that checks and copies a *valid* body straight through, running the
same validators and the schema's own ``validates_schema`` and ``post_load`` methods with the
arguments marshmallow passes them. Anything off that path goes to marshmallow's own ``load``,
which answers exactly as before (its errors, its messages):

- a value of another type than the field's (a ``str`` for ``String``, an ``int`` for a strict
  ``Integer``, a ``dict`` for ``Nested``, a ``list`` for ``List``), a ``null`` a field does
  not allow, a required field missing, an unknown key, a validator that refuses;
- a load with other arguments than the body (``unknown``, ``partial``, ``many``).

Compiled only when every field is one of those four exact classes (``Nested`` of one schema,
``List`` of one of them), without ``attribute`` paths, and the schema has no ``pre_load``,
no ``@validates`` and no collection-level hook; otherwise ``compile_load`` answers None.
A schema opts in with ``LOAD_COMPILED = True`` (``Blueprint.arguments``).
"""

from marshmallow import RAISE, Schema, ValidationError, fields
from marshmallow.decorators import POST_LOAD, PRE_LOAD, VALIDATES, VALIDATES_SCHEMA
from marshmallow.utils import missing


class _Fallback(Exception):
    """The fast path cannot take this body: let marshmallow load it."""


def compile_load(schema: Schema):
    """A ``load(data)`` equivalent to ``schema.load(data)``, or None if not compiled."""
    one = _compile(schema)
    if one is None:
        return None
    original = schema.load

    def load(data, **kwargs):
        """``schema.load``, compiled (see the module docstring)."""
        if kwargs and kwargs != {"unknown": RAISE}:
            return original(data, **kwargs)
        try:
            return one(data)
        except _Fallback:
            return original(data, **kwargs)

    return load


def _compile(schema: Schema):
    """A function loading one valid object with ``schema``; raises _Fallback otherwise."""
    hooks = schema._hooks
    unsupported = hooks[PRE_LOAD] or hooks[VALIDATES]
    later = [*hooks[VALIDATES_SCHEMA], *hooks[POST_LOAD]]
    if unsupported or schema.many or schema.partial or schema.unknown != RAISE:
        return None
    if any(many for _, many, _ in later):
        return None
    steps = []
    for name, field in schema.load_fields.items():
        value = _value(field)
        if value is None or (field.attribute and "." in field.attribute):
            return None
        steps.append((field.data_key or name, field.attribute or name, field, value))
    keys = frozenset(key for key, *_ in steps)
    validators = [_hook(schema, name, kwargs) for name, _, kwargs in hooks[VALIDATES_SCHEMA]]
    processors = [_hook(schema, name, kwargs) for name, _, kwargs in hooks[POST_LOAD]]

    def one(data):
        if type(data) is not dict or not keys.issuperset(data):
            raise _Fallback
        result = {}
        for key, attribute, field, value in steps:
            given = data.get(key, missing)
            if given is missing:
                if field.required:
                    raise _Fallback
                default = field.load_default
                if default is not missing:
                    result[attribute] = default() if callable(default) else default
                continue
            if given is None:
                if not field.allow_none:
                    raise _Fallback
                result[attribute] = None
                continue
            loaded = value(given)
            _validate(field, loaded)
            result[attribute] = loaded
        try:
            for validator, pass_original in validators:
                _call(validator, pass_original, result, data)
            for processor, pass_original in processors:
                result = _call(processor, pass_original, result, data)
        except ValidationError:
            raise _Fallback from None
        return result

    return one


def _hook(schema: Schema, name: str, kwargs: dict):
    """A hook method of ``schema`` and whether it takes the original data."""
    return getattr(schema, name), kwargs.get("pass_original", False)


def _call(hook, pass_original: bool, result: dict, data: dict):
    """A hook called as marshmallow calls it on one object (``many`` false, the schema's own
    ``partial`` and ``unknown``)."""
    if pass_original:
        return hook(result, data, many=False, partial=None, unknown=RAISE)
    return hook(result, many=False, partial=None, unknown=RAISE)


def _validate(field: fields.Field, value) -> None:
    """Run the field's validators; any refusal is marshmallow's to word."""
    try:
        for validator in field.validators:
            validator(value)
    except ValidationError:
        raise _Fallback from None


def _value(field: fields.Field):
    """A function checking a given (non-null) value of ``field`` and answering it loaded,
    or None when the field's type is not one compiled."""
    kind = type(field)
    if kind is fields.String:
        return _exactly(str)
    if kind is fields.Integer and field.strict and not field.as_string:
        return _exactly(int)
    if kind is fields.Nested and not field.many and field.unknown is None:
        nested = field.schema
        inner = _compile(nested) if isinstance(nested, Schema) else None
        return None if inner is None or nested.only or nested.exclude else _nested(inner)
    if kind is fields.List:
        item = _value(field.inner)
        return None if item is None or field.inner.validators else _list(item)
    return None


def _exactly(kind):
    def value(given):
        if type(given) is not kind:
            raise _Fallback
        return given

    return value


def _nested(inner):
    def value(given):
        return inner(given)  # checks it is a dict itself

    return value


def _list(item):
    def value(given):
        if type(given) is not list:
            raise _Fallback
        return [item(element) for element in given]

    return value
