"""Discounts: the codes a shop gives, when one may be used, and the count of its uses."""
