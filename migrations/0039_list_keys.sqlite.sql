-- 0039 (issue 42): a collection's page, and an option's, read as one range of an index. The
-- filter collected every matching product and sorted them (5.5-8.3 ms of CPU on SQLite,
-- 60-67 ms on PostgreSQL at 100,000 products, 2,000 matches; docs/performance.md, "List
-- filters: one index range (issue 42)"). Each row of collection_products now carries its
-- product's state and sort keys (but updated_at, changed by every edit), kept by the
-- triggers below in the transaction of the write, whichever release or tool writes; an
-- index per sort then answers `?collection=…&sort=…` in the sort's order.

-- A price range by creation time (`?min_price=…&max_price=…`): SQLite collects the range from
-- products_active_price and read each match's row for its created_at to sort them (1.9 ms
-- for 987 matches at 100,000 products); with created_at in the index, none (0.5 ms). Same
-- order, one column more, as 0027 added category_id.
DROP INDEX IF EXISTS products_active_price;
CREATE INDEX IF NOT EXISTS products_active_price
    ON products (active, price_cents, id, category_id, created_at);

ALTER TABLE collection_products ADD COLUMN product_active INTEGER;
ALTER TABLE collection_products ADD COLUMN product_created_at TEXT;
ALTER TABLE collection_products ADD COLUMN product_price_cents BIGINT;
ALTER TABLE collection_products ADD COLUMN product_name TEXT;

UPDATE collection_products
SET (product_active, product_created_at, product_price_cents, product_name) = (
    SELECT p.active, p.created_at, p.price_cents, p.name FROM products p
    WHERE p.id = collection_products.product_id);

CREATE INDEX IF NOT EXISTS collection_products_created
    ON collection_products (collection_id, product_active, product_created_at, product_id);
CREATE INDEX IF NOT EXISTS collection_products_price
    ON collection_products (collection_id, product_active, product_price_cents, product_id);
CREATE INDEX IF NOT EXISTS collection_products_name
    ON collection_products (collection_id, product_active, product_name, product_id);

CREATE TRIGGER IF NOT EXISTS collection_products_keyed AFTER INSERT ON collection_products
BEGIN
    UPDATE collection_products
    SET (product_active, product_created_at, product_price_cents, product_name) = (
        SELECT p.active, p.created_at, p.price_cents, p.name FROM products p
        WHERE p.id = NEW.product_id)
    WHERE collection_id = NEW.collection_id AND product_id = NEW.product_id;
END;

CREATE TRIGGER IF NOT EXISTS collection_products_moved
AFTER UPDATE OF product_id ON collection_products
BEGIN
    UPDATE collection_products
    SET (product_active, product_created_at, product_price_cents, product_name) = (
        SELECT p.active, p.created_at, p.price_cents, p.name FROM products p
        WHERE p.id = NEW.product_id)
    WHERE collection_id = NEW.collection_id AND product_id = NEW.product_id;
END;

-- The same for an option's products (`?option.Size=M`): option_products holds a row per
-- product and option value that an active variant of the product has (what the filter
-- matches), with the product's keys. Kept by the triggers below: a value written or
-- removed, a variant switched on or off or removed (its values go with it), a product's
-- keys changed (products_list_keys, above) or the product removed (ON DELETE CASCADE).
CREATE TABLE IF NOT EXISTS option_products (
    name TEXT NOT NULL,
    value TEXT NOT NULL,
    product_id TEXT NOT NULL REFERENCES products (id) ON DELETE CASCADE,
    product_active INTEGER NOT NULL,
    product_created_at TEXT NOT NULL,
    product_price_cents BIGINT NOT NULL,
    product_name TEXT NOT NULL,
    PRIMARY KEY (name, value, product_id)
);

CREATE INDEX IF NOT EXISTS option_products_product ON option_products (product_id);
CREATE INDEX IF NOT EXISTS option_products_created
    ON option_products (name, value, product_active, product_created_at, product_id);
CREATE INDEX IF NOT EXISTS option_products_price
    ON option_products (name, value, product_active, product_price_cents, product_id);
CREATE INDEX IF NOT EXISTS option_products_name
    ON option_products (name, value, product_active, product_name, product_id);

