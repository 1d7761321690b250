"""Prices: the one pricing function and the basket it prices."""
