-- 0012: a list read with updated_after is sorted by (updated_at, id) (issue 28's sync): on
-- the tables that grow (orders, customers, a webhook's deliveries) an index in that order
-- serves the page without a sort. Indexes only: the previous release reads the same tables.

CREATE INDEX IF NOT EXISTS orders_updated_at ON orders (updated_at, id);
CREATE INDEX IF NOT EXISTS customers_updated_at ON customers (updated_at, id);
CREATE INDEX IF NOT EXISTS webhook_deliveries_webhook_updated
    ON webhook_deliveries (webhook_id, updated_at, id);
