"""URL rules whose builders werkzeug writes when a URL is first built, not at start-up.

Binding a rule makes werkzeug write two Python functions for it (``Rule._compile_builder``:
an AST built, then compiled), the ones ``url_for`` calls. The app has about 1,100 rules and
builds URLs for a few dozen (the console's and storefront's links, redirects), yet every
process that starts it paid for all of them: a fifth of the import's CPU, in each gunicorn
worker, each CLI command and each test's server. Here each builder is a stub that writes
the real one at its first call and keeps it; the URLs are the same, and matching a request
does not use builders at all.

Where werkzeug has no ``_compile_builder`` any more (it is not public), rules are werkzeug's
own: the app is slower to start, nothing else changes.
"""

from werkzeug.routing import Rule as _Rule


class Rule(_Rule):
    """werkzeug's ``Rule``, its two URL builders written on first use (see the module)."""

    if hasattr(_Rule, "_compile_builder"):

        def _compile_builder(self, append_unknown=True):
            write = super()._compile_builder
            written = None

            def build(rule, /, **values):
                nonlocal written
                if written is None:  # two threads at once each write it; one is kept
                    written = write(append_unknown)
                return written(rule, **values)

            return build
