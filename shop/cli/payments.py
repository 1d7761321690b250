"""``flask payments reconcile [--since DATE] [--fix]`` (docs/payments.md#reconcile).

Compares our Stripe payments with Stripe's PaymentIntents, both ways, and prints one JSON
line per difference (``stripe_payments.reconcile``). With ``--fix`` it applies those where
Stripe's word is the money it holds (a paid intent whose order is still pending, a refund
made at Stripe), through the same functions as the webhook (once each); the others are
left to a person, and printed again on every run until they are resolved.
"""

from datetime import UTC, datetime

import click
from flask.cli import AppGroup, with_appcontext

from shop.actor import system
from shop.payments.stripe import gateway as stripe_gateway
from shop.payments.stripe import intents as stripe_payments


@click.group("payments", cls=AppGroup)
@with_appcontext
def payments_group():
    """Card payments (Stripe)."""


@payments_group.command("reconcile")
@click.option("--since", help="Only intents created on or after this ISO 8601 date or time.")
@click.option("--fix", is_flag=True, help="Apply the differences found.")
def reconcile(since, fix):
    """Compare our payments with Stripe's and report (or --fix) the differences."""
    if not stripe_gateway.configured():
        raise click.ClickException("Stripe is not configured: set STRIPE_API_KEY and the secret.")
    created_after = None
    if since:
        try:
            moment = datetime.fromisoformat(since)
        except ValueError:
            raise click.ClickException("--since: give an ISO 8601 date or date-time.") from None
        created_after = int((moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp())
    try:
        found = stripe_payments.reconcile(created_after, fix, system("payments reconcile"))
    except stripe_gateway.Unavailable as error:
        raise click.ClickException(f"Stripe cannot be reached: {error}") from None
    except stripe_gateway.Refused as refusal:
        raise click.ClickException(f"Stripe refused: {refusal.reason}") from None
    if found:
        click.echo(stripe_payments.dumps(found))
    if not fix:
        click.echo(f"{len(found)} difference(s) found.")
        return
    fixed = sum(1 for item in found if item["fixed"])
    click.echo(f"{fixed} difference(s) fixed.")
    if len(found) > fixed:
        click.echo(f"{len(found) - fixed} difference(s) left to a person.")
