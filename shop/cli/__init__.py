"""flask commands: ``db status|upgrade|backup|restore``, ``users create|list``,
``api-keys create|list|roll|revoke``, ``jobs run [--once]`` (the worker: every periodic job of
``shop/cli/jobs.py``, webhook deliveries and mail), ``webhooks work [--once]`` (its older name),
``mail work --once`` (due mail alone), ``products export|import`` (shop/cli/products.py).

Run them as ``flask --app app <command>``. A bad argument prints a clear message and exits 1.
``init-db`` is the old name of ``db upgrade``, kept for scripts written for earlier releases.
"""

import threading

import click
from flask import Flask
from flask.cli import AppGroup, with_appcontext
from werkzeug.exceptions import HTTPException

from shop import db
from shop.cli.demo import demo_command
from shop.cli.payments import payments_group
from shop.cli.products import products_group
from shop.errors import ShopError
from shop.http.errors import Unavailable, as_http

_STOP = threading.Event()  # set by SIGTERM or Ctrl-C: the worker's loop ends


def _fail(message: str):
    raise click.ClickException(message)


class CommandGroup(AppGroup):
    """Flask's command group; a database that cannot be reached is one line, not a traceback."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except Unavailable as error:
            cause = str(error.__cause__ or "").strip().splitlines()
            _fail(f"{error}: {cause[0] if cause else 'no answer'}")


@click.group("db", cls=CommandGroup)
def db_group():
    """The database: schema version, upgrades, backups."""


def _database():
    from flask import current_app

    return current_app.extensions["shop.db"], current_app.config["MIGRATIONS_DIR"]


@db_group.command("status")
def db_status():
    """Show the schema version of the database and the migrations still to run."""
    from shop.db import migrate

    database, directory = _database()
    try:
        state = migrate.status(database, directory)
    except migrate.MigrationError as error:
        _fail(str(error))
    click.echo(f"Engine: {database.engine}")
    if state.legacy:
        click.echo(
            "Schema version: release bd8e86d, before migrations (adopted as 0001 by upgrade)"
        )
    elif state.current:
        click.echo(f"Schema version: {state.current:04d}")
    else:
        click.echo("Schema version: none (an empty database)")
    click.echo(f"This release: {state.latest:04d}")
    for migration in state.modified:
        click.echo(f"Changed since applied (not run again): {migration}")
    if state.newer:
        click.echo(
            "Newer than this release: "
            + ", ".join(f"{v:04d}" for v in state.unknown)
            + ". Deploy the release that applied them."
        )
    if state.pending:
        click.echo("Pending:")
        for migration in state.pending:
            click.echo(f"  {migration}")
        click.echo("Run `flask --app app db upgrade` to apply them.")
    elif not state.newer:
        click.echo("Up to date.")


@db_group.command("upgrade")
def db_upgrade():
    """Apply pending migrations (one process at a time), seed the roles, recount the totals."""
    from shop.db import migrate

    database, directory = _database()
    try:
        done = migrate.upgrade(database, directory, echo=click.echo)
    except migrate.MigrationError as error:
        _fail(f"Upgrade stopped: {error}")
    version = migrate.current_version(database)
    if done:
        click.echo(f"Database upgraded to {version:04d}.")
    else:
        click.echo(f"Database already at {version:04d}: nothing to apply.")


@db_group.command("backup")
@click.argument("path", type=click.Path(dir_okay=False))
def db_backup(path):
    """Write a consistent backup of the running database to PATH (a new file)."""
    from shop.db import backup

    database, _ = _database()
    try:
        written = backup.backup(database, path)
    except backup.BackupError as error:
        _fail(f"Backup failed: {error}")
    click.echo(f"Backup written: {written}")


@db_group.command("restore")
@click.argument("path", type=click.Path(exists=True, dir_okay=False))
def db_restore(path):
    """Restore the backup at PATH into the database, which must be empty."""
    from shop.db import backup, migrate

    database, directory = _database()
    try:
        backup.restore(database, path)
    except backup.BackupError as error:
        _fail(f"Restore failed: {error}")
    state = migrate.status(database, directory)
    click.echo(f"Restored {path}: schema version {state.current:04d}.")
    if not state.up_to_date:
        click.echo("It is older than this release: run `flask --app app db upgrade` next.")


@click.command("init-db")
@click.pass_context
def init_db_command(ctx):
    """The old name of `db upgrade`."""
    ctx.invoke(db_upgrade)


def _require_schema(once: bool = True):
    """The commands that read and write records need the schema this code knows. The
    worker's loop (``once`` False) starts while the database is down and waits for it."""
    from flask import current_app

    from shop.cli import jobs
    from shop.db import migrate

    if once:
        ready = migrate.schema_ready(current_app)
    else:
        ready = jobs.wait_for_schema(_STOP, lambda: migrate.schema_ready(current_app))
        if _STOP.is_set():
            return
    if not ready:
        _fail("The database is not at this release's schema: run `flask --app app db upgrade`.")


