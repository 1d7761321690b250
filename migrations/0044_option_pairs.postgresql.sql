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
JOIN variant_option_values b ON b.variant_id = a.variant_id AND b.name > a.name COLLATE "C"
JOIN product_variants v ON v.id = a.variant_id
JOIN products p ON p.id = a.product_id
WHERE v.active = 1;

-- The names of a pair in code point order whatever the database's collation: COLLATE "C".
CREATE OR REPLACE FUNCTION option_pairs_values() RETURNS trigger LANGUAGE plpgsql AS $$
-- A value written: its pairs with the variant's other values, if the variant is active; a
-- value removed: the product's pairs with it that no active variant has any more.
-- PL/pgSQL, so that each statement's plan is kept for the session.
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO option_pairs (name, value, other_name, other_value, product_id,
            product_active, product_created_at, product_price_cents, product_name)
        SELECT CASE WHEN m.name > NEW.name COLLATE "C" THEN NEW.name ELSE m.name END,
            CASE WHEN m.name > NEW.name COLLATE "C" THEN NEW.value ELSE m.value END,
            CASE WHEN m.name > NEW.name COLLATE "C" THEN m.name ELSE NEW.name END,
            CASE WHEN m.name > NEW.name COLLATE "C" THEN m.value ELSE NEW.value END,
            p.id, p.active, p.created_at, p.price_cents, p.name
        FROM variant_option_values m JOIN products p ON p.id = NEW.product_id
        WHERE m.variant_id = NEW.variant_id AND m.name <> NEW.name
            AND EXISTS (SELECT 1 FROM product_variants v
                WHERE v.id = NEW.variant_id AND v.active = 1)
        ON CONFLICT (name, value, other_name, other_value, product_id) DO NOTHING;
        RETURN NEW;
    END IF;
    DELETE FROM option_pairs op
    WHERE op.product_id = OLD.product_id
        AND ((op.name = OLD.name AND op.value = OLD.value)
            OR (op.other_name = OLD.name AND op.other_value = OLD.value))
        AND NOT EXISTS (
            SELECT 1 FROM variant_option_values a
            JOIN variant_option_values b ON b.variant_id = a.variant_id
            JOIN product_variants v ON v.id = a.variant_id
            WHERE a.name = op.name AND a.value = op.value AND a.product_id = OLD.product_id
                AND b.name = op.other_name AND b.value = op.other_value
                AND b.product_id = OLD.product_id AND v.active = 1);
    RETURN OLD;
END $$;

CREATE TRIGGER option_pairs_values AFTER INSERT OR DELETE ON variant_option_values
FOR EACH ROW EXECUTE FUNCTION option_pairs_values();

CREATE OR REPLACE FUNCTION option_pairs_variants() RETURNS trigger LANGUAGE plpgsql AS $$
-- A variant switched on: its pairs; switched off: those no other active variant has.
BEGIN
    IF NEW.active = 1 THEN
        INSERT INTO option_pairs (name, value, other_name, other_value, product_id,
            product_active, product_created_at, product_price_cents, product_name)
        SELECT a.name, a.value, b.name, b.value, p.id, p.active, p.created_at,
            p.price_cents, p.name
        FROM variant_option_values a
        JOIN variant_option_values b
            ON b.variant_id = a.variant_id AND b.name > a.name COLLATE "C"
        JOIN products p ON p.id = NEW.product_id
        WHERE a.variant_id = NEW.id
        ON CONFLICT (name, value, other_name, other_value, product_id) DO NOTHING;
        RETURN NEW;
    END IF;
    DELETE FROM option_pairs op
    WHERE op.product_id = NEW.product_id
        AND EXISTS (
            SELECT 1 FROM variant_option_values a
            JOIN variant_option_values b ON b.variant_id = a.variant_id
            WHERE a.variant_id = NEW.id AND a.name = op.name AND a.value = op.value
                AND b.name = op.other_name AND b.value = op.other_value)
        AND NOT EXISTS (
            SELECT 1 FROM variant_option_values x
            JOIN variant_option_values y ON y.variant_id = x.variant_id
            JOIN product_variants v ON v.id = x.variant_id
            WHERE x.name = op.name AND x.value = op.value AND x.product_id = NEW.product_id
                AND y.name = op.other_name AND y.value = op.other_value
                AND y.product_id = NEW.product_id AND v.active = 1);
    RETURN NEW;
END $$;

CREATE TRIGGER option_pairs_switched AFTER UPDATE OF active ON product_variants
FOR EACH ROW WHEN ((OLD.active = 1) IS DISTINCT FROM (NEW.active = 1))
EXECUTE FUNCTION option_pairs_variants();

-- A product's keys changed: its rows of the three tables (0039's function, and the pairs).
CREATE OR REPLACE FUNCTION products_list_keys() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE collection_products
    SET product_active = NEW.active, product_created_at = NEW.created_at,
        product_price_cents = NEW.price_cents, product_name = NEW.name
    WHERE product_id = NEW.id;
    UPDATE option_products
    SET product_active = NEW.active, product_created_at = NEW.created_at,
        product_price_cents = NEW.price_cents, product_name = NEW.name
    WHERE product_id = NEW.id;
    UPDATE option_pairs
    SET product_active = NEW.active, product_created_at = NEW.created_at,
        product_price_cents = NEW.price_cents, product_name = NEW.name
    WHERE product_id = NEW.id;
    RETURN NEW;
END $$;
