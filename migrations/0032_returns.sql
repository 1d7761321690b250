-- 0032: returns (issue 41, shop/returns): units of an order's shipped lines its customer
-- sends back. A return moves requested -> approved -> received, or requested -> rejected;
-- its lines are the units asked for and, once received, the units that arrived. The refund
-- and restock of a received return are an ordinary refund (refund_id, docs/returns.md).
CREATE TABLE IF NOT EXISTS returns (
    id TEXT PRIMARY KEY,
    order_id TEXT NOT NULL REFERENCES orders (id) ON DELETE CASCADE,
    status TEXT NOT NULL,
    note TEXT,
    instructions TEXT,
    reject_reason TEXT,
    restock INTEGER NOT NULL DEFAULT 0,
    refund INTEGER NOT NULL DEFAULT 0,
    refund_id TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    decided_at TEXT,
    received_at TEXT,
    by_kind TEXT,
    by_id TEXT,
    by_label TEXT
);

CREATE INDEX IF NOT EXISTS returns_order ON returns (order_id, created_at, id);
CREATE INDEX IF NOT EXISTS returns_created ON returns (created_at, id);
CREATE INDEX IF NOT EXISTS returns_status_created ON returns (status, created_at, id);

CREATE TABLE IF NOT EXISTS return_lines (
    return_id TEXT NOT NULL REFERENCES returns (id) ON DELETE CASCADE,
    order_id TEXT NOT NULL REFERENCES orders (id) ON DELETE CASCADE,
    line INTEGER NOT NULL,
    quantity INTEGER NOT NULL CHECK (quantity > 0),
    received INTEGER CHECK (received >= 0),
    reason TEXT,
    PRIMARY KEY (return_id, line)
);

CREATE INDEX IF NOT EXISTS return_lines_order ON return_lines (order_id, line);
