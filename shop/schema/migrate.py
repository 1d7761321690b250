"""Versioned schema migrations: plain SQL files in ``migrations/``, run forward, recorded.

``NNNN_name.sql`` runs on both engines, or a pair ``NNNN_name.sqlite.sql`` +
``NNNN_name.postgresql.sql`` stands for one version. Each version runs in one transaction with
its row in ``schema_migrations``, under a lock (PostgreSQL's ``pg_advisory_xact_lock``,
SQLite's ``BEGIN IMMEDIATE``), so several nodes may upgrade at once. docs/migrations.md says
how to write one and why this runner rather than yoyo-migrations.
"""

import logging
import re
import sqlite3
from dataclasses import dataclass
from functools import cache, wraps
from pathlib import Path

from shop import clock
from shop.db import Database, psycopg_errors, sha256, unreachable_errors

log = logging.getLogger("shop")

ROOT = Path(__file__).resolve().parents[2]
MIGRATIONS_DIR = ROOT / "migrations"
SCHEMA_PATH = ROOT / "schema.sql"  # both engines; then schema.<engine>.sql, its own part
ENGINES = ("sqlite", "postgresql")
RECORDS = "schema_migrations"
_FILE = re.compile(r"^(\d{4})_([a-z0-9_]+?)(?:\.(sqlite|postgresql))?\.sql$")
_LOCK = "schema migrations"
RETRY_AFTER = 30  # seconds, while the schema is older than the code: an upgrade is a release step

RECORDS_DDL = f"""CREATE TABLE IF NOT EXISTS {RECORDS} (
    version INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    checksum TEXT NOT NULL,
    applied_at TEXT NOT NULL
)"""


class MigrationError(RuntimeError):
    """The migrations or the database are not in a state the runner can go on from."""


@dataclass(frozen=True)
class Migration:
    """One version: its number, its name and this engine's file."""

    version: int
    name: str
    path: Path

    @property
    def sql(self) -> str:
        return self.path.read_text()

    @property
    def checksum(self) -> str:
        return sha256(self.sql)

    def __str__(self) -> str:
        return f"{self.version:04d}_{self.name}"


@dataclass(frozen=True)
class Status:
    """Where a database stands against the code's migrations."""

    current: int  # highest version recorded, 0 when none
    latest: int  # highest version the code knows
    pending: list  # Migrations not yet applied, in order
    legacy: bool  # tables of the release before migrations, no records yet
    unknown: list  # versions recorded that this code does not know (a newer release ran)
    modified: list  # versions whose file changed since they ran

    @property
    def newer(self) -> bool:
        return bool(self.unknown)

    @property
    def up_to_date(self) -> bool:
        return not self.pending and not self.legacy


def available(engine: str, directory: Path = MIGRATIONS_DIR) -> list[Migration]:
    """Every migration in ``directory`` for ``engine``, in order; a bad set is an error."""
    names: dict[int, str] = {}
    found: dict[int, dict] = {}
    for path in sorted(directory.glob("*.sql")):
        match = _FILE.match(path.name)
        if not match:
            raise MigrationError(f"{path.name}: not NNNN_snake_name[.sqlite|.postgresql].sql")
        number, name, only = int(match[1]), match[2], match[3]
        if names.setdefault(number, name) != name:
            raise MigrationError(f"two migrations numbered {number:04d}: renumber one")
        found.setdefault(number, {})[only or "both"] = path
    migrations = []
    for number in sorted(found):
        files, name = found[number], names[number]
        if "both" in files and len(files) > 1:
            raise MigrationError(f"{number:04d}_{name}: a shared file and engine files at once")
        if "both" not in files and set(files) != set(ENGINES):
            raise MigrationError(f"{number:04d}_{name}: needs both .sqlite.sql and .postgresql.sql")
        migrations.append(Migration(number, name, files.get("both") or files[engine]))
    return migrations


def latest(directory: Path = MIGRATIONS_DIR) -> int:
    """The highest version the code knows (the version its schema.sql describes)."""
    migrations = available(ENGINES[0], directory)
    return migrations[-1].version if migrations else 0


# -- reading the database -------------------------------------------------------------------


def table_exists(database: Database, name: str) -> bool:
    """Whether the table exists (in the search path, on PostgreSQL)."""
    if database.engine == "postgresql":
        return bool(database.value("SELECT to_regclass(:name) IS NOT NULL", {"name": name}))
    return bool(
        database.value(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = :name", {"name": name}
        )
    )


def current_version(database: Database) -> int:
    """The highest version recorded; 0 on a database without records (empty or legacy)."""
    if not table_exists(database, RECORDS):
        return 0
    return database.value(f"SELECT MAX(version) FROM {RECORDS}") or 0


def status(database: Database, directory: Path = MIGRATIONS_DIR) -> Status:
    """Compare the database's records with the code's migrations."""
    migrations = available(database.engine, directory)
    records = {}
    if table_exists(database, RECORDS):
        records = {r["version"]: r for r in database.query(f"SELECT * FROM {RECORDS}")}
    known = {m.version for m in migrations}
    legacy = not records and table_exists(database, "schema_version")
    return Status(
        current=max(records, default=0),
        latest=migrations[-1].version if migrations else 0,
        pending=[m for m in migrations if m.version not in records],
        legacy=legacy,
        unknown=sorted(set(records) - known),
        modified=[
            m
            for m in migrations
            if m.version in records and records[m.version]["checksum"] != m.checksum
        ],
    )


