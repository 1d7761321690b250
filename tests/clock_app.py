"""The app for live servers whose time a test moves: ``gunicorn tests.clock_app:app``.

Every process reads the offset (seconds, a float) from ``SHOP_TEST_CLOCK_FILE`` each time
it asks the time, so a test moves the clock of several nodes and workers at once by
rewriting one file, without sleeping. Test-only: the service reads the time through the
``CLOCK`` setting (shop/clock.py), which this fills.
"""

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

from shop import create_app


class FileClock:
    """Real time plus the offset written in a file."""

    def __init__(self, path: str):
        self.path = Path(path)

    def __call__(self) -> datetime:
        text = self.path.read_text().strip() if self.path.exists() else ""
        return datetime.now(UTC) + timedelta(seconds=float(text or 0))


app = create_app({"CLOCK": FileClock(os.environ["SHOP_TEST_CLOCK_FILE"])})
