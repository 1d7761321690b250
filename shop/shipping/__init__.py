"""Shipping: countries, methods and where they go."""
