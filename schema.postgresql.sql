-- The triggers of schema.sql that SQLite and PostgreSQL write differently (loaded after it).
CREATE OR REPLACE FUNCTION products_default_variant() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO product_variants (id, product_id, sku, options, option_key, price_cents, stock,
        active, position, stock_low, created_at, updated_at)
    VALUES (NEW.id, NEW.id, NEW.sku, '{}', '[]', NEW.price_cents, NEW.stock, 1, 1, 0,
        NEW.created_at, NEW.updated_at)
    ON CONFLICT DO NOTHING;
    RETURN NULL;
END $$;

CREATE TRIGGER products_default_variant AFTER INSERT ON products
FOR EACH ROW EXECUTE FUNCTION products_default_variant();

CREATE OR REPLACE FUNCTION products_lone_variant() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF (SELECT COUNT(*) FROM product_variants WHERE product_id = NEW.id) = 1 THEN
        UPDATE product_variants SET price_cents = NEW.price_cents, stock = NEW.stock,
            sku = NEW.sku, updated_at = NEW.updated_at,
            compare_at_price_cents = CASE WHEN compare_at_price_cents > NEW.price_cents
                THEN compare_at_price_cents END
        WHERE product_id = NEW.id AND active = 1 AND (price_cents <> NEW.price_cents
            OR stock <> NEW.stock OR sku IS DISTINCT FROM NEW.sku);
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER products_lone_variant AFTER UPDATE OF price_cents, stock, sku ON products
FOR EACH ROW EXECUTE FUNCTION products_lone_variant();

-- 0009: product search. One weighted tsvector per product (name and SKUs A, option values
-- B, description C), written by shop/services/search.py in the transaction of every product
-- write, in the text search configuration SHOP_SEARCH_LANGUAGE names (english by default).
CREATE TABLE IF NOT EXISTS product_search (
    product_id TEXT PRIMARY KEY REFERENCES products (id) ON DELETE CASCADE,
    document TSVECTOR NOT NULL,
    active INTEGER NOT NULL DEFAULT 1
);

CREATE INDEX IF NOT EXISTS product_search_document ON product_search USING GIN (document);

-- 0017: order numbers from a sequence (never rolled back: a failed checkout skips a number),
-- and the bridge for nodes of the previous release, whose checkout bumps counters.order_number.
CREATE SEQUENCE IF NOT EXISTS order_numbers;

CREATE OR REPLACE FUNCTION counters_order_number() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.value := nextval('order_numbers');
    RETURN NEW;
END $$;

CREATE TRIGGER counters_order_number BEFORE UPDATE ON counters
FOR EACH ROW WHEN (NEW.name = 'order_number') EXECUTE FUNCTION counters_order_number();

-- 0020, 0021: a product's list columns (lowest active price, total active stock, a lone
-- variant's SKU) follow its variants: a trigger on every change of a variant that can move
-- them (added, removed, its price, stock, active flag or SKU changed) is the one place of the
-- rule; services/variants.refresh reads the result. All three columns: the lone-variant
-- trigger above copies them back onto a lone variant.
CREATE OR REPLACE FUNCTION product_variants_stock() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    product TEXT;
BEGIN
    IF TG_OP = 'DELETE' THEN
        product := OLD.product_id;
    ELSE
        product := NEW.product_id;
    END IF;
    UPDATE products SET
        price_cents = COALESCE(fresh.active_price, fresh.lowest_price, products.price_cents),
        stock = fresh.stock,
        sku = fresh.sku
    FROM (SELECT MIN(price_cents) FILTER (WHERE active = 1) AS active_price,
            MIN(price_cents) AS lowest_price,
            COALESCE(SUM(stock) FILTER (WHERE active = 1), 0) AS stock,
            CASE WHEN COUNT(*) = 1 THEN MIN(sku) END AS sku
        FROM product_variants WHERE product_id = product) AS fresh
    WHERE products.id = product
        AND (products.price_cents, products.stock, products.sku) IS DISTINCT FROM
            (COALESCE(fresh.active_price, fresh.lowest_price, products.price_cents), fresh.stock,
            fresh.sku);
    RETURN NULL;
END $$;

CREATE TRIGGER product_variants_stock AFTER UPDATE OF price_cents, stock, active, sku
ON product_variants FOR EACH ROW
WHEN (NEW.price_cents IS DISTINCT FROM OLD.price_cents OR NEW.stock IS DISTINCT FROM OLD.stock
    OR NEW.active IS DISTINCT FROM OLD.active OR NEW.sku IS DISTINCT FROM OLD.sku)
