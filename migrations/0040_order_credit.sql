-- 0040: an order paid partly or wholly with credit (a draft's credit_cents: a return's
-- exchange, docs/draft-orders.md "Credit"). orders.credit_cents: the part of the total the
-- credit paid, so a refund gives back in money only what was paid with money;
-- refunds.credit_cents: the credit share of the units (and shipping) a money refund took
-- back, not paid out, so a refund of everything leaves the order refunded. Completed drafts
-- tell which orders their credit paid.
ALTER TABLE orders ADD COLUMN credit_cents BIGINT NOT NULL DEFAULT 0;
ALTER TABLE refunds ADD COLUMN credit_cents BIGINT NOT NULL DEFAULT 0;
UPDATE orders SET credit_cents = (
    SELECT MAX(d.credit_cents) FROM draft_orders d WHERE d.order_id = orders.id
) WHERE id IN (SELECT order_id FROM draft_orders WHERE credit_cents > 0);
UPDATE orders SET credit_cents = total_cents WHERE credit_cents > total_cents;
