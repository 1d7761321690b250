-- 0006: the orders list sorts by (created_at DESC, id DESC); its indexes end in id too, so a
-- page is read in index order with no sort of the tie-break (issue 29). Indexes only: the
-- previous release reads the same tables.

DROP INDEX IF EXISTS orders_customer_created;
CREATE INDEX IF NOT EXISTS orders_customer_created ON orders (customer_id, created_at, id);
DROP INDEX IF EXISTS orders_created_at;
CREATE INDEX IF NOT EXISTS orders_created_at ON orders (created_at, id);
DROP INDEX IF EXISTS orders_status_created;
CREATE INDEX IF NOT EXISTS orders_status_created ON orders (status, created_at, id);
