"""One HTTP attempt of a webhook delivery, and the checks on its address.

At creation a URL must be http(s) with a host and no credentials, https unless
``SHOP_WEBHOOKS_ALLOW_HTTP``; a host written as an address (in any form the system's resolver
reads as one: ``numeric_addresses``) that is private, and ``localhost``, are refused there
already. At delivery the host is resolved and every address it resolves to must be public
(global unicast; for IPv6 forms that embed an IPv4 address, that address too:
``address_allowed``) unless
``SHOP_WEBHOOKS_ALLOW_PRIVATE``; the connection then goes to the address that was checked,
so a second DNS answer cannot point it elsewhere. Redirects are not followed, the response
body is read up to ``MAX_READ`` bytes, and the whole attempt is cut off at the timeout. A
worker keeps each origin's connection open for its next delivery (``Connections``); the
request and its answer are written and read here (``_Exchange``), over http.client's
connection.
"""

import contextlib
import functools
import http.client
import ipaddress
import re
import socket
import ssl
import threading
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

from shop.net import deadlines

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


# IPv6 forms that carry an IPv4 address: the IPv4 address they reach is the one judged.
_V4_IN_LOW_32_BITS = tuple(
    ipaddress.ip_network(n)
    for n in (
        "::ffff:0:0/96",  # IPv4-mapped
        "::ffff:0:0:0/96",  # IPv4-translated (SIIT)
        "64:ff9b::/96",  # NAT64, the well-known prefix: a NAT64 gateway reaches the IPv4 one
        "::/96",  # IPv4-compatible (deprecated; `::` and `::1` fall in here too)
    )
)
# Refused whatever they carry: the local-use NAT64 prefix (the IPv4 address may sit anywhere
# in it, by the operator's choice of prefix length), Teredo (its client address is
# obfuscated and it is a tunnel to wherever its server relays), and the deprecated
# site-local range that some networks still route internally.
_REFUSED_V6 = tuple(ipaddress.ip_network(n) for n in ("64:ff9b:1::/48", "2001::/32", "fec0::/10"))


def address_allowed(address: str) -> bool:
    """Whether a webhook may connect to ``address``: global unicast only, and for an IPv6
    form that embeds an IPv4 address (mapped, translated, compatible, NAT64, 6to4) the IPv4
    address must be global unicast too. The one check, at creation and at connect time."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if ip.version == 6:
        if any(ip in network for network in _REFUSED_V6) or ip.is_site_local:
            return False
        if any(ip in network for network in _V4_IN_LOW_32_BITS):
            ip = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
        elif ip.sixtofour is not None and not address_allowed(str(ip.sixtofour)):
            return False
    return ip.is_global and not ip.is_multicast and not ip.is_unspecified


def numeric_addresses(host: str) -> list[str] | None:
    """The addresses ``host`` stands for when it is written as an address, read as the
    system's resolver reads it (``getaddrinfo`` with ``AI_NUMERICHOST``, after the IDNA
    mapping Python applies to every host it resolves): IPv6, dotted quads and the shorter,
    octal, hex and decimal forms ``inet_aton`` takes, so ``127.1``, ``0177.0.0.1``,
    ``0x7f000001``, ``2130706433`` and ``１２７.０.０.１`` are all 127.0.0.1. None for a
    name, which only DNS can answer. What creation judges is what delivery will reach."""
    with contextlib.suppress(ValueError):  # an IPv6 scope (fe80::1%eth0) the host lacks
        return [str(ipaddress.ip_address(host))]
    try:
        infos = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM, flags=socket.AI_NUMERICHOST)
    except (OSError, UnicodeError, ValueError):
        return None
    return [info[4][0] for info in infos]


def first_refused(addresses: list[str]) -> str | None:
    """The first of ``addresses`` a webhook may not reach (``address_allowed``), or None:
    the one judgement of a host's addresses, at creation and at delivery."""
    return next((a for a in addresses if not address_allowed(a)), None)


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
    addresses = numeric_addresses(host)
    name = _check_host_name(host) if addresses is None else None
    if allow_private:
        return url
    refused = first_refused(addresses or [])
    if refused is not None:
        written = "" if refused == host else f" ({host} is {refused})"
        raise UrlError(f"url: private, loopback and link-local addresses are refused{written}.")
    if name is not None and (name == "localhost" or name.endswith(".localhost")):
        raise UrlError("url: private, loopback and link-local addresses are refused (localhost).")
    return url


MAX_HOST = 253  # characters of a DNS name, and of each of its labels
MAX_LABEL = 63


