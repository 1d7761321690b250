-- 0007: options and variants (issue 25). Every product gets one default variant that holds
-- its price, stock and SKU (the variant's id is the product's id, so the order lines of the
-- previous release point at it too); products keep price_cents, stock and sku as columns
-- kept by every write (lowest active price, total active stock, the SKU of a lone variant).
-- The triggers at the end are the bridge for nodes of the previous release during a rolling
-- upgrade: a product they create gets its default variant, and a price, stock or SKU they
-- write on a product with one variant reaches that variant. A later release drops them.

ALTER TABLE products ADD COLUMN options TEXT NOT NULL DEFAULT '[]';
ALTER TABLE products ADD COLUMN low_stock_threshold BIGINT;

CREATE TABLE IF NOT EXISTS product_variants (
    id TEXT PRIMARY KEY,
    product_id TEXT NOT NULL REFERENCES products (id) ON DELETE CASCADE,
    sku TEXT UNIQUE,
    options TEXT NOT NULL DEFAULT '{}',
    option_key TEXT NOT NULL DEFAULT '[]',
    price_cents BIGINT NOT NULL CHECK (price_cents >= 0),
    compare_at_price_cents BIGINT CHECK (compare_at_price_cents >= price_cents),
    stock BIGINT NOT NULL DEFAULT 0 CHECK (stock >= 0),
    weight_grams BIGINT CHECK (weight_grams >= 0),
    image_id TEXT,
    active INTEGER NOT NULL DEFAULT 1,
    position INTEGER NOT NULL DEFAULT 1,
    stock_low INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (product_id, option_key)
);

CREATE INDEX IF NOT EXISTS product_variants_product ON product_variants (product_id, position, id);

CREATE TABLE IF NOT EXISTS variant_option_values (
    variant_id TEXT NOT NULL REFERENCES product_variants (id) ON DELETE CASCADE,
    product_id TEXT NOT NULL,
    name TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (variant_id, name)
);

CREATE INDEX IF NOT EXISTS variant_option_values_lookup
    ON variant_option_values (name, value, product_id);

ALTER TABLE order_items ADD COLUMN variant_id TEXT;
ALTER TABLE order_items ADD COLUMN options TEXT;

INSERT INTO product_variants (id, product_id, sku, options, option_key, price_cents, stock,
    active, position, stock_low, created_at, updated_at)
SELECT id, id, sku, '{}', '[]', price_cents, stock, 1, 1, 0, created_at, updated_at
FROM products;

UPDATE order_items SET options = '{}',
    variant_id = (SELECT v.id FROM product_variants v WHERE v.id = order_items.product_id);

CREATE TRIGGER IF NOT EXISTS products_default_variant AFTER INSERT ON products
BEGIN
    INSERT INTO product_variants (id, product_id, sku, options, option_key, price_cents, stock,
        active, position, stock_low, created_at, updated_at)
    VALUES (NEW.id, NEW.id, NEW.sku, '{}', '[]', NEW.price_cents, NEW.stock, 1, 1, 0,
        NEW.created_at, NEW.updated_at)
    ON CONFLICT DO NOTHING;
END;

CREATE TRIGGER IF NOT EXISTS products_lone_variant AFTER UPDATE OF price_cents, stock, sku
ON products
WHEN (SELECT COUNT(*) FROM product_variants WHERE product_id = NEW.id) = 1
BEGIN
    UPDATE product_variants SET price_cents = NEW.price_cents, stock = NEW.stock,
        sku = NEW.sku, updated_at = NEW.updated_at,
        compare_at_price_cents = CASE WHEN compare_at_price_cents >= NEW.price_cents
            THEN compare_at_price_cents END
    WHERE product_id = NEW.id AND active = 1 AND (price_cents <> NEW.price_cents
        OR stock <> NEW.stock OR sku IS NOT NEW.sku);
END;
