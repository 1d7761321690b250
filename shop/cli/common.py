"""What every command group shares: a failure as one line, a group that reports a database it
cannot reach without a traceback, and the schema check of the commands that read records."""

import threading

import click
from flask.cli import AppGroup

from shop.http.errors import Unavailable

STOP = threading.Event()  # set by SIGTERM or Ctrl-C: the worker's loop ends


def fail(message: str):
    raise click.ClickException(message)


class CommandGroup(AppGroup):
    """Flask's command group; a database that cannot be reached is one line, not a traceback."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except Unavailable as error:
            cause = str(error.__cause__ or "").strip().splitlines()
            fail(f"{error}: {cause[0] if cause else 'no answer'}")


def require_schema(once: bool = True):
    """The commands that read and write records need the schema this code knows. The
    worker's loop (``once`` False) starts while the database is down and waits for it."""
    from flask import current_app

    from shop.cli import jobs
    from shop.schema import migrate

    if once:
        ready = migrate.schema_ready(current_app)
    else:
        ready = jobs.wait_for_schema(STOP, lambda: migrate.schema_ready(current_app))
        if STOP.is_set():
            return
    if not ready:
        fail("The database is not at this release's schema: run `flask --app app db upgrade`.")
