"""How many SQL statements and writes a scenario's request costs, read from the
``X-Shop-SQL-*`` headers of a server run with ``SHOP_DEBUG_SQL_COUNT=1``."""

import json
import re
import urllib.error
import urllib.request

from bench import seed


def count(server, scenarios, data_of) -> dict:
    """Statements and writes of each scenario's request, the second time it is made;
    ``data_of(scenario)`` is the context its data is present in."""
    counts = {}
    paths = routes(server.url)
    for scenario in scenarios:
        if (scenario.method, scenario.route) not in paths:
            continue
        with data_of(scenario):
            for method, path, body in scenario.probes():
                counts[scenario.name] = probe(server.url, method, path, body, scenario.headers)
    return counts


def probe(url, method, path, body, headers) -> tuple:
    request = urllib.request.Request(  # noqa: S310 - our own http://127.0.0.1 server
        url + path,
        data=body.encode() if body else None,
        method=method,
        headers={"User-Agent": seed.USER_AGENT, **headers},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310
            h, status = response.headers, response.status
    except urllib.error.HTTPError as error:
        h, status = error.headers, error.code
    return (
        int(h.get("X-Shop-SQL-Statements", -1)),
        int(h.get("X-Shop-SQL-Writes", -1)),
        status,
    )


def routes(url: str) -> set:
    """(METHOD, path with {} for parameters) of every operation the server documents."""
    with urllib.request.urlopen(url + "/openapi.json", timeout=10) as response:  # noqa: S310
        spec = json.load(response)
    return {
        (method.upper(), re.sub(r"\{[^}]+\}", "{}", path))
        for path, operations in spec["paths"].items()
        for method in operations
    }
