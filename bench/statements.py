"""How many SQL statements and writes a scenario's request costs, read from the
``X-Shop-SQL-*`` headers of a server run with ``SHOP_DEBUG_SQL_COUNT=1``."""

import json
import re
import time
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


LISTENER_WAIT_SECONDS = 10


def await_listener(env: dict) -> None:
    """With ``REDIS_URL`` in the server's ``env``: wait (at most ``LISTENER_WAIT_SECONDS``)
    until Redis reports a subscriber on the API key topic's channel, which a worker's first
    keyed request starts (``shop/net/announcements.py``). Without Redis, return at once."""
    if not env.get("REDIS_URL"):
        return
    import redis

    from shop.net import announcements

    prefix = env.get("SHOP_RATELIMIT_KEY_PREFIX") or "shop"
    channel = announcements.Announcements(None, prefix, 0).channel(announcements.API_KEYS)
    client = redis.Redis.from_url(env["REDIS_URL"])
    deadline = time.monotonic() + LISTENER_WAIT_SECONDS
    try:
        while client.pubsub_numsub(channel)[0][1] < 1:
            if time.monotonic() > deadline:
                raise RuntimeError(f"no worker listens on {channel} after {LISTENER_WAIT_SECONDS}s")
            time.sleep(0.05)
    finally:
        client.close()