# -- changing the database ------------------------------------------------------------------


def statements(sql: str) -> list[str]:
    """A script cut into statements (for SQLite), comments and quotes respected."""
    out, buffer = [], ""
    for piece in sql.split(";"):
        buffer += piece + ";"
        if sqlite3.complete_statement(buffer):
            if _has_code(buffer):
                out.append(buffer.strip())
            buffer = ""
    return out


def _has_code(text: str) -> bool:
    """Whether a piece of script holds more than comments, blanks and semicolons."""
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return any(
        line.strip(" \t;") and not line.strip().startswith("--") for line in text.splitlines()
    )


def run_script(database: Database, sql: str) -> None:
    """Run a script of several statements inside the caller's transaction.

    PostgreSQL takes the script whole (no parameters: psycopg then allows several statements,
    and dollar-quoted bodies stay intact); SQLite one statement at a time.
    """
    conn = database.connection()
    if database.engine == "postgresql":
        if _has_code(sql):
            conn.execute(sql)
        return
    for statement in statements(sql):
        conn.execute(statement)


def _record(database: Database, migration: Migration) -> None:
    database.execute(
        f"INSERT INTO {RECORDS} (version, name, checksum, applied_at)"
        " VALUES (:version, :name, :checksum, :at)",
        {
            "version": migration.version,
            "name": migration.name,
            "checksum": migration.checksum,
            "at": clock.now_iso(),
        },
    )


def _is_recorded(database: Database, version: int) -> bool:
    return bool(database.value(f"SELECT 1 FROM {RECORDS} WHERE version = :v", {"v": version}))


def _apply(database: Database, migration: Migration, adopt: bool = False) -> bool:
    """Run one migration and record it, in one transaction; False when another process did."""
    sqlite = database.engine == "sqlite"
    conn = database.connection()
    if sqlite:
        conn.execute("PRAGMA foreign_keys = OFF")  # a no-op inside a transaction: set it first
    try:
        with database.transaction():
            database.lock(_LOCK)
            database.execute(RECORDS_DDL)
            if _is_recorded(database, migration.version):
                return False
            if not adopt:
                run_script(database, migration.sql)
            if sqlite:
                broken = database.query("PRAGMA foreign_key_check")
                if broken:
                    tables = sorted({row["table"] for row in broken})
                    raise MigrationError(
                        f"{migration}: {len(broken)} rows break foreign keys afterwards"
                        f" (in {', '.join(tables)}); nothing was changed"
                    )
            _record(database, migration)
            return True
    finally:
        if sqlite:
            conn.execute("PRAGMA foreign_keys = ON")


def _as_long_as_it_takes(func):
    """Run ``func(database, ...)`` without the statement timeout: a migration's DDL, an
    index built on a large table, an upgrade waiting for another's lock take what they take."""

    @wraps(func)
    def run(database: Database, *args, **kwargs):
        with database.time_limit(None):
            return func(database, *args, **kwargs)

    return run


@_as_long_as_it_takes
def upgrade(database: Database, directory: Path = MIGRATIONS_DIR, echo=log.info) -> list:
    """Apply every pending migration in order, then seed the built-in roles and recount.

    A database of the release before migrations (its tables, no records) is adopted as
    version 1 without running the baseline. Answers the migrations this call applied.
    Needs an app context (the seeding reads the permission catalogue through ``shop.db``).
    """
    state = status(database, directory)
    if state.newer:
        raise MigrationError(
            f"the database has migrations this code does not know"
            f" ({', '.join(f'{v:04d}' for v in state.unknown)}): it was upgraded by a newer"
            " release. Deploy that release (or restore the backup taken before it)."
        )
    for migration in state.modified:
        log.warning("migration %s changed since it was applied; the change is not run", migration)
    done = []
    for migration in state.pending:
        adopt = state.legacy and migration.version == 1
        if adopt:
            _check_adoptable(database)
        try:
            applied = _apply(database, migration, adopt=adopt)
        except (sqlite3.Error, *psycopg_errors("Error")) as error:
            raise MigrationError(
                f"{migration} failed and was rolled back, so the database stays at"
                f" {current_version(database):04d}: {str(error).strip()}"
            ) from error
        if applied:
            done.append(migration)
            echo(f"{'Adopted' if adopt else 'Applied'} {migration}")
    finish(database)
    database.analyze(full=True)  # new indexes, or rows written by other means: fresh stats
    return done


def _check_adoptable(database: Database) -> None:
    """A legacy database must hold every table and column of the baseline to be adopted."""
    missing = []
    for table, columns in baseline_columns().items():
        have = set(describe_columns(database, table))
        if not have:
            missing.append(table)
        missing.extend(f"{table}.{c}" for c in columns if have and c not in have)
    if missing:
        raise MigrationError(
            "this database has tables of an older release but lacks "
            + ", ".join(missing[:10])
            + ": it is not the schema of release bd8e86d, so it cannot be adopted as 0001"
        )


