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
-- superseded ones; a credit note is a refund's or an edit's. SQLite drops a UNIQUE and a
-- NOT NULL only by rebuilding the table (docs/migrations.md), new columns at the end.
CREATE TABLE invoices_new (
    id TEXT PRIMARY KEY,
    order_id TEXT NOT NULL REFERENCES orders (id) ON DELETE CASCADE,
    number TEXT NOT NULL UNIQUE,
    issued_at TEXT NOT NULL,
    customer_id TEXT,
    currency TEXT NOT NULL,
    total_cents BIGINT NOT NULL,
    snapshot TEXT NOT NULL,
    superseded_at TEXT
);
INSERT INTO invoices_new (id, order_id, number, issued_at, customer_id, currency, total_cents,
    snapshot)
SELECT id, order_id, number, issued_at, customer_id, currency, total_cents, snapshot
FROM invoices;
DROP TABLE invoices;
ALTER TABLE invoices_new RENAME TO invoices;
CREATE INDEX IF NOT EXISTS invoices_issued ON invoices (issued_at, id);
CREATE UNIQUE INDEX IF NOT EXISTS invoices_current ON invoices (order_id) WHERE superseded_at IS NULL;

CREATE TABLE credit_notes_new (
    id TEXT PRIMARY KEY,
    refund_id TEXT UNIQUE REFERENCES refunds (id) ON DELETE CASCADE,
    order_id TEXT NOT NULL REFERENCES orders (id) ON DELETE CASCADE,
    invoice_id TEXT NOT NULL REFERENCES invoices (id) ON DELETE CASCADE,
    number TEXT NOT NULL UNIQUE,
    issued_at TEXT NOT NULL,
    currency TEXT NOT NULL,
    total_cents BIGINT NOT NULL,
    snapshot TEXT NOT NULL,
    edit_id TEXT
);
INSERT INTO credit_notes_new (id, refund_id, order_id, invoice_id, number, issued_at, currency,
    total_cents, snapshot)
SELECT id, refund_id, order_id, invoice_id, number, issued_at, currency, total_cents, snapshot
FROM credit_notes;
DROP TABLE credit_notes;
ALTER TABLE credit_notes_new RENAME TO credit_notes;
CREATE INDEX IF NOT EXISTS credit_notes_issued ON credit_notes (issued_at, id);
CREATE INDEX IF NOT EXISTS credit_notes_order ON credit_notes (order_id);
CREATE UNIQUE INDEX IF NOT EXISTS credit_notes_edit ON credit_notes (edit_id);