@click.group("users", cls=CommandGroup)
@with_appcontext
def users_group():
    """Manage administrators."""
    _require_schema()


@users_group.command("create")
@click.option("--email", required=True, help="Sign-in email.")
@click.option("--password", help="At least 8 characters; prompted (hidden) when left out.")
@click.option("--name", help="Display name (defaults to the part of the email before @).")
@click.option(
    "--role",
    default="owner",
    show_default=True,
    help="owner, admin, editor, support or a custom role.",
)
def users_create(email, password, name, role):
    """Create an administrator (bootstraps the first owner)."""
    from shop.auth.passwords import MIN_LENGTH
    from shop.auth.users import create_user

    if password is None:
        password = click.prompt("Password", hide_input=True, confirmation_prompt=True)
    if len(password) < MIN_LENGTH:
        _fail(f"The password must have at least {MIN_LENGTH} characters.")
    if "@" not in email:
        _fail(f"{email!r} is not an email address.")
    try:
        row = create_user(email, name or email.split("@", 1)[0], password, role)
    except (HTTPException, ShopError) as caught:
        error = as_http(caught)
        _fail(error.description.removeprefix("role: "))
    click.echo(f"Created administrator {row['email']} ({row['role']}), id {row['id']}.")


@users_group.command("list")
def users_list():
    """List administrators."""
    rows = db.query(
        "SELECT u.id, u.email, u.name, u.active, r.name AS role FROM users u"
        " JOIN roles r ON r.id = u.role_id ORDER BY u.email"
    )
    for row in rows:
        state = "active" if row["active"] else "inactive"
        click.echo(f"{row['id']}  {row['email']}  {row['role']}  {state}  {row['name']}")
    if not rows:
        click.echo("No administrators yet: flask --app app users create --email ... --role owner")


@users_group.command("reset-two-factor")
@click.argument("email")
def users_reset_two_factor(email):
    """Remove an administrator's two-factor sign-in (a lost device) and end their sessions."""
    from shop.auth.two_factor import reset_by_operator

    reset = reset_by_operator(email)
    if reset is None:
        _fail(f"No administrator with the email {email!r}.")
    state = "removed" if reset["was_on"] else "was not on; any set-up in progress removed"
    click.echo(
        f"Two-factor sign-in of {reset['email']} {state}; {reset['sessions_ended']} session(s)"
        " ended. They sign in with their password and set it up again (audited:"
        " two_factor.reset)."
    )


@click.group("api-keys", cls=CommandGroup)
@with_appcontext
def api_keys_group():
    """Manage API keys without an administrator session."""
    _require_schema()


