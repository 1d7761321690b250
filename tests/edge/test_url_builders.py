"""URL rules whose builders are written on first use (shop/http/routing.py): every rule of
the app builds the URL werkzeug's own rule builds, with and without extra arguments."""

from werkzeug.routing import Map
from werkzeug.routing import Rule as WerkzeugRule

from shop.http import routing


def _values(rule):
    return {
        name: 7 if type(converter).__name__ == "IntegerConverter" else "a b/c"
        for name, converter in rule._converters.items()
    }


def test_every_rule_builds_the_url_werkzeugs_rule_builds(app):
    ours = app.url_map
    theirs = Map(
        [
            WerkzeugRule(r.rule, endpoint=r.endpoint, defaults=r.defaults, methods=r.methods)
            for r in ours.iter_rules()
        ],
        converters=ours.converters,
    )
    assert all(type(rule) is routing.Rule for rule in ours.iter_rules())
    ours_adapter, theirs_adapter = ours.bind("shop.example", "/"), theirs.bind("shop.example", "/")
    built = 0
    for rule in ours.iter_rules():
        method = sorted(rule.methods)[0]
        for extra in ({}, {"q": "tea & cake", "page": 2}):
            values = {**_values(rule), **extra}
            url = ours_adapter.build(rule.endpoint, values, method=method)
            assert url == theirs_adapter.build(rule.endpoint, values, method=method)
            built += 1
    assert built > 500
