-- 0038: a card order's balance collected by a pay link (issue 41, docs/orders.md
-- "Collecting a balance"). orders.balance_token_hash: the SHA-256 of the pay link's token
-- (32 random bytes, mailed; a new link replaces it). balance_payments: one row per
-- PaymentIntent asked for a balance (its amount, Stripe's intent id once made, pending /
-- succeeded / cancelled / review); the webhook lowers the balance once per intent.
-- refunds.parts: how a card refund is split over the order's intents (JSON, NULL for the
-- refunds made before: all of the order's first intent).
ALTER TABLE orders ADD COLUMN balance_token_hash TEXT;
ALTER TABLE refunds ADD COLUMN parts TEXT;

CREATE TABLE IF NOT EXISTS balance_payments (
    id TEXT PRIMARY KEY,
    order_id TEXT NOT NULL REFERENCES orders (id) ON DELETE CASCADE,
    amount_cents BIGINT NOT NULL CHECK (amount_cents > 0),
    currency TEXT NOT NULL,
    reference TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL,
    received_cents BIGINT NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);

CREATE INDEX IF NOT EXISTS balance_payments_order ON balance_payments (order_id, created_at);
CREATE UNIQUE INDEX IF NOT EXISTS balance_payments_reference ON balance_payments (reference)
    WHERE reference <> '';
CREATE UNIQUE INDEX IF NOT EXISTS orders_balance_token ON orders (balance_token_hash);
