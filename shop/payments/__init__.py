"""Payments: the provider interface, manual payments, refunds and Stripe."""
