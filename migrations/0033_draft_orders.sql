-- 0033: draft orders (issue 41): an order staff prepare for a customer (customer_id) or for
-- an e-mail without an account (email), priced by the quote's function and taking no stock
-- until it is completed (order_id: the order it made; read-only from then on).
-- status: 'open' or 'completed'. credit_cents (with credit_note): value the customer has
-- already given (an exchange's returned goods), counted as paid when the order is made.
-- token_hash: the SHA-256 of the pay link's token (32 random bytes) mailed by send (sent_at).
CREATE TABLE IF NOT EXISTS draft_orders (
    id TEXT PRIMARY KEY,
    status TEXT NOT NULL DEFAULT 'open',
    customer_id TEXT REFERENCES customers (id) ON DELETE CASCADE,
    email TEXT,
    shipping_address TEXT NOT NULL,
    shipping_method_id TEXT,
    discount_code TEXT,
    note TEXT,
    credit_cents BIGINT NOT NULL DEFAULT 0 CHECK (credit_cents >= 0),
    credit_note TEXT,
    token_hash TEXT UNIQUE,
    sent_at TEXT,
    order_id TEXT REFERENCES orders (id) ON DELETE SET NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);

CREATE INDEX IF NOT EXISTS draft_orders_created ON draft_orders (created_at, id);
CREATE INDEX IF NOT EXISTS draft_orders_customer ON draft_orders (customer_id);

-- A draft's lines, in order (line 1, 2, ...); one line per variant.
CREATE TABLE IF NOT EXISTS draft_order_lines (
    draft_id TEXT NOT NULL REFERENCES draft_orders (id) ON DELETE CASCADE,
    line INTEGER NOT NULL,
    variant_id TEXT NOT NULL REFERENCES product_variants (id) ON DELETE CASCADE,
    quantity INTEGER NOT NULL CHECK (quantity > 0),
    PRIMARY KEY (draft_id, line),
    UNIQUE (draft_id, variant_id)
);

CREATE INDEX IF NOT EXISTS draft_order_lines_variant ON draft_order_lines (variant_id);
