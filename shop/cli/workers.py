"""The worker's commands: ``jobs run [--once]`` (every periodic job of ``shop/cli/jobs.py``,
webhook deliveries and mail), ``webhooks work [--once]`` (its older name), ``webhooks status``
and ``mail work --once`` (due mail alone)."""

import threading

import click
from flask.cli import AppGroup, with_appcontext

from shop.cli.common import STOP, require_schema
from shop.http import health
from shop.webhooks import store


@click.group("mail", cls=AppGroup)
@with_appcontext
def mail_group():
    """Outgoing mail."""


@mail_group.command("work")
@click.option("--once", is_flag=True, help="Send the mail that is due now, then stop.")
def mail_work(once):
    """Send queued mail (SMTP_URL; the log without it). Without --once it runs the worker
    of the Procfile, which sends mail, delivers webhooks and runs every job (flask jobs run)."""
    from shop import mail

    if not once:
        _run_worker()
        return
    require_schema()
    sent = mail.deliver_due()
    click.echo(f"Sent {sent} message{'' if sent == 1 else 's'}.")


@click.group("jobs", cls=AppGroup)
@with_appcontext
def jobs_group():
    """The worker: every periodic job (shop/cli/jobs.py), webhook deliveries and mail."""


@jobs_group.command("run")
@click.option("--once", is_flag=True, help="Run every job once and empty what is due, then exit.")
def jobs_run(once):
    """Run the periodic jobs and the queues until stopped (SIGTERM, Ctrl-C)."""
    _work(once)


@click.group("webhooks", cls=AppGroup)
@with_appcontext
def webhooks_group():
    """Webhooks: their delivery status, and the worker (the older name of `flask jobs run`)."""


@webhooks_group.command("work")
@click.option("--once", is_flag=True, help="Deliver what is due now, then exit.")
def webhooks_work(once):
    """Run the worker (`flask jobs run`): webhooks, mail and every periodic job."""
    _work(once)


@webhooks_group.command("status")
def webhooks_status():
    """Per endpoint: deliveries waiting, the oldest one's age, last success and failure."""
    require_schema()
    for line in _status_lines():
        click.echo(line)


def _status_lines() -> list[str]:
    """A line per webhook endpoint, then one per outbox."""
    lines = []
    for row in store.status():
        state = "disabled" if not row["enabled"] else "failing" if row["failing_since"] else "ok"
        age = row["oldest_pending_age_seconds"]
        lines.append(
            f"{row['id']}  {state:<8}  backlog={row['backlog']}"
            f"  oldest_pending={'-' if age is None else f'{age}s'}"
            f"  last_success={row['last_success_at'] or 'never'}"
            f"  last_failure={row['last_failure_at'] or 'never'}  {row['url']}"
        )
    if not lines:
        lines.append("No webhooks.")
    for queue, state in health.outbox_backlog().items():
        age = state["oldest_pending_age_seconds"]
        oldest = "" if age is None else f", the oldest {age:.0f}s old"
        lines.append(f"outbox {queue}: {state['pending']} pending{oldest}")
    return lines


def _work(once: bool) -> None:
    """``--once``: every job once, the queues until empty; else the worker loop."""
    from shop.cli import jobs

    if once:
        require_schema()
        _read_webhooks_each_time()
        done = jobs.run_once()
        click.echo(f"Delivered {done} due item(s).")
        return
    _run_worker()


def _read_webhooks_each_time() -> None:
    """The events the worker emits read the enabled webhooks each time: on a node without
    Redis it would not hear of one the web process made or changed (``outbox.Subscribers``)."""
    from flask import current_app

    current_app.extensions["shop.webhook_subscribers"].keeping = False


def _run_worker() -> None:
    """The Procfile's worker (shop/cli/jobs.py) until SIGTERM or Ctrl-C."""
    import signal

    from flask import current_app

    from shop.cli import jobs

    _read_webhooks_each_time()
    stop = STOP
    stop.clear()
    limit = current_app.config["WORKER_STOP_TIMEOUT"]

    def stopping(*_):
        """Stop after the current attempt; past SHOP_WORKER_STOP_TIMEOUT, at once."""
        if not stop.is_set():
            stop.set()
            timer = threading.Timer(limit, _abandon, args=(limit,))
            timer.daemon = True
            timer.start()

    for name in ("SIGTERM", "SIGINT"):
        signal.signal(getattr(signal, name), stopping)
    click.echo(
        f"Worker started; SIGTERM or Ctrl-C stops it after the current attempt, within {limit} s."
    )
    require_schema(once=False)
    jobs.work(stop)
    click.echo("Worker stopped.")


def _abandon(limit: int) -> None:
    """The pass did not end within the stop timeout: leave now (its claims come back to
    any worker when their leases end)."""
    import os
    import sys

    click.echo(f"Worker stopped: a pass was still running after {limit} s; abandoned.")
    sys.stdout.flush()
    os._exit(0)