def _check_host_name(host: str) -> str:
    """``host`` as DNS carries it (IDNA-encoded, no trailing dot: ``ｌｏｃａｌｈｏｓｔ.`` is
    ``localhost``); UrlError unless it is IDNA-encodable with labels of 1 to 63 characters
    and 253 in all (a name beyond them would fail at every delivery)."""
    try:
        encoded = host.rstrip(".").encode("idna").decode("ascii")
    except UnicodeError:
        raise UrlError("url: the host is not a valid domain name.") from None
    if len(encoded) > MAX_HOST:
        raise UrlError(f"url: the host name is longer than {MAX_HOST} characters.")
    if any(not 0 < len(label) <= MAX_LABEL for label in encoded.split(".")):
        raise UrlError(f"url: each part of the host name must have 1 to {MAX_LABEL} characters.")
    return encoded.lower()


def _resolve(host: str, port: int, allow_private: bool) -> str:
    """The address to connect to, after checking every address ``host`` resolves to."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as error:
        raise UrlError(f"cannot resolve {host}: {error.strerror or error}") from None
    except UnicodeError:  # a name IDNA cannot encode (a label over 63 characters, say)
        raise UrlError(f"cannot resolve {host}: not a valid domain name") from None
    addresses = [info[4][0] for info in infos]
    refused = None if allow_private else first_refused(addresses)
    if refused is not None:
        raise UrlError(
            f"refused: {host} resolves to {refused}, a private, loopback or link-local address"
        )
    return addresses[0]


def _open_socket(address: str, port: int, timeout: float) -> socket.socket:
    """A TCP connection to a checked address. Without Nagle, as http.client's own: it sends
    a request's head and body apart, and on a kept connection the body would otherwise wait
    for the receiver's delayed acknowledgement (40 ms a delivery)."""
    sock = socket.create_connection((address, port), timeout)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


_CONTROL = re.compile("[\x00-\x20\x7f]")  # what http.client refuses in a request target
_MAX_LINE = 65536  # http.client's bounds on a response's head
_MAX_HEADERS = 100


@dataclass
class _Answer:
    """A response as far as an attempt reads it: at most ``MAX_READ`` bytes of its body, and
    whether the connection may carry the next request (the body read whole, not closing)."""

    status: int
    headers: dict[str, str]
    body: bytes
    reusable: bool


class _Exchange:
    """One POST and its response on an http.client connection, written and read here: the
    request in one write, the response's head read by a few lines of code. http.client's
    ``request`` and ``getresponse`` (a header at a time, an e-mail parser for the response's
    head, a new file object per response) were half of the worker's CPU per delivery. The
    connection itself (``connect``, TLS, ``close``) is still http.client's."""

    _reader = None  # the socket's buffered reader, kept with the connection

    def post(self, target: str, headers: dict, body: bytes) -> _Answer:
        """Send the request and read the answer (its body up to ``MAX_READ`` bytes)."""
        found = _CONTROL.search(target)
        if found:  # as http.client refuses it
            raise http.client.InvalidURL(
                f"URL can't contain control characters. {target!r} "
                f"(found at least {found.group()!r})"
            )
        line = f"POST {target} HTTP/1.1\r\n".encode("ascii")
        head = [f"Host: {_host_header(self.host, self.port, self.default_port)}"]
        head += ["Accept-Encoding: identity", f"Content-Length: {len(body)}"]
        head += [f"{name}: {value}" for name, value in headers.items()]
        if self.sock is None:
            self.connect()
        self.sock.sendall(line + "\r\n".join(head).encode("latin-1") + b"\r\n\r\n" + body)
        return self._answer()

    def _answer(self) -> _Answer:
        if self._reader is None:
            self._reader = self.sock.makefile("rb")
        reader = self._reader
        while True:
            version, status = _status_line(reader)
            headers = _head(reader)
            if status != 100:  # 100 Continue: its head is skipped, as http.client does
                break
        connection = headers.get("connection", "").lower()
        if version == "HTTP/1.1":
            closing = "close" in connection
        else:  # HTTP/1.0
            closing = not ("keep-alive" in connection or "keep-alive" in headers)
        if status in (204, 304) or 100 <= status < 200:
            return _Answer(status, headers, b"", status >= 200 and not closing)
        if "chunked" in headers.get("transfer-encoding", "").lower():
            body, whole = _chunked(reader)
            return _Answer(status, headers, body, whole and not closing)
        try:
            length = int(headers["content-length"])
        except (KeyError, ValueError):
            length = -1
        if length < 0:  # until the receiver closes
            return _Answer(status, headers, reader.read(MAX_READ), False)
        body = reader.read(min(length, MAX_READ))  # short when the receiver closed early
        return _Answer(status, headers, body, len(body) == length and not closing)

    def close(self):
        reader, self._reader = self._reader, None
        if reader is not None:
            reader.close()
        super().close()


