"""``flask products export FILE`` and ``flask products import FILE [--dry-run]``: the
catalogue file of ``GET /products/export`` / ``POST /products/import`` from the command line,
with a progress bar on a terminal. The operator at the console may do everything: there is
no permission check, and audit entries name no actor."""

import sys

import click
from flask.cli import AppGroup, with_appcontext

from shop import db
from shop.actor import NOBODY
from shop.catalogue.files import export as catalogue_export
from shop.catalogue.files import imports as catalogue_import
from shop.errors import ShopError


def _bar(length: int, label: str):
    """click's progress bar on a terminal (stderr); nothing when redirected."""
    return click.progressbar(
        length=length, label=label, file=sys.stderr if sys.stderr.isatty() else _Quiet()
    )


class _Quiet:
    """A file that swallows a progress bar drawn off a terminal."""

    def write(self, _text):
        return 0

    def flush(self):
        pass

    def isatty(self):
        return False


def _format_of(path: str, given: str | None) -> str | None:
    if given:
        return given
    suffix = path.rsplit(".", 1)[-1].lower() if "." in path else ""
    return {"csv": "csv", "jsonl": "jsonl", "ndjson": "jsonl"}.get(suffix)


@click.group("products", cls=AppGroup)
def products_group():
    """Export and import the catalogue (CSV or JSON Lines, one row per variant)."""


@products_group.command("export")
@click.argument("path", type=click.Path(dir_okay=False, writable=True))
@click.option("--format", "kind", type=click.Choice(["csv", "jsonl"]), help="By the name.")
@with_appcontext
def export_command(path, kind):
    """Write every variant of every product to PATH (.csv or .jsonl)."""
    kind = _format_of(path, kind) or "csv"
    total = db.value("SELECT COUNT(*) FROM product_variants")
    written = 0
    with _bar(total, "Exporting") as bar, open(path, "w", encoding="utf-8", newline="") as out:

        def counted():
            nonlocal written
            for row in catalogue_export.rows():
                written += 1
                bar.update(1)
                yield row

        for piece in catalogue_export.WRITERS[kind](counted()):
            out.write(piece)
    click.echo(f"Exported {written} row(s) to {path}.")


@products_group.command("import")
@click.argument("path", type=click.Path(exists=True, dir_okay=False))
@click.option("--dry-run", is_flag=True, help="Check and count; write nothing.")
@click.option("--format", "kind", type=click.Choice(["csv", "jsonl"]), help="By the name.")
@with_appcontext
def import_command(path, dry_run, kind):
    """Create or update products and variants from PATH: any bad row and nothing is written."""
    with open(path, "rb") as source:
        data = source.read()
    try:
        rows = catalogue_import.read_rows(data, _format_of(path, kind))
    except ShopError as error:
        raise click.ClickException(error.message) from None
    with _bar(len(rows), "Importing") as bar:
        result = catalogue_import.import_rows(
            rows, dry_run=dry_run, can_create=lambda: None, actor=NOBODY, progress=bar.update
        )
    for error in result["errors"]:
        click.echo(f"Row {error['row']}, {error['field']}: {error['message']}", err=True)
    counts = f"{result['created']} created, {result['updated']} updated,"
    counts += f" {result['unchanged']} unchanged"
    if result["errors"]:
        written = "nothing was written"
        if "written" in result:  # a chunk refused: the catalogue changed meanwhile
            written = f"{result['written']} product(s) before them were written; import again"
        raise click.ClickException(f"{len(result['errors'])} error(s); {written} ({counts}).")
    click.echo(f"{'Dry run, nothing written: ' if dry_run else ''}{counts}.")
