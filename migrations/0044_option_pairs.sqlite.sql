-- 0044 (issue 42): two option names (`?option.Size=M&option.Colour=Red`) read as one range of
-- an index. The filter matches the products with an active variant that has both values;
-- it collected the first name's variants and tested each for the second value, and the
-- capped total tested up to 1,001 candidates (14.4 ms of CPU on SQLite, 5.0 ms on
-- PostgreSQL at 100,000 products; docs/evidence-pairs.md). option_pairs holds a row per
-- product and pair of values of two names that one active variant of it has, the names in
-- code point order (name < other_name), with the product's state and sort keys as
-- option_products (0039) holds them: a page of two values by a sort is one index range.
-- Kept by the triggers below in the write's transaction: a value written or removed, a
-- variant switched on or off or removed (its values go with it), a product's keys changed
-- or the product removed (ON DELETE CASCADE).
CREATE TABLE IF NOT EXISTS option_pairs (
    name TEXT NOT NULL,
    value TEXT NOT NULL,
    other_name TEXT NOT NULL,
    other_value TEXT NOT NULL,
    product_id TEXT NOT NULL REFERENCES products (id) ON DELETE CASCADE,
    product_active INTEGER NOT NULL,
    product_created_at TEXT NOT NULL,
    product_price_cents BIGINT NOT NULL,
    product_name TEXT NOT NULL,
    PRIMARY KEY (name, value, other_name, other_value, product_id)
);

CREATE INDEX IF NOT EXISTS option_pairs_product
    ON option_pairs (product_id, name, value, other_name, other_value);
CREATE INDEX IF NOT EXISTS option_pairs_created ON option_pairs
    (name, value, other_name, other_value, product_active, product_created_at, product_id);
CREATE INDEX IF NOT EXISTS option_pairs_price ON option_pairs
    (name, value, other_name, other_value, product_active, product_price_cents, product_id);
CREATE INDEX IF NOT EXISTS option_pairs_name ON option_pairs
    (name, value, other_name, other_value, product_active, product_name, product_id);

INSERT INTO option_pairs (name, value, other_name, other_value, product_id, product_active,
    product_created_at, product_price_cents, product_name)
SELECT DISTINCT a.name, a.value, b.name, b.value, p.id, p.active, p.created_at,
    p.price_cents, p.name
FROM variant_option_values a
JOIN variant_option_values b ON b.variant_id = a.variant_id AND b.name > a.name
JOIN product_variants v ON v.id = a.variant_id
JOIN products p ON p.id = a.product_id
WHERE v.active = 1;

CREATE TRIGGER IF NOT EXISTS option_pairs_added AFTER INSERT ON variant_option_values
WHEN (SELECT active FROM product_variants WHERE id = NEW.variant_id) = 1
BEGIN
    INSERT INTO option_pairs (name, value, other_name, other_value, product_id,
        product_active, product_created_at, product_price_cents, product_name)
    SELECT CASE WHEN m.name > NEW.name THEN NEW.name ELSE m.name END,
        CASE WHEN m.name > NEW.name THEN NEW.value ELSE m.value END,
        CASE WHEN m.name > NEW.name THEN m.name ELSE NEW.name END,
        CASE WHEN m.name > NEW.name THEN m.value ELSE NEW.value END,
        p.id, p.active, p.created_at, p.price_cents, p.name
    FROM variant_option_values m JOIN products p ON p.id = NEW.product_id
    WHERE m.variant_id = NEW.variant_id AND m.name <> NEW.name
    ON CONFLICT (name, value, other_name, other_value, product_id) DO NOTHING;
END;

-- A value gone: the product's pairs with it that no active variant has any more.
CREATE TRIGGER IF NOT EXISTS option_pairs_removed AFTER DELETE ON variant_option_values
BEGIN
    DELETE FROM option_pairs
    WHERE product_id = OLD.product_id
        AND ((name = OLD.name AND value = OLD.value)
            OR (other_name = OLD.name AND other_value = OLD.value))
        AND NOT EXISTS (
            SELECT 1 FROM variant_option_values a
            JOIN variant_option_values b ON b.variant_id = a.variant_id
            JOIN product_variants v ON v.id = a.variant_id
            WHERE a.name = option_pairs.name AND a.value = option_pairs.value
                AND a.product_id = OLD.product_id AND b.name = option_pairs.other_name
                AND b.value = option_pairs.other_value AND b.product_id = OLD.product_id
                AND v.active = 1);
END;

CREATE TRIGGER IF NOT EXISTS option_pairs_switched AFTER UPDATE OF active ON product_variants
WHEN (OLD.active = 1) IS NOT (NEW.active = 1)
BEGIN
    INSERT INTO option_pairs (name, value, other_name, other_value, product_id,
        product_active, product_created_at, product_price_cents, product_name)
    SELECT a.name, a.value, b.name, b.value, p.id, p.active, p.created_at, p.price_cents,
        p.name
    FROM variant_option_values a
    JOIN variant_option_values b ON b.variant_id = a.variant_id AND b.name > a.name
    JOIN products p ON p.id = NEW.product_id
    WHERE a.variant_id = NEW.id AND NEW.active = 1
    ON CONFLICT (name, value, other_name, other_value, product_id) DO NOTHING;
    DELETE FROM option_pairs
    WHERE product_id = NEW.product_id AND NEW.active <> 1
        AND EXISTS (
            SELECT 1 FROM variant_option_values a
            JOIN variant_option_values b ON b.variant_id = a.variant_id
            WHERE a.variant_id = NEW.id AND a.name = option_pairs.name
                AND a.value = option_pairs.value AND b.name = option_pairs.other_name
                AND b.value = option_pairs.other_value)
        AND NOT EXISTS (
            SELECT 1 FROM variant_option_values a
            JOIN variant_option_values b ON b.variant_id = a.variant_id
            JOIN product_variants v ON v.id = a.variant_id
            WHERE a.name = option_pairs.name AND a.value = option_pairs.value
                AND a.product_id = NEW.product_id AND b.name = option_pairs.other_name
                AND b.value = option_pairs.other_value AND b.product_id = NEW.product_id
                AND v.active = 1);
END;

-- A product's keys changed: its rows of the three tables (0039's trigger, and the pairs).
DROP TRIGGER IF EXISTS products_list_keys;
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
    UPDATE option_pairs SET product_price_cents = NEW.price_cents
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
    UPDATE option_pairs
    SET product_active = NEW.active, product_created_at = NEW.created_at,
        product_name = NEW.name
    WHERE product_id = NEW.id AND (OLD.active IS NOT NEW.active
        OR OLD.created_at IS NOT NEW.created_at OR OLD.name IS NOT NEW.name);
END;
