-- 0014 (issue 27): card payments through Stripe and refunds. Additive only: the previous
-- release reads and writes the same tables (new columns have defaults).
-- stripe_events records each Stripe event id once, in the transaction of its effect.
-- refunds: one row per refund (manual or Stripe); orders.refunded_cents is the running sum
-- of refunds taken (pending and succeeded), bumped by a guarded UPDATE so that concurrent
-- refunds can never exceed what was paid.

ALTER TABLE orders ADD COLUMN refunded_cents BIGINT NOT NULL DEFAULT 0;

ALTER TABLE payments ADD COLUMN note TEXT;

CREATE TABLE IF NOT EXISTS stripe_events (
    id TEXT PRIMARY KEY,
    type TEXT NOT NULL,
    order_id TEXT,
    received_at TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS refunds (
    id TEXT PRIMARY KEY,
    order_id TEXT NOT NULL REFERENCES orders (id) ON DELETE CASCADE,
    amount_cents BIGINT NOT NULL CHECK (amount_cents >= 0),
    currency TEXT NOT NULL,
    lines TEXT NOT NULL DEFAULT '[]',
    shipping INTEGER NOT NULL DEFAULT 0,
    restock TEXT NOT NULL DEFAULT '[]',
    reason TEXT,
    provider TEXT NOT NULL,
    reference TEXT,
    status TEXT NOT NULL,
    idempotency_key TEXT,
    request_hash TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    by_kind TEXT,
    by_id TEXT,
    by_label TEXT
);

CREATE INDEX IF NOT EXISTS refunds_order ON refunds (order_id, created_at);
CREATE UNIQUE INDEX IF NOT EXISTS refunds_order_key ON refunds (order_id, idempotency_key);
CREATE UNIQUE INDEX IF NOT EXISTS refunds_reference ON refunds (reference);