INSERT INTO option_products (name, value, product_id, product_active, product_created_at,
    product_price_cents, product_name)
SELECT DISTINCT o.name, o.value, p.id, p.active, p.created_at, p.price_cents, p.name
FROM variant_option_values o
JOIN product_variants v ON v.id = o.variant_id
JOIN products p ON p.id = o.product_id
WHERE v.active = 1;

CREATE TRIGGER IF NOT EXISTS option_products_added AFTER INSERT ON variant_option_values
WHEN (SELECT active FROM product_variants WHERE id = NEW.variant_id) = 1
BEGIN
    INSERT INTO option_products (name, value, product_id, product_active, product_created_at,
        product_price_cents, product_name)
    SELECT NEW.name, NEW.value, p.id, p.active, p.created_at, p.price_cents, p.name
    FROM products p WHERE p.id = NEW.product_id
    ON CONFLICT (name, value, product_id) DO NOTHING;
END;

CREATE TRIGGER IF NOT EXISTS option_products_removed AFTER DELETE ON variant_option_values
BEGIN
    DELETE FROM option_products
    WHERE name = OLD.name AND value = OLD.value AND product_id = OLD.product_id
        AND NOT EXISTS (
            SELECT 1 FROM variant_option_values o JOIN product_variants v ON v.id = o.variant_id
            WHERE o.name = OLD.name AND o.value = OLD.value AND o.product_id = OLD.product_id
                AND v.active = 1);
END;

CREATE TRIGGER IF NOT EXISTS option_products_switched AFTER UPDATE OF active ON product_variants
WHEN (OLD.active = 1) IS NOT (NEW.active = 1)
BEGIN
    INSERT INTO option_products (name, value, product_id, product_active, product_created_at,
        product_price_cents, product_name)
    SELECT mine.name, mine.value, p.id, p.active, p.created_at, p.price_cents, p.name
    FROM products p JOIN variant_option_values mine ON mine.variant_id = NEW.id
    WHERE p.id = NEW.product_id AND NEW.active = 1
    ON CONFLICT (name, value, product_id) DO NOTHING;
    DELETE FROM option_products
    WHERE product_id = NEW.product_id AND NEW.active <> 1
        AND EXISTS (
            SELECT 1 FROM variant_option_values mine
            WHERE mine.variant_id = NEW.id AND mine.name = option_products.name
                AND mine.value = option_products.value)
        AND NOT EXISTS (
            SELECT 1 FROM variant_option_values o JOIN product_variants v ON v.id = o.variant_id
            WHERE o.name = option_products.name AND o.value = option_products.value
                AND o.product_id = NEW.product_id AND v.active = 1);
END;

-- A product's keys changed: its rows of both tables.
CREATE TRIGGER IF NOT EXISTS products_list_keys
AFTER UPDATE OF active, created_at, price_cents, name ON products
WHEN OLD.active IS NOT NEW.active OR OLD.created_at IS NOT NEW.created_at
    OR OLD.price_cents IS NOT NEW.price_cents OR OLD.name IS NOT NEW.name
BEGIN
    -- A price apart (each variant written may move it): SQLite then rewrites the price's
    -- index alone, not every sort's.
    UPDATE collection_products SET product_price_cents = NEW.price_cents
    WHERE product_id = NEW.id AND OLD.price_cents IS NOT NEW.price_cents;
    UPDATE option_products SET product_price_cents = NEW.price_cents
    WHERE product_id = NEW.id AND OLD.price_cents IS NOT NEW.price_cents;
    UPDATE collection_products
    SET product_active = NEW.active, product_created_at = NEW.created_at,
        product_name = NEW.name
    WHERE product_id = NEW.id AND (OLD.active IS NOT NEW.active
        OR OLD.created_at IS NOT NEW.created_at OR OLD.name IS NOT NEW.name);
    UPDATE option_products
    SET product_active = NEW.active, product_created_at = NEW.created_at,
        product_name = NEW.name
    WHERE product_id = NEW.id AND (OLD.active IS NOT NEW.active
        OR OLD.created_at IS NOT NEW.created_at OR OLD.name IS NOT NEW.name);
END;
