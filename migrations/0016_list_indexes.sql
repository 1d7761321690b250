-- 0016 (issue 29): every list's page is read from an index in its sort's order, to the `id`
-- tie-break, so a page by cursor ((created_at, id) < (:a, :b)) starts inside the index and
-- no page sorts the rows of one instant (a batch of rows made in one transaction shares
-- it). As 0006 did for orders: the lists of customers, API keys, the audit log, webhooks and
-- a webhook's deliveries.
--
-- `GET /products?in_stock=false` matched a few rows and found them by scanning a sort's
-- index to the end (230 ms at 100,000 products all in stock): a partial index holds only
-- the products out of stock, and the writes of products in stock never touch it.
-- Indexes only: the previous release reads the same tables.

DROP INDEX IF EXISTS customers_created_at;
CREATE INDEX IF NOT EXISTS customers_created_at ON customers (created_at, id);
DROP INDEX IF EXISTS api_keys_owner_id;
CREATE INDEX IF NOT EXISTS api_keys_owner_id ON api_keys (owner_id, created_at, id);
DROP INDEX IF EXISTS api_keys_created_at;
CREATE INDEX IF NOT EXISTS api_keys_created_at ON api_keys (created_at, id);
DROP INDEX IF EXISTS audit_log_at;
CREATE INDEX IF NOT EXISTS audit_log_at ON audit_log (at, id);
DROP INDEX IF EXISTS audit_log_event_at;
CREATE INDEX IF NOT EXISTS audit_log_event_at ON audit_log (event, at, id);
DROP INDEX IF EXISTS webhooks_created_at;
CREATE INDEX IF NOT EXISTS webhooks_created_at ON webhooks (created_at, id);
DROP INDEX IF EXISTS webhook_deliveries_webhook;
CREATE INDEX IF NOT EXISTS webhook_deliveries_webhook
    ON webhook_deliveries (webhook_id, created_at, id);

CREATE INDEX IF NOT EXISTS products_out_of_stock ON products (active, created_at, id)
    WHERE stock = 0;
