SET LOCAL lock_timeout = '5s';
-- 0034: order edits before fulfilment (issue 41, docs/orders.md "Editing an order"). Each
-- edit of an order is a row: what it changed (JSON), the totals before and after, the
-- refund it made (a paid order edited down) and the balance it left (edited up); an
-- Idempotency-Key replays it. orders.balance_due_cents: what the customer owes since an edit
-- raised a paid order's total (negative: what the shop owes after an edit's refund failed);
-- orders.edit_refunded_cents: the part of refunded_cents that edits gave back (money that
-- no longer belongs to the order, so not refundable again); refunds.edit_id: the edit a
-- refund gave back the difference of.
ALTER TABLE orders ADD COLUMN balance_due_cents BIGINT NOT NULL DEFAULT 0;
ALTER TABLE orders ADD COLUMN edit_refunded_cents BIGINT NOT NULL DEFAULT 0;
ALTER TABLE refunds ADD COLUMN edit_id TEXT;

CREATE TABLE IF NOT EXISTS order_edits (
    id TEXT PRIMARY KEY,
    order_id TEXT NOT NULL REFERENCES orders (id) ON DELETE CASCADE,
    changes TEXT NOT NULL,
    note TEXT,
    before_totals TEXT NOT NULL,
    after_totals TEXT NOT NULL,
    refund_id TEXT,
    balance_due_cents BIGINT NOT NULL DEFAULT 0,
    idempotency_key TEXT,
    request_hash TEXT,
    created_at TEXT NOT NULL,
    by_kind TEXT,
    by_id TEXT,
    by_label TEXT
);

CREATE INDEX IF NOT EXISTS order_edits_order ON order_edits (order_id, created_at, id);
CREATE UNIQUE INDEX IF NOT EXISTS order_edits_order_key ON order_edits (order_id, idempotency_key);

-- An edit of an invoiced order credits its invoice in full and issues a new one (the law's
-- correction): an order has one current invoice (superseded_at null) and any number of
-- superseded ones; a credit note is a refund's or an edit's.
ALTER TABLE invoices DROP CONSTRAINT IF EXISTS invoices_order_id_key;
ALTER TABLE invoices ADD COLUMN superseded_at TEXT;
CREATE UNIQUE INDEX IF NOT EXISTS invoices_current ON invoices (order_id) WHERE superseded_at IS NULL;
ALTER TABLE credit_notes ALTER COLUMN refund_id DROP NOT NULL;
ALTER TABLE credit_notes ADD COLUMN edit_id TEXT;
CREATE UNIQUE INDEX IF NOT EXISTS credit_notes_edit ON credit_notes (edit_id);