@cache
def baseline_columns() -> dict[str, list[str]]:
    """Every table of 0001_baseline.sql with its column names (built in memory by SQLite)."""
    scratch = Database("sqlite:///:memory:")
    try:
        run_script(scratch, available("sqlite")[0].sql)
        tables = scratch.query("SELECT name FROM sqlite_master WHERE type = 'table'")
        return {t["name"]: describe_columns(scratch, t["name"]) for t in tables}
    finally:
        scratch.close_all()


def describe_columns(database: Database, table: str) -> list[str]:
    """The column names of a table; empty when it does not exist."""
    if database.engine == "postgresql":
        rows = database.query(
            "SELECT column_name AS name FROM information_schema.columns"
            " WHERE table_schema = current_schema() AND table_name = :t ORDER BY ordinal_position",
            {"t": table},
        )
    else:
        rows = database.query("SELECT name FROM pragma_table_info(:t)", {"t": table})
    return [r["name"] for r in rows]


@_as_long_as_it_takes
def load_schema(database: Database) -> None:
    """Build an empty database from ``schema.sql`` (and the engine's own part, after it) and
    record every migration as applied.

    The quick path for tests, each of which needs a fresh database; ``tests/ops/test_migrations.py``
    proves that ``schema.sql`` builds the same schema as the migrations. Does nothing but
    ``finish`` on a database that has records already.
    """
    if not table_exists(database, RECORDS):
        build_schema(database)
    finish(database)


def build_schema(database: Database) -> None:
    """``load_schema``'s first half, one transaction: the DDL and the migration records, without
    ``finish`` (the tests copy a database built so into each case's SQLite file)."""
    with database.transaction():
        database.lock(_LOCK)
        run_script(database, SCHEMA_PATH.read_text())
        # What the engines write differently (triggers, the search index): schema.<engine>.sql.
        run_script(database, SCHEMA_PATH.with_suffix(f".{database.engine}.sql").read_text())
        database.execute(RECORDS_DDL)
        for migration in available(database.engine):
            _record(database, migration)


@_as_long_as_it_takes
def finish(database: Database) -> None:
    """What follows every upgrade: the built-in roles, the list totals, the facets' counts
    (recounted only when their bands changed: the triggers keep them) and the search index
    (rebuilt only when its definition changed), one transaction.

    Running ``flask db upgrade`` again is how an operator recounts the totals after writing
    rows by other means (a bulk import, the benchmark's seeding).
    """
    from shop.auth.roles import seed_builtin_roles
    from shop.catalogue import facet_counts, search
    from shop.db import totals

    try:
        with database.transaction():
            database.lock("seed")
            seed_builtin_roles()
            totals.recount()
            facet_counts.recount_if_changed()
            search.build_if_changed()
    except search.SearchLanguageError as error:
        raise MigrationError(str(error)) from error


# -- the service's side: never on a schema older than the code, never start on a newer one ----


@cache
def code_version(directory: Path = MIGRATIONS_DIR) -> int:
    """``latest`` read once per process (the files do not change under a running service)."""
    return latest(directory)


def schema_ready(app) -> bool:
    """Whether the app's database has every migration its code knows (checked until it has).

    Once true it stays true for the process: a running node that later meets a newer schema
    is in the middle of a rolling upgrade, which the expand/contract rule makes safe.
    """
    if app.extensions.get("shop.schema_ready"):
        return True
    version = current_version(app.extensions["shop.db"])
    code = code_version(app.config["MIGRATIONS_DIR"])
    if version < code:
        return False
    if version > code:
        log.warning("the database schema (%d) is newer than this code (%d)", version, code)
    app.extensions["shop.schema_ready"] = True
    return True


def check_at_start(url: str, directory: Path = MIGRATIONS_DIR) -> str | None:
    """Before the workers start: refuse a schema newer than the code (``SystemExit``).

    Answers a warning to log when the schema is older (workers answer 503 until the upgrade)
    or the database cannot be reached (workers start and check on their first request).
    """
    code = latest(directory)
    if url.startswith(("postgresql://", "postgres://")) and "connect_timeout" not in url:
        url += ("&" if "?" in url else "?") + "connect_timeout=5"  # a silent host: do not hang
    try:
        database = Database(url, statement_timeout=5)  # a frozen server: do not hang either
        try:
            version = current_version(database)
        finally:
            database.close_all()
    except unreachable_errors() as error:
        return (
            f"could not read the schema version ({type(error).__name__}): starting anyway;"
            " requests check it once the database answers"
        )
    if version > code:
        raise SystemExit(
            f"Refusing to start: the database schema is at version {version}, newer than this"
            f" release knows ({code}). Deploy the release that upgraded it, or restore the"
            " backup taken before the upgrade (docs/operations.md)."
        )
    if version < code:
        return (
            f"the database schema is at version {version}, this release needs {code}:"
            " requests answer 503 until `flask db upgrade` runs"
        )
    return None
