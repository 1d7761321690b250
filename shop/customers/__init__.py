"""Customers: who buys, their profile and addresses."""
