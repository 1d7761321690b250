-- 0017: checkout writes no shared row (issue 29). An order keeps its number's integer in
-- seq; on SQLite (one writer at a time) the next number is the highest seq, or the old
-- counters row order_number when higher (orders of the previous release, and of its nodes
-- during a rolling upgrade, have no seq but still bump that row), plus one. The orders
-- total is no longer bumped by checkout: counters.counted_to is the instant up to which
-- value counted the orders, and the list adds the few created after it (shop/totals.py).

ALTER TABLE orders ADD COLUMN seq BIGINT;
CREATE UNIQUE INDEX IF NOT EXISTS orders_seq ON orders (seq);
ALTER TABLE counters ADD COLUMN counted_to TEXT;
