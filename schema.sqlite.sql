-- The triggers of schema.sql that SQLite and PostgreSQL write differently (loaded after it).
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
        compare_at_price_cents = CASE WHEN compare_at_price_cents > NEW.price_cents
            THEN compare_at_price_cents END
    WHERE product_id = NEW.id AND active = 1 AND (price_cents <> NEW.price_cents
        OR stock <> NEW.stock OR sku IS NOT NEW.sku);
END;

-- 0009: product search. One row per product holds the text searched (kept by
-- shop/services/search.py in the transaction of every product write). The FTS5 index over
-- it (external content) and its triggers are made by that module's build(), run by every
-- `flask db upgrade` (and by the schema loading of tests) when its definition changed, with
-- the tokenizer of SHOP_SEARCH_LANGUAGE.
CREATE TABLE IF NOT EXISTS product_search (
    id INTEGER PRIMARY KEY,
    product_id TEXT NOT NULL UNIQUE REFERENCES products (id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    skus TEXT NOT NULL,
    options TEXT NOT NULL,
    description TEXT NOT NULL,
    flags TEXT NOT NULL DEFAULT ''
);

-- 0020, 0021: a product's list columns (lowest active price, total active stock, a lone
-- variant's SKU) follow its variants: a trigger on every change of a variant that can move
-- them (added, removed, its price, stock, active flag or SKU changed) is the one place of the
-- rule; services/variants.refresh reads the result. All three columns: the lone-variant
-- trigger above copies them back onto a lone variant.
-- SQLite has no stored procedures: the rule is the trigger of this view (it stores nothing),
-- and each trigger below runs it by inserting the product's id into the view.
CREATE VIEW IF NOT EXISTS product_list_columns AS SELECT id AS product_id FROM products;

CREATE TRIGGER IF NOT EXISTS product_list_columns INSTEAD OF INSERT ON product_list_columns
BEGIN
    UPDATE products SET
        price_cents = COALESCE(fresh.active_price, fresh.lowest_price, products.price_cents),
        stock = fresh.stock,
        sku = fresh.sku
    FROM (SELECT MIN(price_cents) FILTER (WHERE active = 1) AS active_price,
            MIN(price_cents) AS lowest_price,
            COALESCE(SUM(stock) FILTER (WHERE active = 1), 0) AS stock,
            CASE WHEN COUNT(*) = 1 THEN MIN(sku) END AS sku
        FROM product_variants WHERE product_id = NEW.product_id) AS fresh
    WHERE products.id = NEW.product_id
        AND (products.price_cents, products.stock, products.sku) IS NOT
            (COALESCE(fresh.active_price, fresh.lowest_price, products.price_cents), fresh.stock,
            fresh.sku);
END;

CREATE TRIGGER IF NOT EXISTS product_variants_stock
AFTER UPDATE OF price_cents, stock, active, sku ON product_variants
WHEN NEW.price_cents IS NOT OLD.price_cents OR NEW.stock IS NOT OLD.stock
    OR NEW.active IS NOT OLD.active OR NEW.sku IS NOT OLD.sku
BEGIN
    INSERT INTO product_list_columns (product_id) VALUES (NEW.product_id);
END;

CREATE TRIGGER IF NOT EXISTS product_variants_added AFTER INSERT ON product_variants
BEGIN
    INSERT INTO product_list_columns (product_id) VALUES (NEW.product_id);
END;

CREATE TRIGGER IF NOT EXISTS product_variants_removed AFTER DELETE ON product_variants
BEGIN
    INSERT INTO product_list_columns (product_id) VALUES (OLD.product_id);
END;

-- 0027: the facets' counts (schema.sql) kept by every write that moves one.
CREATE TRIGGER IF NOT EXISTS facet_products_added AFTER INSERT ON products
BEGIN
    INSERT INTO facet_prices (active, category_id, low, n)
    SELECT NEW.active, COALESCE(NEW.category_id, ''), MAX(low), 1 FROM facet_bands
    WHERE low <= NEW.price_cents
    ON CONFLICT (active, category_id, low) DO UPDATE SET n = n + excluded.n;
END;

CREATE TRIGGER IF NOT EXISTS facet_products_changed
AFTER UPDATE OF price_cents, active, category_id ON products
WHEN OLD.price_cents IS NOT NEW.price_cents OR OLD.active IS NOT NEW.active
    OR OLD.category_id IS NOT NEW.category_id
BEGIN
    INSERT INTO facet_prices (active, category_id, low, n)
    SELECT OLD.active, COALESCE(OLD.category_id, ''), MAX(low), -1 FROM facet_bands
    WHERE low <= OLD.price_cents
    ON CONFLICT (active, category_id, low) DO UPDATE SET n = n + excluded.n;
    INSERT INTO facet_prices (active, category_id, low, n)
    SELECT NEW.active, COALESCE(NEW.category_id, ''), MAX(low), 1 FROM facet_bands
    WHERE low <= NEW.price_cents
    ON CONFLICT (active, category_id, low) DO UPDATE SET n = n + excluded.n;
    INSERT INTO facet_options (active, category_id, name, value, n)
    SELECT moved.active, moved.category_id, o.name, o.value, moved.n
    FROM product_variants v JOIN variant_option_values o ON o.variant_id = v.id,
        (SELECT OLD.active AS active, COALESCE(OLD.category_id, '') AS category_id, -1 AS n
         UNION ALL
         SELECT NEW.active, COALESCE(NEW.category_id, ''), 1) moved
    WHERE v.product_id = NEW.id AND v.active = 1
        AND (OLD.active IS NOT NEW.active OR OLD.category_id IS NOT NEW.category_id)
    GROUP BY moved.active, moved.category_id, moved.n, o.name, o.value
    ON CONFLICT (active, category_id, name, value) DO UPDATE SET n = n + excluded.n;
END;

CREATE TRIGGER IF NOT EXISTS facet_products_removed BEFORE DELETE ON products
BEGIN
    INSERT INTO facet_prices (active, category_id, low, n)
    SELECT OLD.active, COALESCE(OLD.category_id, ''), MAX(low), -1 FROM facet_bands
    WHERE low <= OLD.price_cents
    ON CONFLICT (active, category_id, low) DO UPDATE SET n = n + excluded.n;
    INSERT INTO facet_options (active, category_id, name, value, n)
    SELECT OLD.active, COALESCE(OLD.category_id, ''), o.name, o.value, -1
    FROM product_variants v JOIN variant_option_values o ON o.variant_id = v.id
    WHERE v.product_id = OLD.id AND v.active = 1
    GROUP BY o.name, o.value
    ON CONFLICT (active, category_id, name, value) DO UPDATE SET n = n + excluded.n;
END;

-- A variant switched on or off, or removed: each of its values that no other active variant
-- of the product has.
CREATE TRIGGER IF NOT EXISTS facet_variants_changed BEFORE UPDATE OF active ON product_variants
WHEN (OLD.active = 1) IS NOT (NEW.active = 1)
BEGIN
    INSERT INTO facet_options (active, category_id, name, value, n)
    SELECT p.active, COALESCE(p.category_id, ''), mine.name, mine.value,
        CASE WHEN NEW.active = 1 THEN 1 ELSE -1 END
    FROM products p JOIN variant_option_values mine ON mine.variant_id = NEW.id
    WHERE p.id = NEW.product_id AND NOT EXISTS (
        SELECT 1 FROM variant_option_values o JOIN product_variants v ON v.id = o.variant_id
        WHERE o.name = mine.name AND o.value = mine.value AND o.product_id = NEW.product_id
            AND o.variant_id <> NEW.id AND v.active = 1)
    ON CONFLICT (active, category_id, name, value) DO UPDATE SET n = n + excluded.n;
END;

CREATE TRIGGER IF NOT EXISTS facet_variants_removed BEFORE DELETE ON product_variants
WHEN OLD.active = 1
BEGIN
    INSERT INTO facet_options (active, category_id, name, value, n)
    SELECT p.active, COALESCE(p.category_id, ''), mine.name, mine.value, -1
    FROM products p JOIN variant_option_values mine ON mine.variant_id = OLD.id
    WHERE p.id = OLD.product_id AND NOT EXISTS (
        SELECT 1 FROM variant_option_values o JOIN product_variants v ON v.id = o.variant_id
        WHERE o.name = mine.name AND o.value = mine.value AND o.product_id = OLD.product_id
            AND o.variant_id <> OLD.id AND v.active = 1)
    ON CONFLICT (active, category_id, name, value) DO UPDATE SET n = n + excluded.n;
END;

-- An active variant's value written or removed: counted when no other active variant of the
-- product has it.
CREATE TRIGGER IF NOT EXISTS facet_option_values_added AFTER INSERT ON variant_option_values
WHEN (SELECT active FROM product_variants WHERE id = NEW.variant_id) = 1
BEGIN
    INSERT INTO facet_options (active, category_id, name, value, n)
    SELECT p.active, COALESCE(p.category_id, ''), NEW.name, NEW.value, 1
    FROM products p
    WHERE p.id = NEW.product_id AND NOT EXISTS (
        SELECT 1 FROM variant_option_values o JOIN product_variants v ON v.id = o.variant_id
        WHERE o.name = NEW.name AND o.value = NEW.value AND o.product_id = NEW.product_id
            AND o.variant_id <> NEW.variant_id AND v.active = 1)
    ON CONFLICT (active, category_id, name, value) DO UPDATE SET n = n + excluded.n;
END;

CREATE TRIGGER IF NOT EXISTS facet_option_values_removed BEFORE DELETE ON variant_option_values
WHEN (SELECT active FROM product_variants WHERE id = OLD.variant_id) = 1
BEGIN
    INSERT INTO facet_options (active, category_id, name, value, n)
    SELECT p.active, COALESCE(p.category_id, ''), OLD.name, OLD.value, -1
    FROM products p
    WHERE p.id = OLD.product_id AND NOT EXISTS (
        SELECT 1 FROM variant_option_values o JOIN product_variants v ON v.id = o.variant_id
        WHERE o.name = OLD.name AND o.value = OLD.value AND o.product_id = OLD.product_id
            AND o.variant_id <> OLD.variant_id AND v.active = 1)
    ON CONFLICT (active, category_id, name, value) DO UPDATE SET n = n + excluded.n;
END;


-- 0029: every price a variant has had, from when it took effect (the variant's updated_at
-- of the write that set it): the EU prior price (docs/invoicing.md). Written by the triggers
-- below on every insert and every change of a price, whichever path wrote it (API, console,
-- import, the product's lone-variant trigger); pruned by the worker (catalogue/prices.py).
CREATE TABLE IF NOT EXISTS variant_prices (
    id INTEGER PRIMARY KEY,
    variant_id TEXT NOT NULL REFERENCES product_variants (id) ON DELETE CASCADE,
    product_id TEXT NOT NULL,
    price_cents BIGINT NOT NULL,
    at TEXT NOT NULL
);

CREATE INDEX IF NOT EXISTS variant_prices_variant ON variant_prices (variant_id, at, id);
CREATE INDEX IF NOT EXISTS variant_prices_at ON variant_prices (at);

CREATE TRIGGER IF NOT EXISTS variant_prices_added AFTER INSERT ON product_variants
BEGIN
    INSERT INTO variant_prices (variant_id, product_id, price_cents, at)
    VALUES (NEW.id, NEW.product_id, NEW.price_cents, NEW.updated_at);
END;

CREATE TRIGGER IF NOT EXISTS variant_prices_changed AFTER UPDATE OF price_cents ON product_variants
WHEN NEW.price_cents IS NOT OLD.price_cents
BEGIN
    INSERT INTO variant_prices (variant_id, product_id, price_cents, at)
    VALUES (NEW.id, NEW.product_id, NEW.price_cents, NEW.updated_at);
END;


-- 0039: the copies of their products' state and sort keys in collection_products and
-- option_products (schema.sql), kept by every write that changes one.
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

-- A product's keys changed: its rows of the three tables (option_pairs: 0044).
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


-- 0044: option_pairs (schema.sql), kept by every write that changes one.
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
