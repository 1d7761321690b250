"""``flask api-keys create|list|roll|revoke``: keys made by the operator (no owner, exactly
their scopes; the CLI sees every key)."""

import click
from flask.cli import with_appcontext

from shop.cli.common import CommandGroup, fail, require_schema
from shop.errors import ShopError


@click.group("api-keys", cls=CommandGroup)
@with_appcontext
def api_keys_group():
    """Manage API keys without an administrator session."""
    require_schema()


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
    from shop.auth.keys import rules as key_rules
    from shop.auth.keys import store as key_store

    label = label.strip()
    if not 1 <= len(label) <= 100:
        fail("--label must have 1 to 100 characters.")
    try:
        scope_list = key_rules.parse_scopes(scopes)
        expires_at = key_rules.parse_expiry(expires) if expires else None
    except ValueError as error:
        fail(str(error).replace("scopes:", "--scopes:").replace("expires_at:", "--expires:"))
    record, secret = key_store.create(label, scope_list, expires_at, owner=None)
    click.echo(f"Created API key {record['id']} ({label}) with scopes {' '.join(scope_list)}.")
    _echo_secret(secret)


def _echo_secret(secret: str) -> None:
    click.echo("The secret follows on its own line. It cannot be shown again: store it now.")
    click.echo(secret)


@api_keys_group.command("list")
def api_keys_list():
    """List every key (never a secret)."""
    from shop.auth.keys import store as key_store

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
    from shop.auth.keys import store as key_store

    try:
        rolled = key_store.roll(key_id, None, grace)
    except ShopError as error:
        fail(error.message)
    if rolled is None:
        fail(f"No API key with id {key_id}.")
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
    from shop.auth.keys import store as key_store

    if not key_store.revoke(key_id, None):
        fail(f"No API key with id {key_id}.")
    click.echo(f"Revoked API key {key_id}.")
