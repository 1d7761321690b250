"""API keys: the records (``store``), their input rules (``rules``), status (``state``),
audited events (``events``), the Bearer secret on a request (``bearer``), the verified keys
kept in memory (``cache``), what they did (``usage``) and the scheduler's sweeps (``sweep``).
docs/api-keys.md is the user's guide."""
