"""Online backups and restores: ``flask db backup PATH`` and ``flask db restore PATH``.

SQLite: the backup API copies the whole file in one step inside a read transaction, so the
copy is one consistent moment while writers go on (WAL); the copy is checked with
``PRAGMA integrity_check`` and written as one self-contained file. PostgreSQL: ``pg_dump``
in its custom format (one snapshot, writers go on), restored by ``pg_restore`` in one
transaction; both must be installed (Debian: ``postgresql-client``, the server's major
version or newer). The password never goes on a command line, where ``ps`` would show it.

A backup never overwrites a file: it is written beside the target and renamed when
complete. A restore goes only into an empty database, so it never mixes two shops.
"""

import os
import shutil
import sqlite3
import subprocess
from pathlib import Path

from shop.db import Database

_SQLITE_HEADER = b"SQLite format 3\x00"
_PG_HEADER = b"PGDMP"


class BackupError(RuntimeError):
    """A backup or restore that cannot be done; the message says why."""


def backup(database: Database, path: str) -> str:
    """Write a consistent copy of the database to ``path``; answer what was written."""
    target = Path(path)
    if target.exists():
        raise BackupError(f"{path} exists already: a backup never overwrites a file")
    if not target.parent.is_dir():
        raise BackupError(f"{target.parent} is not a folder")
    partial = target.with_name(target.name + ".partial")
    partial.unlink(missing_ok=True)
    try:
        if database.engine == "sqlite":
            _backup_sqlite(database, partial)
        else:
            _backup_postgresql(database, partial)
        partial.rename(target)
    finally:
        partial.unlink(missing_ok=True)
    return f"{target} ({target.stat().st_size:,} bytes)"


def _backup_sqlite(database: Database, partial: Path) -> None:
    source = sqlite3.connect(database.path, timeout=30)
    copy = sqlite3.connect(partial)
    try:
        source.backup(copy)  # every page in one step: one snapshot, writers not blocked
        copy.execute("PRAGMA journal_mode = DELETE")  # a single file, no -wal beside it
        _check_sqlite(copy, "the backup")
    finally:
        copy.close()
        source.close()


def _check_sqlite(conn, what: str) -> None:
    result = conn.execute("PRAGMA integrity_check").fetchall()
    if result != [("ok",)]:
        raise BackupError(f"{what} fails PRAGMA integrity_check: {result[:3]}")


def _backup_postgresql(database: Database, partial: Path) -> None:
    args = ["--format=custom", f"--file={partial}"]
    schema = database.value("SELECT current_schema()")
    if schema and schema != "public":  # a schema of its own (as the tests use): only that
        args.append(f"--schema={schema}")
    _run_pg("pg_dump", database, args)
    _run_pg("pg_restore", database, ["--list", str(partial)], connect=False)  # it reads back


def restore(database: Database, path: str) -> str:
    """Restore the backup at ``path`` into the database, which must be empty."""
    source = Path(path)
    if not source.is_file():
        raise BackupError(f"{path} is not a file")
    with source.open("rb") as f:
        header = f.read(16)
    expected = _SQLITE_HEADER if database.engine == "sqlite" else _PG_HEADER
    if not header.startswith(expected):
        kind = "an SQLite" if database.engine == "sqlite" else "a pg_dump custom-format"
        raise BackupError(f"{path} is not {kind} backup, which this {database.engine} needs")
    if _has_tables(database):
        raise BackupError(
            "the database is not empty: restore into a new database (or move this one away)"
        )
    if database.engine == "sqlite":
        _restore_sqlite(database, source)
    else:
        args = ["--no-owner", "--no-privileges", "--exit-on-error", "--single-transaction"]
        _run_pg("pg_restore", database, [*args, str(source)])
    return str(source)


def _has_tables(database: Database) -> bool:
    if database.engine == "sqlite":
        return bool(database.value("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table'"))
    return bool(
        database.value(
            "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = current_schema()"
        )
    )


def _restore_sqlite(database: Database, source: Path) -> None:
    database.close_all()  # the (empty) file is replaced: nobody may hold it open
    target = Path(database.path)
    for suffix in ("", "-wal", "-shm"):
        Path(f"{target}{suffix}").unlink(missing_ok=True)
    backup_conn = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
    restored = sqlite3.connect(target)
    try:
        backup_conn.backup(restored)
        restored.execute("PRAGMA journal_mode = WAL")
        _check_sqlite(restored, "the restored database")
    finally:
        restored.close()
        backup_conn.close()


def _run_pg(tool: str, database: Database, args: list, connect: bool = True) -> None:
    """Run pg_dump or pg_restore on the database; the password goes through the environment."""
    import psycopg.conninfo

    binary = shutil.which(tool)
    if binary is None:
        raise BackupError(
            f"{tool} is not installed: install PostgreSQL's client tools (Debian:"
            " postgresql-client, the server's major version or newer), or back up with your"
            " provider's tools"
        )
    env = dict(os.environ)
    command = [binary, *args]
    if connect:
        params = psycopg.conninfo.conninfo_to_dict(database.url)
        password = params.pop("password", None)
        if password:
            env["PGPASSWORD"] = password
        command.insert(1, f"--dbname={psycopg.conninfo.make_conninfo(**params)}")
    result = subprocess.run(command, env=env, capture_output=True, text=True, check=False)  # noqa: S603
    if result.returncode != 0:
        raise BackupError(f"{tool} failed: {result.stderr.strip()[-2000:]}")
