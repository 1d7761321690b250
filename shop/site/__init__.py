"""The shop's own settings and content."""