@api_keys_group.command("create")
@click.option(
    "--label", "--name", "label", required=True, help="The key's label, 1 to 100 characters."
)
@click.option(
    "--scopes", required=True, help='Such as "read:product,write:content" (commas or spaces).'
)
@click.option("--expires", help="Optional expiry: an ISO 8601 date or date-time in the future.")
def api_keys_create(label, scopes, expires):
    """Create a key and print its secret, once."""
    from shop.auth import key_rules, key_store

    label = label.strip()
    if not 1 <= len(label) <= 100:
        _fail("--label must have 1 to 100 characters.")
    try:
        scope_list = key_rules.parse_scopes(scopes)
        expires_at = key_rules.parse_expiry(expires) if expires else None
    except ValueError as error:
        _fail(str(error).replace("scopes:", "--scopes:").replace("expires_at:", "--expires:"))
    record, secret = key_store.create(label, scope_list, expires_at, owner=None)
    click.echo(f"Created API key {record['id']} ({label}) with scopes {' '.join(scope_list)}.")
    _echo_secret(secret)


def _echo_secret(secret: str) -> None:
    click.echo("The secret follows on its own line. It cannot be shown again: store it now.")
    click.echo(secret)


@api_keys_group.command("list")
def api_keys_list():
    """List every key (never a secret)."""
    from shop.auth import key_store

    page = 1
    while True:
        result = key_store.list_page(None, None, page, 100)
        for key in result["items"]:
            owner = key["owner"]["email"] if key["owner"] else "cli"
            click.echo(
                f"{key['id']}  {key['status']:<7}  {key['label']}  [{' '.join(key['scopes'])}]"
                f"  owner={owner}  expires={key['expires_at'] or 'never'}"
                f"  last_used={key['last_used_at'] or 'never'}"
            )
        if page * 100 >= result["total"]:
            break
        page += 1


@api_keys_group.command("roll")
@click.argument("key_id")
@click.option(
    "--grace",
    type=click.IntRange(0, 7 * 24 * 3600),
    default=24 * 3600,
    show_default=True,
    help="Seconds the old key keeps working (0 to 604800, 7 days).",
)
def api_keys_roll(key_id, grace):
    """Replace a key by a successor (printed once); the old one works --grace seconds more."""
    from shop.auth import key_store

    try:
        rolled = key_store.roll(key_id, None, grace)
    except (HTTPException, ShopError) as caught:
        error = as_http(caught)
        _fail(error.description)
    if rolled is None:
        _fail(f"No API key with id {key_id}.")
    record, secret = rolled
    old = key_store.get(key_id)
    click.echo(
        f"Rolled API key {key_id} ({record['label']}) to {record['id']}. The old key works"
        f" {grace} s more, until {old['expires_at']}."
    )
    _echo_secret(secret)


@api_keys_group.command("revoke")
@click.argument("key_id")
def api_keys_revoke(key_id):
    """Revoke a key at once."""
    from shop.auth import key_store

    if not key_store.revoke(key_id, None):
        _fail(f"No API key with id {key_id}.")
    click.echo(f"Revoked API key {key_id}.")


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
    _require_schema()
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
    from shop.webhooks import store

    _require_schema()
    for line in store.status_lines():
        click.echo(line)


def _work(once: bool) -> None:
    """``--once``: every job once, the queues until empty; else the worker loop."""
    from shop.cli import jobs

    if once:
        _require_schema()
        done = jobs.run_once()
        click.echo(f"Delivered {done} due item(s).")
        return
    _run_worker()


def _run_worker() -> None:
    """The Procfile's worker (shop/cli/jobs.py) until SIGTERM or Ctrl-C."""
    import signal

    from flask import current_app

    from shop.cli import jobs

    stop = _STOP
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
    _require_schema(once=False)
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


def register(app: Flask) -> None:
    """Attach the commands to the app."""
    for command in (
        db_group,
        products_group,
        init_db_command,
        users_group,
        api_keys_group,
        jobs_group,
        webhooks_group,
        mail_group,
        demo_command,
        payments_group,
    ):
        app.cli.add_command(command)
