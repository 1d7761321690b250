"""SQLite's WAL checkpoints run in a thread of their own after every ``every`` committed write
transactions, not inside a commit that holds the writer lock (``shop/db/sqlite.py``,
``Checkpointer``). SQLite-only: PostgreSQL checkpoints in its own server."""

import shutil
import sqlite3
from contextlib import closing

from shop.db.engine import Database


def _rows_in_the_file_alone(path, tmp_path) -> int:
    """The rows of ``t`` the database file holds without its WAL: what checkpoints copied."""
    copy = tmp_path / "copy.db"
    shutil.copyfile(path, copy)
    with closing(sqlite3.connect(copy)) as conn:
        return conn.execute("SELECT COUNT(*) FROM t").fetchone()[0]


def test_every_32nd_write_transaction_copies_the_wal_back_from_another_thread(tmp_path):
    path = tmp_path / "shop.db"
    database = Database(f"sqlite:///{path}")
    try:
        database.execute("CREATE TABLE t (n INTEGER)")  # the 1st write transaction
        database.connection().execute("PRAGMA wal_checkpoint(TRUNCATE)")  # t in the file
        for n in range(2, 32):
            with database.transaction():
                database.execute("INSERT INTO t (n) VALUES (:n)", {"n": n})
        assert database.checkpointer.thread is None
        assert _rows_in_the_file_alone(path, tmp_path) == 0  # all 30 still in the WAL only

        database.execute("INSERT INTO t (n) VALUES (32)")  # the 32nd
        database.checkpointer.thread.join()

        assert database.checkpointer.thread.name == "sqlite-checkpoint"
        assert _rows_in_the_file_alone(path, tmp_path) == 31
    finally:
        database.close_all()


def test_our_connections_leave_the_checkpoints_to_the_checkpointer(tmp_path):
    database = Database(f"sqlite:///{tmp_path / 'shop.db'}")
    try:
        pages = database.connection().execute("PRAGMA wal_autocheckpoint").fetchone()[0]
    finally:
        database.close_all()
    assert pages == 10_000  # SQLite's default, 1,000, checkpointed inside a checkout's commit
