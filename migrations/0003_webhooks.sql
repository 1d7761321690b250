-- Webhooks (issue 15): endpoints, their event subscriptions, the outbox of events written in
-- the transaction of the change, one delivery per (event, endpoint) and each attempt of it.
CREATE TABLE IF NOT EXISTS webhooks (
    id TEXT PRIMARY KEY,
    url TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    secret TEXT NOT NULL,
    previous_secret TEXT,
    previous_secret_expires_at TEXT,
    enabled INTEGER NOT NULL DEFAULT 1,
    disabled_reason TEXT,
    disabled_at TEXT,
    owner_id TEXT REFERENCES users (id) ON DELETE SET NULL,
    key_id TEXT REFERENCES api_keys (id) ON DELETE SET NULL,
    created_with TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    last_success_at TEXT,
    failing_since TEXT
);

CREATE INDEX IF NOT EXISTS webhooks_created_at ON webhooks (created_at);

CREATE TABLE IF NOT EXISTS webhook_subscriptions (
    webhook_id TEXT NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    event TEXT NOT NULL,
    PRIMARY KEY (webhook_id, event)
);

CREATE INDEX IF NOT EXISTS webhook_subscriptions_event ON webhook_subscriptions (event);

CREATE TABLE IF NOT EXISTS webhook_events (
    id TEXT PRIMARY KEY,
    type TEXT NOT NULL,
    subject_id TEXT,
    payload TEXT NOT NULL,
    created_at TEXT NOT NULL
);

CREATE INDEX IF NOT EXISTS webhook_events_type_subject ON webhook_events (type, subject_id);

CREATE TABLE IF NOT EXISTS webhook_deliveries (
    id TEXT PRIMARY KEY,
    webhook_id TEXT NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    event_id TEXT NOT NULL REFERENCES webhook_events (id) ON DELETE CASCADE,
    event_type TEXT NOT NULL,
    status TEXT NOT NULL,
    scheduled_attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);

CREATE INDEX IF NOT EXISTS webhook_deliveries_due ON webhook_deliveries (next_attempt_at);
CREATE INDEX IF NOT EXISTS webhook_deliveries_webhook ON webhook_deliveries (webhook_id, created_at);
CREATE INDEX IF NOT EXISTS webhook_deliveries_event ON webhook_deliveries (event_id);

CREATE TABLE IF NOT EXISTS webhook_attempts (
    id TEXT PRIMARY KEY,
    delivery_id TEXT NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
    at TEXT NOT NULL,
    kind TEXT NOT NULL,
    status_code INTEGER,
    duration_ms INTEGER NOT NULL,
    response_excerpt TEXT,
    error TEXT
);

CREATE INDEX IF NOT EXISTS webhook_attempts_delivery ON webhook_attempts (delivery_id, at);
