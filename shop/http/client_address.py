"""The client's address, decided once per request before Flask sees it.

Everything that reads ``request.remote_addr`` (rate limits, API keys' ``allowed_ips`` and
``last_used_ip``, sessions, the audit log) gets an IP address in one canonical text, or the
server's own peer value when it has none (a Unix socket). Behind ``SHOP_TRUSTED_PROXIES``
werkzeug's ``ProxyFix`` takes the address from ``X-Forwarded-For``; a value there that is
not an IP address (``<script>``, ``host:port``, an IPv6 zone) is ignored as if the header
were too short, and the TCP peer stays the address: it is never stored or shown.
"""

from werkzeug.middleware.proxy_fix import ProxyFix

from shop.net.addresses import canonical


class ClientAddress:
    """WSGI middleware: ``REMOTE_ADDR`` becomes the canonical client address."""

    def __init__(self, app):
        self.app = app

    def __call__(self, environ, start_response):
        """Keep a forwarded address only if it is one; else fall back to the TCP peer."""
        peer = environ.get("werkzeug.proxy_fix.orig", environ).get("REMOTE_ADDR")
        environ["REMOTE_ADDR"] = canonical(environ.get("REMOTE_ADDR")) or canonical(peer) or peer
        return self.app(environ, start_response)


def wrap(wsgi_app, trusted_proxies: int, trust_forwarded_host: bool):
    """``wsgi_app`` behind the client-address check and, with trusted proxies, ProxyFix."""
    wsgi_app = ClientAddress(wsgi_app)
    if trusted_proxies:
        n = trusted_proxies
        # X-Forwarded-Host only where the hosts it may name are listed (SHOP_TRUSTED_HOSTS).
        x_host = n if trust_forwarded_host else 0
        wsgi_app = ProxyFix(wsgi_app, x_for=n, x_proto=n, x_host=x_host)
    return wsgi_app
