"""``db.send``: a write whose answer is not read, pipelined with the commit on PostgreSQL
(issue 42). What it promises on both engines: the transaction is still one unit, a later
read sees what was sent, and a sent write that fails fails its transaction."""

import pytest

from shop import db

AT = "2026-01-01T00:00:00.000000Z"  # the entries of these tests
_ENTRY = f"INSERT INTO audit_log (id, at, event) VALUES (:id, '{AT}', :event)"


def _events() -> list[str]:
    """The events of these tests' entries, committed or seen by the open transaction."""
    rows = db.query("SELECT event FROM audit_log WHERE at = :at ORDER BY event", {"at": AT})
    return [row["event"] for row in rows]


def test_a_sent_write_is_read_back_in_its_transaction_and_committed_with_it(app, sql_count):
    with app.app_context(), sql_count() as cost:
        with db.transaction():
            db.send(_ENTRY, {"id": "a1", "event": "first"})
            db.send_many(_ENTRY, [{"id": "a2", "event": "second"}, {"id": "a3", "event": "third"}])
            seen = _events()  # a read: what was sent reaches the server before it
            db.send(_ENTRY, {"id": "a4", "event": "fourth"})

        assert seen == ["first", "second", "third"]
        assert _events() == ["first", "fourth", "second", "third"]
    assert cost == {"statements": 5, "writes": 3}


def test_a_sent_write_that_fails_at_the_commit_rolls_the_whole_transaction_back(app):
    with app.app_context():
        with db.transaction():
            db.execute(_ENTRY, {"id": "b1", "event": "kept"})

        with pytest.raises(Exception) as raised, db.transaction():
            db.execute(_ENTRY, {"id": "b2", "event": "lost"})
            db.send(_ENTRY, {"id": "b3", "event": "lost too"})
            db.send(_ENTRY, {"id": "b1", "event": "the same id again"})

        assert db.unique_violation(raised.value)
        assert _events() == ["kept"]
        with db.transaction():  # the connection serves the next transaction
            db.send(_ENTRY, {"id": "b4", "event": "after"})
        assert _events() == ["after", "kept"]


def test_a_sent_write_that_fails_is_raised_by_the_next_statement_that_is_not_sent(app):
    with app.app_context():
        with db.transaction():
            db.execute(_ENTRY, {"id": "c1", "event": "kept"})

        with pytest.raises(Exception) as raised, db.transaction():
            db.send(_ENTRY, {"id": "c1", "event": "the same id again"})
            db.query("SELECT 1 AS one")
            db.execute(_ENTRY, {"id": "c2", "event": "never run"})

        assert db.unique_violation(raised.value)
        assert _events() == ["kept"]