EXECUTE FUNCTION product_variants_stock();

CREATE TRIGGER product_variants_added AFTER INSERT ON product_variants
FOR EACH ROW EXECUTE FUNCTION product_variants_stock();

CREATE TRIGGER product_variants_removed AFTER DELETE ON product_variants
FOR EACH ROW EXECUTE FUNCTION product_variants_stock();

-- 0027: the facets' counts (schema.sql) kept by every write that moves one.
-- Add _by to the count of a product in state _active, category _category, at price _price.
-- PL/pgSQL, so that each statement's plan is kept for the session (a SQL function's is made
-- again at every call: 0053).
CREATE OR REPLACE FUNCTION facet_price(_by INTEGER, _active INTEGER, _category TEXT,
    _price BIGINT) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO facet_prices (active, category_id, low, n)
    SELECT _active, COALESCE(_category, ''), MAX(b.low), _by FROM facet_bands b
    WHERE b.low <= _price
    ON CONFLICT (active, category_id, low) DO UPDATE SET n = facet_prices.n + excluded.n;
END $$;

-- Add _by to the count of every value of the product _product's active variants.
CREATE OR REPLACE FUNCTION facet_product_options(_by INTEGER, _product TEXT, _active INTEGER,
    _category TEXT) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO facet_options (active, category_id, name, value, n)
    SELECT _active, COALESCE(_category, ''), o.name, o.value, _by
    FROM product_variants v JOIN variant_option_values o ON o.variant_id = v.id
    WHERE v.product_id = _product AND v.active = 1
    GROUP BY o.name, o.value
    ON CONFLICT (active, category_id, name, value) DO UPDATE SET n = facet_options.n + excluded.n;
END $$;

-- Add _by to the count of each value of the variant _variant (or only _name = _value) that no
-- other active variant of its product _product has.
CREATE OR REPLACE FUNCTION facet_variant_options(_by INTEGER, _product TEXT, _variant TEXT,
    _name TEXT, _value TEXT) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO facet_options (active, category_id, name, value, n)
    SELECT p.active, COALESCE(p.category_id, ''), mine.name, mine.value, _by
    FROM products p, (
        SELECT m.name, m.value FROM variant_option_values m
        WHERE m.variant_id = _variant AND _name IS NULL
        UNION ALL
        SELECT _name, _value WHERE _name IS NOT NULL
    ) mine
    WHERE p.id = _product AND NOT EXISTS (
        SELECT 1 FROM variant_option_values o JOIN product_variants v ON v.id = o.variant_id
        WHERE o.name = mine.name AND o.value = mine.value AND o.product_id = _product
            AND o.variant_id <> _variant AND v.active = 1)
    ON CONFLICT (active, category_id, name, value) DO UPDATE SET n = facet_options.n + excluded.n;
END $$;

CREATE OR REPLACE FUNCTION facet_products() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' THEN
        PERFORM facet_price(-1, OLD.active, OLD.category_id, OLD.price_cents);
    END IF;
    IF TG_OP <> 'DELETE' THEN
        PERFORM facet_price(1, NEW.active, NEW.category_id, NEW.price_cents);
    END IF;
    IF TG_OP = 'DELETE' THEN
        PERFORM facet_product_options(-1, OLD.id, OLD.active, OLD.category_id);
        RETURN OLD;
    END IF;
    IF TG_OP = 'UPDATE' AND (OLD.active IS DISTINCT FROM NEW.active
            OR OLD.category_id IS DISTINCT FROM NEW.category_id) THEN
        PERFORM facet_product_options(-1, OLD.id, OLD.active, OLD.category_id);
        PERFORM facet_product_options(1, NEW.id, NEW.active, NEW.category_id);
    END IF;
    RETURN NEW;
END $$;

CREATE TRIGGER facet_products_added AFTER INSERT ON products
FOR EACH ROW EXECUTE FUNCTION facet_products();

CREATE TRIGGER facet_products_changed AFTER UPDATE OF price_cents, active, category_id
ON products FOR EACH ROW
WHEN (OLD.price_cents IS DISTINCT FROM NEW.price_cents OR OLD.active IS DISTINCT FROM NEW.active
    OR OLD.category_id IS DISTINCT FROM NEW.category_id)
EXECUTE FUNCTION facet_products();

CREATE TRIGGER facet_products_removed BEFORE DELETE ON products
FOR EACH ROW EXECUTE FUNCTION facet_products();

