"""IP addresses as the service compares and stores them: one canonical text (IPv4-mapped IPv6
as IPv4), and whether an address falls in a list of ranges (an API key's ``allowed_ips``, the
metrics page's)."""

import functools
import ipaddress
from functools import lru_cache


def canonical(text) -> str | None:
    """``text`` as an IP address in canonical form (IPv4-mapped IPv6 as IPv4), else None."""
    if not isinstance(text, str):
        return None
    return _canonical(text)


@functools.lru_cache(maxsize=1024)
def _canonical(text: str) -> str | None:
    """``canonical`` of a string, parsed once per distinct text: every request asks it of
    its peer's address, and clients come back (issue 29)."""
    try:
        ip = ipaddress.ip_address(text.strip())
    except ValueError:
        return None
    if ip.version == 6:
        if ip.scope_id is not None:  # fe80::1%<anything>: not an address we can store
            return None
        if ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped
    return str(ip)


@lru_cache(maxsize=4096)
def _networks(allowed: str) -> tuple:
    return tuple(ipaddress.ip_network(text) for text in allowed.split())


_MAPPED = ipaddress.ip_network("::ffff:0:0/96")


def address_allowed(allowed: str, address: str | None) -> bool:
    """Whether ``address`` is in one of the stored ranges.

    An IPv4 client is also ``::ffff:<it>`` in IPv6, so both sides agree whichever way the
    rule or the socket wrote it: ``::ffff:127.0.0.1`` and ``::/0`` admit 127.0.0.1, and
    ``127.0.0.1`` admits ``::ffff:127.0.0.1`` (``canonical`` unmaps it).
    """
    text = canonical(address)
    if text is None:
        return False
    ip = ipaddress.ip_address(text)
    forms = [ip]
    if ip.version == 4:
        forms.append(_MAPPED[int(ip)])
    return any(form in network for network in _networks(allowed) for form in forms)
