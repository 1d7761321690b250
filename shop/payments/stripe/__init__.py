"""Card payments through Stripe: the only package that names it."""
