"""One HTTP attempt of a webhook delivery, and the checks on its address.

At creation a URL must be http(s) with a host and no credentials, https unless
``SHOP_WEBHOOKS_ALLOW_HTTP``; a literal private address or ``localhost`` is refused there
already. At delivery the host is resolved and every address it resolves to must be public
(not private, loopback, link-local, shared, reserved or multicast) unless
``SHOP_WEBHOOKS_ALLOW_PRIVATE``; the connection then goes to the address that was checked,
so a second DNS answer cannot point it elsewhere. Redirects are not followed, the response
body is read up to ``MAX_READ`` bytes, and the whole attempt is cut off at the timeout.
"""

import contextlib
import http.client
import ipaddress
import socket
import ssl
import threading
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

MAX_URL = 2000
MAX_READ = 16 * 1024  # bytes of a response body read at most
EXCERPT = 500  # characters of it kept in the delivery log
USER_AGENT = "shop-webhooks/1"


class UrlError(ValueError):
    """A webhook URL we refuse; the message says why."""


@dataclass
class Outcome:
    """What one attempt gave: a status code, or an error before or instead of one."""

    status_code: int | None
    duration_ms: int
    excerpt: str | None = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300


def _forbidden(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if ip.version == 6 and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return not ip.is_global or ip.is_multicast


def check_url(url: str, *, allow_http: bool, allow_private: bool) -> str:
    """The URL, stripped, if a webhook may use it; UrlError naming the problem otherwise."""
    url = url.strip()
    if len(url) > MAX_URL:
        raise UrlError(f"url: at most {MAX_URL} characters.")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise UrlError("url: not a valid URL.") from None
    if parts.scheme not in ("https", "http") or not parts.hostname:
        raise UrlError("url: use an absolute https:// URL.")
    if parts.scheme == "http" and not allow_http:
        raise UrlError("url: must use https.")
    if parts.username or parts.password:
        raise UrlError("url: must not carry a user name or password.")
    if port == 0:
        raise UrlError("url: not a valid port.")
    host = parts.hostname
    if not allow_private:
        literal = None
        with contextlib.suppress(ValueError):
            literal = ipaddress.ip_address(host)
        if (
            host == "localhost"
            or host.endswith(".localhost")
            or (literal is not None and _forbidden(host))
        ):
            raise UrlError("url: private, loopback and link-local addresses are refused.")
    return url


def _resolve(host: str, port: int, allow_private: bool) -> str:
    """The address to connect to, after checking every address ``host`` resolves to."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as error:
        raise UrlError(f"cannot resolve {host}: {error.strerror or error}") from None
    addresses = [info[4][0] for info in infos]
    if not allow_private:
        refused = [a for a in addresses if _forbidden(a)]
        if refused:
            raise UrlError(
                f"refused: {host} resolves to {refused[0]}, a private, loopback or"
                " link-local address"
            )
    return addresses[0]


class _PinnedHTTPConnection(http.client.HTTPConnection):
    """http.client's connection to an address already resolved and checked."""

    def __init__(self, address, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._address = address

    def connect(self):
        self.sock = socket.create_connection((self._address, self.port), self.timeout)


class _PinnedHTTPSConnection(http.client.HTTPSConnection):
    """The same over TLS, the certificate checked against the URL's host name."""

    def __init__(self, address, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._address = address

    def connect(self):
        sock = socket.create_connection((self._address, self.port), self.timeout)
        self.sock = self._context.wrap_socket(sock, server_hostname=self.host)


def post(url: str, body: bytes, headers: dict, *, timeout: float, allow_private: bool) -> Outcome:
    """POST ``body`` to ``url`` once; never raises for the receiver's or the network's faults."""
    started = time.monotonic()

    def elapsed() -> int:
        return int((time.monotonic() - started) * 1000)

    parts = urlsplit(url)
    https = parts.scheme == "https"
    port = parts.port or (443 if https else 80)
    try:
        address = _resolve(parts.hostname, port, allow_private)
    except UrlError as error:
        return Outcome(None, elapsed(), error=str(error))
    if https:
        conn = _PinnedHTTPSConnection(
            address, parts.hostname, port, timeout=timeout, context=ssl.create_default_context()
        )
    else:
        conn = _PinnedHTTPConnection(address, parts.hostname, port, timeout=timeout)
    # The socket timeout bounds each read; this bounds the attempt as a whole.
    watchdog = threading.Timer(timeout, _cut, [conn])
    watchdog.daemon = True
    watchdog.start()
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    try:
        conn.request(
            "POST",
            target,
            body=body,
            headers={
                **headers,
                "Content-Type": "application/json",
                "User-Agent": USER_AGENT,
                "Connection": "close",
            },
        )
        response = conn.getresponse()
        data = response.read(MAX_READ)
        excerpt = data.decode("utf-8", "replace")[:EXCERPT]
        error = None
        if 300 <= response.status < 400:
            location = (response.getheader("Location") or "")[:200]
            error = f"redirect not followed (Location: {location})"
        return Outcome(response.status, elapsed(), excerpt, error)
    except (OSError, http.client.HTTPException, ValueError) as error:
        if elapsed() >= timeout * 1000:
            return Outcome(None, elapsed(), error=f"timed out after {timeout:g} s")
        return Outcome(None, elapsed(), error=f"{type(error).__name__}: {error}"[:300])
    finally:
        watchdog.cancel()
        conn.close()


def _cut(conn) -> None:
    """Stop an attempt that overran its time: the blocked read fails at once."""
    sock = conn.sock
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)
