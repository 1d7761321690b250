"""The one place the service reads the time, so tests can move it without sleeping.

Set ``CLOCK`` in the app config to a callable returning an aware UTC datetime to control it.
"""

from datetime import UTC, datetime, timedelta

from flask import current_app, has_app_context


def _system_now() -> datetime:
    return datetime.now(UTC)


def clock_of(config) -> datetime:
    """The current time by an app's ``config`` (for hooks that run on every request and
    already hold the app: no context lookups)."""
    return config.get("CLOCK", _system_now)()


def now() -> datetime:
    """The current time, in UTC."""
    if has_app_context():
        return current_app._get_current_object().config.get("CLOCK", _system_now)()
    return _system_now()


def iso(moment: datetime) -> str:
    """A datetime as stored and served: ISO 8601, UTC, microseconds, with a Z.

    The year is written with four digits whatever it is (``isoformat`` pads it; glibc's
    ``%Y`` writes year 35 as ``35``, which is neither ISO 8601 nor sorts as text). Not
    ``strftime``: twice the time, and checkout writes three of these (issue 42)."""
    if moment.tzinfo is not UTC:  # naive is local time, as astimezone takes it
        moment = moment.astimezone(UTC)
    return f"{moment.replace(tzinfo=None).isoformat(timespec='microseconds')}Z"


def utc(moment: datetime) -> datetime:
    """``moment`` in UTC (naive means UTC); ValueError when that falls outside years 1-9999."""
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    try:
        return moment.astimezone(UTC)
    except OverflowError:
        raise ValueError("out of range: in UTC it falls outside the years 1 to 9999.") from None


def now_iso() -> str:
    """The current time as stored and served."""
    return iso(now())


def iso_in(seconds: float) -> str:
    """The time ``seconds`` from now, as stored and served."""
    return iso(now() + timedelta(seconds=seconds))


def parse(text: str) -> datetime:
    """A stored timestamp back into an aware datetime (UTC, from the trailing Z).

    fromisoformat, not strptime: it runs on every authenticated request and is 50x faster.
    """
    return datetime.fromisoformat(text)
