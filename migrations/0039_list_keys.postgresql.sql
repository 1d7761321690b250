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

ALTER TABLE collection_products ADD COLUMN product_active INTEGER,
    ADD COLUMN product_created_at TEXT, ADD COLUMN product_price_cents BIGINT,
    ADD COLUMN product_name TEXT;

UPDATE collection_products cp
SET product_active = p.active, product_created_at = p.created_at,
    product_price_cents = p.price_cents, product_name = p.name
FROM products p WHERE p.id = cp.product_id;

CREATE INDEX IF NOT EXISTS collection_products_created
    ON collection_products (collection_id, product_active, product_created_at, product_id);
CREATE INDEX IF NOT EXISTS collection_products_price
    ON collection_products (collection_id, product_active, product_price_cents, product_id);
CREATE INDEX IF NOT EXISTS collection_products_name
    ON collection_products (collection_id, product_active, product_name, product_id);

CREATE OR REPLACE FUNCTION collection_products_keyed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    SELECT p.active, p.created_at, p.price_cents, p.name
    INTO NEW.product_active, NEW.product_created_at, NEW.product_price_cents, NEW.product_name
    FROM products p WHERE p.id = NEW.product_id;
    RETURN NEW;
END $$;

CREATE TRIGGER collection_products_keyed BEFORE INSERT OR UPDATE OF product_id
ON collection_products FOR EACH ROW EXECUTE FUNCTION collection_products_keyed();

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

CREATE OR REPLACE FUNCTION option_products_keep(_product TEXT, _variant TEXT, _name TEXT,
    _value TEXT) RETURNS void LANGUAGE plpgsql AS $$
-- Of the product's values (the value _name = _value, or those of the variant _variant when
-- _name is NULL): a row for each that an active variant has, none for the others.
-- PL/pgSQL, so that each statement's plan is kept for the session.
BEGIN
    IF _name IS NOT NULL THEN
        DELETE FROM option_products op
        WHERE op.name = _name AND op.value = _value AND op.product_id = _product
            AND NOT EXISTS (
                SELECT 1 FROM variant_option_values o JOIN product_variants v ON v.id = o.variant_id
                WHERE o.name = _name AND o.value = _value AND o.product_id = _product
                    AND v.active = 1);
        INSERT INTO option_products (name, value, product_id, product_active,
            product_created_at, product_price_cents, product_name)
        SELECT _name, _value, p.id, p.active, p.created_at, p.price_cents, p.name
        FROM products p
        WHERE p.id = _product AND EXISTS (
            SELECT 1 FROM variant_option_values o JOIN product_variants v ON v.id = o.variant_id
            WHERE o.name = _name AND o.value = _value AND o.product_id = _product
                AND v.active = 1)
        ON CONFLICT (name, value, product_id) DO NOTHING;
        RETURN;
    END IF;
    DELETE FROM option_products op
    USING variant_option_values mine
    WHERE mine.variant_id = _variant AND op.name = mine.name AND op.value = mine.value
        AND op.product_id = _product
        AND NOT EXISTS (
            SELECT 1 FROM variant_option_values o JOIN product_variants v ON v.id = o.variant_id
            WHERE o.name = mine.name AND o.value = mine.value AND o.product_id = _product
                AND v.active = 1);
    INSERT INTO option_products (name, value, product_id, product_active, product_created_at,
        product_price_cents, product_name)
    SELECT mine.name, mine.value, p.id, p.active, p.created_at, p.price_cents, p.name
    FROM variant_option_values mine JOIN products p ON p.id = _product
    WHERE mine.variant_id = _variant
        AND EXISTS (SELECT 1 FROM product_variants v WHERE v.id = _variant AND v.active = 1)
    ON CONFLICT (name, value, product_id) DO NOTHING;
END $$;

CREATE OR REPLACE FUNCTION option_products_values() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM option_products_keep(NEW.product_id, NEW.variant_id, NEW.name, NEW.value);
        RETURN NEW;
    END IF;
    PERFORM option_products_keep(OLD.product_id, OLD.variant_id, OLD.name, OLD.value);
    RETURN OLD;
END $$;

CREATE TRIGGER option_products_added AFTER INSERT OR DELETE ON variant_option_values
FOR EACH ROW EXECUTE FUNCTION option_products_values();

CREATE OR REPLACE FUNCTION option_products_variants() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM option_products_keep(NEW.product_id, NEW.id, NULL, NULL);
    RETURN NEW;
END $$;

CREATE TRIGGER option_products_switched AFTER UPDATE OF active ON product_variants
FOR EACH ROW WHEN ((OLD.active = 1) IS DISTINCT FROM (NEW.active = 1))
EXECUTE FUNCTION option_products_variants();

-- A product's keys changed: its rows of both tables.
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
    RETURN NEW;
END $$;

CREATE TRIGGER products_list_keys AFTER UPDATE OF active, created_at, price_cents, name
ON products FOR EACH ROW
WHEN (OLD.active IS DISTINCT FROM NEW.active OR OLD.created_at IS DISTINCT FROM NEW.created_at
    OR OLD.price_cents IS DISTINCT FROM NEW.price_cents OR OLD.name IS DISTINCT FROM NEW.name)
EXECUTE FUNCTION products_list_keys();
