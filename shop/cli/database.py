"""``flask db status|upgrade|backup|restore`` (and ``init-db``, the old name of ``db upgrade``,
kept for scripts written for earlier releases)."""

import click

from shop.cli.common import CommandGroup, fail


@click.group("db", cls=CommandGroup)
def db_group():
    """The database: schema version, upgrades, backups."""


def _database():
    from flask import current_app

    return current_app.extensions["shop.db"], current_app.config["MIGRATIONS_DIR"]


@db_group.command("status")
def db_status():
    """Show the schema version of the database and the migrations still to run."""
    from shop.schema import migrate

    database, directory = _database()
    try:
        state = migrate.status(database, directory)
    except migrate.MigrationError as error:
        fail(str(error))
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
    from shop.schema import migrate

    database, directory = _database()
    try:
        done = migrate.upgrade(database, directory, echo=click.echo)
    except migrate.MigrationError as error:
        fail(f"Upgrade stopped: {error}")
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
        fail(f"Backup failed: {error}")
    click.echo(f"Backup written: {written}")


@db_group.command("restore")
@click.argument("path", type=click.Path(exists=True, dir_okay=False))
def db_restore(path):
    """Restore the backup at PATH into the database, which must be empty."""
    from shop.db import backup
    from shop.schema import migrate

    database, directory = _database()
    try:
        backup.restore(database, path)
    except backup.BackupError as error:
        fail(f"Restore failed: {error}")
    state = migrate.status(database, directory)
    click.echo(f"Restored {path}: schema version {state.current:04d}.")
    if not state.up_to_date:
        click.echo("It is older than this release: run `flask --app app db upgrade` next.")


@click.command("init-db")
@click.pass_context
def init_db_command(ctx):
    """The old name of `db upgrade`."""
    ctx.invoke(db_upgrade)
