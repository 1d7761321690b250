"""Use cases that span several resources (checkout), as plain functions."""
