"""The pure rules under API keys, tested without an app: an address against ``allowed_ips``
ranges, and when a request writes its process's batch of key usage."""

from datetime import UTC, datetime, timedelta

import pytest

from shop.auth.keys.usage import UsageBuffer
from shop.net.addresses import address_allowed, canonical

T0 = datetime(2026, 11, 28, 9, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("127.0.0.1", "127.0.0.1"),
        ("::ffff:127.0.0.1", "127.0.0.1"),
        (" 2001:DB8::1 ", "2001:db8::1"),
        ("fe80::1%eth0", None),
        ("<script>", None),
        ("10.0.0.1:80", None),
        (None, None),
    ],
)
def test_an_address_has_one_canonical_text(text, expected):
    assert canonical(text) == expected


@pytest.mark.parametrize(
    "allowed, address, expected",
    [
        ("10.0.0.0/8", "10.1.2.3", True),
        ("10.0.0.0/8", "11.1.2.3", False),
        ("10.0.0.0/8 192.168.1.5/32", "192.168.1.5", True),
        ("127.0.0.1/32", "::ffff:127.0.0.1", True),
        ("::ffff:127.0.0.1/128", "127.0.0.1", True),
        ("::/0", "127.0.0.1", True),
        ("10.0.0.0/8", None, False),
        ("10.0.0.0/8", "not an address", False),
    ],
)
def test_an_address_is_in_the_allowed_ranges(allowed, address, expected):
    assert address_allowed(allowed, address) is expected


def test_a_keys_first_use_writes_the_batch_at_once():
    buffer = UsageBuffer()
    assert buffer.counted(["k1", True, "10.0.0.1", True], 200, T0) is True
    assert buffer.last_use["k1"] == (T0, "10.0.0.1")
    # One writer at a time: the next first use waits for the batch being written.
    assert buffer.counted(["k2", True, "10.0.0.2", True], 200, T0) is False
    assert buffer.counts[("k2", T0.date())] == [1, 0, 0, 0]


def test_a_refused_first_use_is_counted_but_not_a_use():
    buffer = UsageBuffer()
    assert buffer.counted(["k1", True, "10.0.0.1", True], 403, T0) is False
    assert buffer.counts[("k1", T0.date())] == [1, 0, 1, 0]
    assert "k1" not in buffer.last_use


def test_the_batch_is_written_once_an_interval():
    buffer = UsageBuffer()
    buffer.interval = timedelta(seconds=60)
    assert buffer.counted(None, 200, T0) is False  # the first request starts the interval
    assert buffer.counted(["k1", True, None, False], 200, T0 + timedelta(seconds=59)) is False
    assert buffer.counted(None, 200, T0 + timedelta(seconds=60)) is True
    assert buffer.counted(None, 200, T0 + timedelta(seconds=200)) is False  # being written
    buffer.flushing = False
    assert buffer.counted(None, 200, T0 + timedelta(seconds=119)) is False
    assert buffer.counted(None, 200, T0 + timedelta(seconds=120)) is True