-- A variant switched on or off, or removed: each of its values no other active variant has.
CREATE OR REPLACE FUNCTION facet_variants() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        IF OLD.active = 1 THEN
            PERFORM facet_variant_options(-1, OLD.product_id, OLD.id, NULL, NULL);
        END IF;
        RETURN OLD;
    END IF;
    PERFORM facet_variant_options(CASE WHEN NEW.active = 1 THEN 1 ELSE -1 END,
        NEW.product_id, NEW.id, NULL, NULL);
    RETURN NEW;
END $$;

CREATE TRIGGER facet_variants_changed BEFORE UPDATE OF active ON product_variants
FOR EACH ROW WHEN ((OLD.active = 1) IS DISTINCT FROM (NEW.active = 1))
EXECUTE FUNCTION facet_variants();

CREATE TRIGGER facet_variants_removed BEFORE DELETE ON product_variants
FOR EACH ROW EXECUTE FUNCTION facet_variants();

-- An active variant's value written or removed: counted when no other active variant of the
-- product has it.
CREATE OR REPLACE FUNCTION facet_option_values() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        IF (SELECT active FROM product_variants WHERE id = NEW.variant_id) = 1 THEN
            PERFORM facet_variant_options(1, NEW.product_id, NEW.variant_id, NEW.name, NEW.value);
        END IF;
        RETURN NEW;
    END IF;
    IF (SELECT active FROM product_variants WHERE id = OLD.variant_id) = 1 THEN
        PERFORM facet_variant_options(-1, OLD.product_id, OLD.variant_id, OLD.name, OLD.value);
    END IF;
    RETURN OLD;
END $$;

CREATE TRIGGER facet_option_values_added BEFORE INSERT ON variant_option_values
FOR EACH ROW EXECUTE FUNCTION facet_option_values();

CREATE TRIGGER facet_option_values_removed BEFORE DELETE ON variant_option_values
FOR EACH ROW EXECUTE FUNCTION facet_option_values();


-- 0029: every price a variant has had, from when it took effect (the variant's updated_at
-- of the write that set it): the EU prior price (docs/invoicing.md). Written by the trigger
-- below on every insert and every change of a price, whichever path wrote it (API, console,
-- import, the product's lone-variant trigger); pruned by the worker (catalogue/prices.py).
CREATE TABLE IF NOT EXISTS variant_prices (
    id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    variant_id TEXT NOT NULL REFERENCES product_variants (id) ON DELETE CASCADE,
    product_id TEXT NOT NULL,
    price_cents BIGINT NOT NULL,
    at TEXT NOT NULL
);

CREATE INDEX IF NOT EXISTS variant_prices_variant ON variant_prices (variant_id, at, id);
CREATE INDEX IF NOT EXISTS variant_prices_at ON variant_prices (at);

CREATE OR REPLACE FUNCTION variant_prices_record() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO variant_prices (variant_id, product_id, price_cents, at)
    VALUES (NEW.id, NEW.product_id, NEW.price_cents, NEW.updated_at);
    RETURN NULL;
END $$;

CREATE TRIGGER variant_prices_added AFTER INSERT ON product_variants
FOR EACH ROW EXECUTE FUNCTION variant_prices_record();

CREATE TRIGGER variant_prices_changed AFTER UPDATE OF price_cents ON product_variants
FOR EACH ROW WHEN (NEW.price_cents IS DISTINCT FROM OLD.price_cents)
EXECUTE FUNCTION variant_prices_record();


-- 0039: the copies of their products' state and sort keys in collection_products and
-- option_products (schema.sql), kept by every write that changes one.
CREATE OR REPLACE FUNCTION collection_products_keyed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    SELECT p.active, p.created_at, p.price_cents, p.name
    INTO NEW.product_active, NEW.product_created_at, NEW.product_price_cents, NEW.product_name
    FROM products p WHERE p.id = NEW.product_id;
    RETURN NEW;
END $$;

CREATE TRIGGER collection_products_keyed BEFORE INSERT OR UPDATE OF product_id
ON collection_products FOR EACH ROW EXECUTE FUNCTION collection_products_keyed();

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

-- A product's keys changed: its rows of the three tables (option_pairs: 0044).
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

CREATE TRIGGER products_list_keys AFTER UPDATE OF active, created_at, price_cents, name
ON products FOR EACH ROW
WHEN (OLD.active IS DISTINCT FROM NEW.active OR OLD.created_at IS DISTINCT FROM NEW.created_at
    OR OLD.price_cents IS DISTINCT FROM NEW.price_cents OR OLD.name IS DISTINCT FROM NEW.name)
EXECUTE FUNCTION products_list_keys();


-- 0044: option_pairs (schema.sql), kept by every write that changes one.
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
