"""The flask commands an operator bootstraps with: init-db and users."""

import threading

import pytest

from tests.conftest import PASSWORD, login


def test_init_db_is_idempotent(app):
    runner = app.test_cli_runner()
    for _ in range(2):
        result = runner.invoke(args=["init-db"])
        assert result.exit_code == 0 and "ready" in result.output


def test_create_the_first_owner_and_sign_in(app):
    result = app.test_cli_runner().invoke(
        args=["users", "create", "--email", "Boss@Example.com", "--password", PASSWORD]
    )
    assert result.exit_code == 0, result.output
    assert "boss@example.com (owner)" in result.output
    assert PASSWORD not in result.output
    assert login(app.test_client(), "boss@example.com")["role"] == "owner"


def test_password_is_prompted_hidden_when_left_out(app):
    result = app.test_cli_runner().invoke(
        args=["users", "create", "--email", "ed@example.com", "--role", "editor"],
        input=f"{PASSWORD}\n{PASSWORD}\n",
    )
    assert result.exit_code == 0, result.output
    assert PASSWORD not in result.output
    assert login(app.test_client(), "ed@example.com")["role"] == "editor"


def test_duplicate_unknown_role_and_short_password_exit_1(app):
    runner = app.test_cli_runner()
    args = ["users", "create", "--email", "a@example.com", "--password", PASSWORD]
    assert runner.invoke(args=args).exit_code == 0
    duplicate = runner.invoke(args=args)
    assert duplicate.exit_code == 1 and "already exists" in duplicate.output
    unknown = runner.invoke(
        args=[
            "users",
            "create",
            "--email",
            "b@example.com",
            "--password",
            PASSWORD,
            "--role",
            "emperor",
        ]
    )
    assert unknown.exit_code == 1 and "unknown role 'emperor'" in unknown.output
    assert "the roles are admin, editor, owner, support" in unknown.output
    short = runner.invoke(args=["users", "create", "--email", "c@example.com", "--password", "x"])
    assert short.exit_code == 1 and "at least 8" in short.output


def test_users_list(app):
    runner = app.test_cli_runner()
    assert "No administrators yet" in runner.invoke(args=["users", "list"]).output
    runner.invoke(args=["users", "create", "--email", "a@example.com", "--password", PASSWORD])
    listed = runner.invoke(args=["users", "list"]).output
    assert "a@example.com" in listed and "owner" in listed and "scrypt" not in listed


def test_a_node_starting_beside_an_open_write_does_not_wait_for_it(app, make_app, database_url):
    """A start on a schema already in place runs no DDL: CREATE INDEX IF NOT EXISTS would
    take the products table's SHARE lock and wait for (or deadlock with) live writes."""
    if database_url.startswith("sqlite"):
        pytest.skip("SQLite runs one writer at a time: a start waits for an open write")
    import psycopg

    started = []
    with psycopg.connect(database_url) as writer:  # a transaction, as a live checkout holds
        writer.execute(
            "INSERT INTO products (id, name, slug, price_cents, stock, created_at, updated_at)"
            " VALUES ('0123456789abcdef01234567', 'Lamp', 'lamp', 100, 1, 'x', 'x')"
        )
        node = threading.Thread(target=lambda: started.append(make_app()), daemon=True)
        node.start()
        node.join(timeout=30)
        assert started, "the new node waited for the open transaction"
        writer.rollback()
    assert app.test_client().get("/products").json["total"] == 0


def test_api_key_label_is_given_as_label_or_as_name(app):
    runner = app.test_cli_runner()
    for option in ("--label", "--name"):
        result = runner.invoke(
            args=["api-keys", "create", option, f"by {option}", "--scopes", "read:product"]
        )
        assert result.exit_code == 0, result.output
        assert f"(by {option})" in result.output
    listed = runner.invoke(args=["api-keys", "list"]).output
    assert "by --label" in listed and "by --name" in listed
    empty = runner.invoke(args=["api-keys", "create", "--label", " ", "--scopes", "read:product"])
    assert empty.exit_code == 1 and "--label must have 1 to 100 characters" in empty.output


@pytest.mark.parametrize("command", [["db", "upgrade"], ["db", "status"], ["users", "list"]])
def test_a_database_that_cannot_be_reached_is_one_line_and_exit_1(command):
    from shop import create_app
    from tests.live import free_port

    app = create_app({"DATABASE_URL": f"postgresql://postgres@127.0.0.1:{free_port()}/shop"})
    result = app.test_cli_runner().invoke(args=command)
    assert result.exit_code == 1
    assert result.output.startswith("Error: the database cannot be reached: connection failed")
    assert "Traceback" not in result.output
