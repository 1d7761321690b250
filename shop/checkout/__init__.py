"""Checkout: a basket becomes an order, its payment and its stock movements."""
