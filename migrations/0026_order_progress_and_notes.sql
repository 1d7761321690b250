-- 0026 (issue 37): an order's payment status and fulfilment status, kept apart beside its
-- `status` (which stays for existing clients), and the staff's internal notes on an order.
-- payment_status: pending | paid | partially_refunded | refunded | review | voided;
-- fulfillment_status: unfulfilled | partially_shipped | shipped | delivered
-- (shop/orders/progress.py, docs/orders.md). Added with defaults, so the previous release's
-- inserts still work during a rolling upgrade; existing orders are filled from their status,
-- their payment, their shipments and their history.

ALTER TABLE orders ADD COLUMN payment_status TEXT NOT NULL DEFAULT 'pending';
ALTER TABLE orders ADD COLUMN fulfillment_status TEXT NOT NULL DEFAULT 'unfulfilled';

-- The payment keeps review and refunds whatever the order's status became afterwards (a
-- partially refunded order that shipped is `shipped`; its payment stays partially_refunded).
UPDATE orders SET payment_status = CASE
    WHEN (SELECT p.status FROM payments p WHERE p.order_id = orders.id)
        IN ('review', 'partially_refunded', 'refunded')
        THEN (SELECT p.status FROM payments p WHERE p.order_id = orders.id)
    WHEN status = 'pending' THEN 'pending'
    WHEN status = 'cancelled' THEN 'voided'
    WHEN status IN ('refunded', 'partially_refunded') THEN status
    ELSE 'paid'
END;

UPDATE orders SET fulfillment_status = CASE
    WHEN status = 'delivered' OR EXISTS (
        SELECT 1 FROM order_status_history h WHERE h.order_id = orders.id AND h.status = 'delivered'
    ) THEN 'delivered'
    WHEN status IN ('shipped', 'partially_shipped') THEN status
    WHEN NOT EXISTS (SELECT 1 FROM shipment_lines l WHERE l.order_id = orders.id)
        THEN 'unfulfilled'
    WHEN (SELECT SUM(l.quantity) FROM shipment_lines l WHERE l.order_id = orders.id)
        >= (SELECT SUM(i.quantity) FROM order_items i WHERE i.order_id = orders.id)
        THEN 'shipped'
    ELSE 'partially_shipped'
END;

CREATE INDEX IF NOT EXISTS orders_payment_status_created
    ON orders (payment_status, created_at, id);
CREATE INDEX IF NOT EXISTS orders_fulfillment_status_created
    ON orders (fulfillment_status, created_at, id);

-- Staff-only notes on an order (the console's order page): never in the order's JSON, its
-- events or its mails.
CREATE TABLE IF NOT EXISTS order_notes (
    id TEXT PRIMARY KEY,
    order_id TEXT NOT NULL REFERENCES orders (id) ON DELETE CASCADE,
    body TEXT NOT NULL,
    created_at TEXT NOT NULL,
    by_id TEXT,
    by_label TEXT
);

CREATE INDEX IF NOT EXISTS order_notes_order ON order_notes (order_id, created_at, id);
