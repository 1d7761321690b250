"""``flask users create|list|reset-two-factor``: administrators from the command line."""

import click
from flask.cli import with_appcontext

from shop import db
from shop.cli.common import CommandGroup, fail, require_schema
from shop.errors import ShopError


@click.group("users", cls=CommandGroup)
@with_appcontext
def users_group():
    """Manage administrators."""
    require_schema()


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
        fail(f"The password must have at least {MIN_LENGTH} characters.")
    if "@" not in email:
        fail(f"{email!r} is not an email address.")
    try:
        row = create_user(email, name or email.split("@", 1)[0], password, role)
    except ShopError as error:
        fail(error.message.removeprefix("role: "))
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
        fail(f"No administrator with the email {email!r}.")
    state = "removed" if reset["was_on"] else "was not on; any set-up in progress removed"
    click.echo(
        f"Two-factor sign-in of {reset['email']} {state}; {reset['sessions_ended']} session(s)"
        " ended. They sign in with their password and set it up again (audited:"
        " two_factor.reset)."
    )
