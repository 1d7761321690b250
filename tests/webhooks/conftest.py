"""Fixtures of the webhook tests."""

import pytest

from tests.webhook_helpers import Receiver


@pytest.fixture
def receiver():
    """A real HTTP receiver on 127.0.0.1 that keeps what it is sent."""
    server = Receiver()
    yield server
    server.stop()
