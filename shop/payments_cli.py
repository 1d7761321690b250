"""``flask payments reconcile [--since DATE] [--fix]`` (docs/payments.md#reconcile).

Compares our Stripe payments with Stripe's PaymentIntents and prints one JSON line per
difference: a paid intent whose order is still pending, a refund we did not record. With
``--fix`` it applies them, through the same functions as the webhook (once each).
"""

from datetime import UTC, datetime

import click
from flask import g
from flask.cli import AppGroup, with_appcontext

from shop.auth.caller import system
from shop.services import stripe_gateway, stripe_payments


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
    g.caller = system("payments reconcile")
    try:
        found = stripe_payments.reconcile(created_after, fix)
    except stripe_gateway.Unavailable as error:
        raise click.ClickException(f"Stripe cannot be reached: {error}") from None
    except stripe_gateway.Refused as refusal:
        raise click.ClickException(f"Stripe refused: {refusal.reason}") from None
    if found:
        click.echo(stripe_payments.dumps(found))
    verb = "fixed" if fix else "found"
    click.echo(f"{len(found)} difference(s) {verb}.")