@functools.lru_cache(maxsize=1024)
def _host_header(host: str, port: int, default_port: int) -> str:
    """The ``Host`` header http.client writes for a connection to ``host``."""
    try:
        encoded = host.encode("ascii")
    except UnicodeEncodeError:
        encoded = host.encode("idna")
    text = f"[{encoded.decode('ascii')}]" if ":" in host else encoded.decode("ascii")
    return text if port == default_port else f"{text}:{port}"


def _line(reader) -> bytes:
    line = reader.readline(_MAX_LINE + 1)
    if len(line) > _MAX_LINE:
        raise http.client.LineTooLong("header line")
    return line


def _status_line(reader) -> tuple[str, int]:
    """The answer's version and status code (http.client's errors for what it refuses)."""
    line = _line(reader)
    if not line:  # a kept connection the receiver closed meanwhile
        raise http.client.RemoteDisconnected("Remote end closed connection without response")
    parts = line.decode("iso-8859-1").split(None, 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/"):
        raise http.client.BadStatusLine(repr(line))
    if parts[0] not in ("HTTP/1.1", "HTTP/1.0"):
        raise http.client.UnknownProtocol(parts[0])
    try:
        status = int(parts[1])
    except ValueError:
        raise http.client.BadStatusLine(repr(line)) from None
    if not 100 <= status <= 999:
        raise http.client.BadStatusLine(repr(line))
    return parts[0], status


def _head(reader) -> dict[str, str]:
    """The answer's headers, names in lower case (repeated ones joined by ``, ``)."""
    headers: dict[str, str] = {}
    name = None
    for _ in range(_MAX_HEADERS + 1):
        line = _line(reader)
        if line in (b"\r\n", b"\n", b""):
            return headers
        text = line.decode("iso-8859-1").rstrip("\r\n")
        if text[:1] in (" ", "\t") and name is not None:  # a folded line continues the last
            headers[name] += " " + text.strip()
            continue
        name, _, value = text.partition(":")
        name, value = name.strip().lower(), value.strip()
        headers[name] = f"{headers[name]}, {value}" if name in headers else value
    raise http.client.HTTPException(f"got more than {_MAX_HEADERS} headers")


def _chunked(reader) -> tuple[bytes, bool]:
    """A chunked body up to ``MAX_READ`` bytes, and whether it was read to its end."""
    parts, size = [], 0
    while True:
        line = _line(reader).split(b";", 1)[0]
        try:
            left = int(line, 16)
        except ValueError:
            raise http.client.IncompleteRead(b"".join(parts)) from None
        if left == 0:
            while _line(reader) not in (b"\r\n", b"\n", b""):  # the trailer
                pass
            return b"".join(parts), True
        if size + left > MAX_READ:
            parts.append(reader.read(MAX_READ - size))
            return b"".join(parts), False
        chunk = reader.read(left)
        if len(chunk) < left:
            raise http.client.IncompleteRead(chunk, left - len(chunk))
        parts.append(chunk)
        size += left
        reader.readline(_MAX_LINE)  # the chunk's CRLF


class _PinnedHTTPConnection(_Exchange, http.client.HTTPConnection):
    """http.client's connection to an address already resolved and checked."""

    def __init__(self, address, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._address = address

    def connect(self):
        self.sock = _open_socket(self._address, self.port, self.timeout)


class _PinnedHTTPSConnection(_Exchange, http.client.HTTPSConnection):
    """The same over TLS, the certificate checked against the URL's host name."""

    def __init__(self, address, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._address = address

    def connect(self):
        sock = _open_socket(self._address, self.port, self.timeout)
        self.sock = self._context.wrap_socket(sock, server_hostname=self.host)


class Connections:
    """Connections kept open between attempts, up to ``per_origin`` per origin (as many as
    a worker sends to it at once); shared by the worker's sending threads (an attempt takes
    a kept connection out, so no two use one).

    An origin's address is resolved and checked when its connection opens; later attempts
    reuse it (keep-alive) instead of a new TCP (and TLS) handshake per delivery, for at most
    ``KEEP_FOR`` seconds, so the check stays fresh. ``close`` ends them all.
    """

    KEEP_FOR = 60.0

    def __init__(self, keep: bool = True, per_origin: int = 1):
        self.keep = keep
        self.per_origin = per_origin
        self._open: dict[tuple, list[tuple[float, http.client.HTTPConnection]]] = {}
        self._lock = threading.Lock()

    def get(self, parts, timeout: float, allow_private: bool) -> tuple:
        """An origin's open connection and True, or a new one and False (UrlError when its
        address is refused)."""
        scheme, host, port = key = origin(parts)
        with self._lock:
            kept = self._open.get(key)
            kept = kept.pop() if kept else None
        if kept is not None:
            if time.monotonic() - kept[0] < self.KEEP_FOR:
                return kept[1], True
            kept[1].close()
        address = _resolve(host, port, allow_private)
        if scheme == "https":
            conn = _PinnedHTTPSConnection(
                address, host, port, timeout=timeout, context=_tls_context()
            )
        else:
            conn = _PinnedHTTPConnection(address, host, port, timeout=timeout)
        conn.opened_at = time.monotonic()
        return conn, False

    def put(self, parts, conn) -> None:
        """Keep ``conn`` for the origin's next attempt (closing the oldest kept one beyond
        ``per_origin``)."""
        displaced = None
        with self._lock:
            kept = self._open.setdefault(origin(parts), [])
            kept.append((getattr(conn, "opened_at", time.monotonic()), conn))
            if len(kept) > self.per_origin:
                displaced = kept.pop(0)
        if displaced is not None:
            displaced[1].close()

    def close(self) -> None:
        with self._lock:
            kept = [entry for entries in self._open.values() for entry in entries]
            self._open.clear()
        for _, conn in kept:
            conn.close()


def origin(parts) -> tuple[str, str, int]:
    """A URL's scheme, host and port (the scheme's default when it names none)."""
    return parts.scheme, parts.hostname, parts.port or (443 if parts.scheme == "https" else 80)


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """The system's trusted certificates, loaded once per process."""
    return ssl.create_default_context()


def post(
    url: str,
    body: bytes,
    headers: dict,
    *,
    timeout: float,
    allow_private: bool,
    connections: Connections | None = None,
) -> Outcome:
    """POST ``body`` to ``url`` once; never raises for the receiver's or the network's faults.

    With ``connections`` the connection may be one kept from the pass's previous attempt to
    the same origin, and is kept for the next; a kept one the receiver closed meanwhile is
    replaced once, before anything was answered. Without, the connection closes after.
    """
    started = time.monotonic()

    def elapsed() -> int:
        return int((time.monotonic() - started) * 1000)

    parts = urlsplit(url)
    pool = connections if connections is not None else Connections(keep=False)
    try:
        conn, reused = pool.get(parts, timeout, allow_private)
    except UrlError as error:
        return Outcome(None, elapsed(), error=str(error))
    except (OSError, ValueError) as error:  # whatever the address gives, it is the outcome
        return Outcome(None, elapsed(), error=f"{type(error).__name__}: {error}"[:300])
    # The socket timeout bounds each read; the watchdog bounds the attempt as a whole.
    watch = deadlines.WATCHDOG.arm(conn, started + timeout)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    headers = {
        **headers,
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        "Connection": "keep-alive" if pool.keep else "close",
    }
    answer = None
    try:
        try:
            answer = conn.post(target, headers, body)
        except (ConnectionError, http.client.RemoteDisconnected):
            if not reused:
                raise
            conn.close()  # closed by the receiver while it was kept: reconnect, once
            answer = conn.post(target, headers, body)
        excerpt = answer.body.decode("utf-8", "replace")[:EXCERPT]
        error = None
        if 300 <= answer.status < 400:
            location = answer.headers.get("location", "")[:200]
            error = f"redirect not followed (Location: {location})"
        return Outcome(answer.status, elapsed(), excerpt, error)
    except (OSError, http.client.HTTPException, ValueError) as error:
        answer = None
        if elapsed() >= timeout * 1000:
            return Outcome(None, elapsed(), error=f"timed out after {timeout:g} s")
        return Outcome(None, elapsed(), error=f"{type(error).__name__}: {error}"[:300])
    finally:
        deadlines.WATCHDOG.disarm(watch)
        # Kept only when the whole answer was read and the receiver keeps the connection.
        if pool.keep and answer is not None and answer.reusable and conn.sock:
            pool.put(parts, conn)
        else:
            conn.close()
