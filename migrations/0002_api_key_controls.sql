-- API keys that lead the field (issue 14): rolling with a grace window, address allow-lists,
-- per-key limits, usage counted in batches, and markers so that each lifecycle audit entry is
-- written once. Expand only: new nullable columns and new tables, which the previous release
-- ignores.

ALTER TABLE api_keys ADD COLUMN rolled_from TEXT;
ALTER TABLE api_keys ADD COLUMN rolled_to TEXT;
ALTER TABLE api_keys ADD COLUMN allowed_ips TEXT;
ALTER TABLE api_keys ADD COLUMN rate_limit_per_minute INTEGER;
ALTER TABLE api_keys ADD COLUMN expiry_warned_at TEXT;
ALTER TABLE api_keys ADD COLUMN idle_audited_at TEXT;

CREATE TABLE IF NOT EXISTS api_key_usage (
    key_id TEXT NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
    day TEXT NOT NULL,
    requests INTEGER NOT NULL DEFAULT 0,
    unauthorized INTEGER NOT NULL DEFAULT 0,
    forbidden INTEGER NOT NULL DEFAULT 0,
    rate_limited INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (key_id, day)
);

CREATE TABLE IF NOT EXISTS api_key_addresses (
    key_id TEXT NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
    ip TEXT NOT NULL,
    first_seen_at TEXT NOT NULL,
    last_seen_at TEXT NOT NULL,
    PRIMARY KEY (key_id, ip)
);
