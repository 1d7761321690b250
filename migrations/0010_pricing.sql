-- 0010 (issue 26): shipping methods, tax rates, discount codes and their uses; a tax class on
-- products; the priced breakdown kept on every order and order line. Additive only: the
-- previous release reads and writes the same tables (new columns have defaults; its orders
-- carry no discount, shipping or tax, so their line totals are their subtotals).

ALTER TABLE products ADD COLUMN tax_class TEXT NOT NULL DEFAULT 'standard';

CREATE TABLE IF NOT EXISTS shipping_methods (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    countries TEXT NOT NULL DEFAULT '[]',
    price_cents BIGINT NOT NULL CHECK (price_cents >= 0),
    free_over_cents BIGINT CHECK (free_over_cents >= 0),
    weight_bands TEXT NOT NULL DEFAULT '[]',
    tax_class TEXT NOT NULL DEFAULT 'standard',
    active INTEGER NOT NULL DEFAULT 1,
    position INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);

CREATE INDEX IF NOT EXISTS shipping_methods_position ON shipping_methods (position, name, id);

CREATE TABLE IF NOT EXISTS tax_rates (
    id TEXT PRIMARY KEY,
    country TEXT NOT NULL,
    region TEXT NOT NULL DEFAULT '',
    tax_class TEXT NOT NULL DEFAULT 'standard',
    rate TEXT NOT NULL,
    name TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (country, region, tax_class)
);

CREATE TABLE IF NOT EXISTS discounts (
    id TEXT PRIMARY KEY,
    code TEXT NOT NULL,
    code_key TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL,
    value TEXT NOT NULL,
    min_subtotal_cents BIGINT,
    starts_at TEXT,
    ends_at TEXT,
    usage_limit BIGINT,
    once_per_customer INTEGER NOT NULL DEFAULT 0,
    product_ids TEXT NOT NULL DEFAULT '[]',
    category_ids TEXT NOT NULL DEFAULT '[]',
    active INTEGER NOT NULL DEFAULT 1,
    times_used BIGINT NOT NULL DEFAULT 0 CHECK (times_used >= 0),
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);

CREATE INDEX IF NOT EXISTS discounts_created ON discounts (created_at, id);


ALTER TABLE orders ADD COLUMN discount_cents BIGINT NOT NULL DEFAULT 0;
ALTER TABLE orders ADD COLUMN shipping_cents BIGINT NOT NULL DEFAULT 0;
ALTER TABLE orders ADD COLUMN tax_cents BIGINT NOT NULL DEFAULT 0;
ALTER TABLE orders ADD COLUMN pricing TEXT;
-- The code an order used: a once-per-customer code looks for the customer's orders with it.
ALTER TABLE orders ADD COLUMN discount_id TEXT;
CREATE INDEX IF NOT EXISTS orders_discount_customer ON orders (discount_id, customer_id);

ALTER TABLE order_items ADD COLUMN discount_cents BIGINT NOT NULL DEFAULT 0;
ALTER TABLE order_items ADD COLUMN tax_cents BIGINT NOT NULL DEFAULT 0;
ALTER TABLE order_items ADD COLUMN tax_rate TEXT;
ALTER TABLE order_items ADD COLUMN total_cents BIGINT;
UPDATE order_items SET total_cents = line_total_cents WHERE total_cents IS NULL;
