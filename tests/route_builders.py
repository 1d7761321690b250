"""Werkzeug's URL builders compiled once per test process, not once per app.

Every case builds its own app, and werkzeug generates two Python functions for each of its
~1,100 URL rules (``Rule._compile_builder``: an AST built, then compiled): 42 of create_app's
56 ms of CPU, measured on 2026-11-28, when they were written as the rules were bound. The
app now writes each at its first use (``shop/http/routing.py``), so a case pays only for the
URLs it builds (a console page builds dozens); this keeps those too. The generated function
depends only on the rule's text and its parsed parts (a dynamic part calls the converter of
the rule it is bound to, ``self._converters[name]``, at call time), so the same rule in the
next app gets the same function, bound to its own rule as werkzeug binds it. A rule with
``defaults`` (folded into the function through its converter) is compiled as before.

Tests only: a served app writes each builder once per process anyway. Where werkzeug has no
such method any more, nothing is changed.
"""

from werkzeug.routing.rules import Rule

_BUILDERS: dict[tuple, object] = {}


def install() -> None:
    original = getattr(Rule, "_compile_builder", None)
    if original is None or getattr(original, "cached", False):
        return

    def compile_builder(self, append_unknown=True):
        if self.defaults:
            return original(self, append_unknown)
        key = (self.rule, tuple(self._trace), append_unknown)
        if key not in _BUILDERS:
            _BUILDERS[key] = original(self, append_unknown)
        return _BUILDERS[key]

    compile_builder.cached = True
    Rule._compile_builder = compile_builder
