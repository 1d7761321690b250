"""Payments: the providers (``providers``: the interface, manual payments, the registry),
refunds, and card payments in ``stripe/``, whose provider is registered here."""

from shop.payments import providers
from shop.payments.stripe.provider import Stripe

providers.register(Stripe())
