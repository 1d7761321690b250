-- 0011: pings and replays are queued for the worker (issue 24): the web process never waits
-- on a receiver. A row is one attempt asked for and not yet made; its id becomes the
-- attempt's id in webhook_attempts, and the row goes when the attempt is recorded. due_at
-- is when the worker may take it, and once taken its lease's token. A new table only: the
-- previous release reads the same tables.

CREATE TABLE IF NOT EXISTS webhook_requests (
    id TEXT PRIMARY KEY,
    delivery_id TEXT NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
    kind TEXT NOT NULL,
    requested_at TEXT NOT NULL,
    due_at TEXT NOT NULL
);

CREATE INDEX IF NOT EXISTS webhook_requests_due ON webhook_requests (due_at);
CREATE INDEX IF NOT EXISTS webhook_requests_delivery ON webhook_requests (delivery_id);
