"""``flask payments reconcile [--since DATE] [--fix]`` (docs/payments.md#reconcile).

Compares our payments with each provider's that keeps its own (Stripe's PaymentIntents),
both ways, and prints one JSON line per difference (``Provider.reconcile``). With ``--fix``
it applies those where the provider's word is the money it holds (a paid intent whose order
is still pending, a refund made there), through the same functions as its events (once
each); the others are left to a person, and printed again on every run until resolved.
"""

import json
from datetime import UTC, datetime

import click
from flask.cli import AppGroup, with_appcontext

from shop.actor import system
from shop.payments import providers
from shop.payments.providers import ProviderFailed


@click.group("payments", cls=AppGroup)
@with_appcontext
def payments_group():
    """Card payments (Stripe)."""


@payments_group.command("reconcile")
@click.option("--since", help="Only intents created on or after this ISO 8601 date or time.")
@click.option("--fix", is_flag=True, help="Apply the differences found.")
def reconcile(since, fix):
    """Compare our payments with Stripe's and report (or --fix) the differences."""
    created_after = None
    if since:
        try:
            moment = datetime.fromisoformat(since)
        except ValueError:
            raise click.ClickException("--since: give an ISO 8601 date or date-time.") from None
        created_after = int((moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp())
    actor = system("payments reconcile")
    found = []
    try:
        for provider in providers.reconciling():
            found += provider.reconcile(created_after, fix, actor)
    except ProviderFailed as failure:
        raise click.ClickException(str(failure)) from None
    if found:
        click.echo("\n".join(json.dumps(item, sort_keys=True) for item in found))
    if not fix:
        click.echo(f"{len(found)} difference(s) found.")
        return
    fixed = sum(1 for item in found if item["fixed"])
    click.echo(f"{fixed} difference(s) fixed.")
    if len(found) > fixed:
        click.echo(f"{len(found) - fixed} difference(s) left to a person.")
