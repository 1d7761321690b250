-- 0017: checkout writes no shared row (issue 29). Order numbers come from the sequence
-- order_numbers, continuing after the counters row order_number; nextval is never rolled
-- back, so a failed checkout skips a number. An order keeps its number's integer in seq.
-- The trigger is the bridge for nodes of the previous release during a rolling upgrade:
-- their checkout still bumps counters.order_number, which now takes its value from the
-- sequence, so both kinds of node draw from one numbering. A later release drops it.
-- The orders total is no longer bumped by checkout: counters.counted_to is the instant up
-- to which value counted the orders, and the list adds the few created after it
-- (shop/totals.py).

ALTER TABLE orders ADD COLUMN seq BIGINT;
CREATE UNIQUE INDEX IF NOT EXISTS orders_seq ON orders (seq);
ALTER TABLE counters ADD COLUMN counted_to TEXT;

CREATE SEQUENCE IF NOT EXISTS order_numbers;
SELECT setval('order_numbers',
    COALESCE((SELECT value FROM counters WHERE name = 'order_number'), 0) + 1, false);

CREATE OR REPLACE FUNCTION counters_order_number() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.value := nextval('order_numbers');
    RETURN NEW;
END $$;

CREATE TRIGGER counters_order_number BEFORE UPDATE ON counters
FOR EACH ROW WHEN (NEW.name = 'order_number') EXECUTE FUNCTION counters_order_number();
