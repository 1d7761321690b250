-- 0015: shipments (issue 27): what left the warehouse, by which carrier, with which tracking
-- number, and how many units of which order lines. An order's shipped quantity of a line is
-- the sum of its shipment_lines; the order moves to partially_shipped or shipped. New tables
-- only: the previous release reads the same tables.

CREATE TABLE IF NOT EXISTS shipments (
    id TEXT PRIMARY KEY,
    order_id TEXT NOT NULL REFERENCES orders (id) ON DELETE CASCADE,
    carrier TEXT NOT NULL,
    tracking_number TEXT NOT NULL,
    tracking_url TEXT,
    created_at TEXT NOT NULL,
    by_kind TEXT,
    by_id TEXT,
    by_label TEXT
);

CREATE INDEX IF NOT EXISTS shipments_order ON shipments (order_id, created_at, id);

CREATE TABLE IF NOT EXISTS shipment_lines (
    shipment_id TEXT NOT NULL REFERENCES shipments (id) ON DELETE CASCADE,
    order_id TEXT NOT NULL REFERENCES orders (id) ON DELETE CASCADE,
    line INTEGER NOT NULL,
    quantity INTEGER NOT NULL CHECK (quantity > 0),
    PRIMARY KEY (shipment_id, line)
);

CREATE INDEX IF NOT EXISTS shipment_lines_order ON shipment_lines (order_id, line);
