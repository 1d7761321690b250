-- 0045 (issue 42): what follows an INSERT of variants or of their option values is kept once
-- a statement, over all its rows (transition tables), instead of once a row. The import of
-- 10,000 new rows on PostgreSQL took 46-48 s, most of it planning the row triggers' lookups
-- again for every row (1.1 ms to plan, 0.1 ms to run; the import plans each statement:
-- docs/performance.md); the services insert a product's variants, and their values, in one
-- statement each. Same summaries, same rules: the facet counts (0027), the price history
-- (0029), option_products (0039) and the products' list columns (0020, 0021). Updates and
-- deletes keep their row triggers.

-- A product's list columns from its variants, for every product the statement added to.
CREATE OR REPLACE FUNCTION product_variants_stock_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE products SET
        price_cents = COALESCE(fresh.active_price, fresh.lowest_price, products.price_cents),
        stock = fresh.stock,
        sku = fresh.sku
    FROM (SELECT v.product_id, MIN(v.price_cents) FILTER (WHERE v.active = 1) AS active_price,
            MIN(v.price_cents) AS lowest_price,
            COALESCE(SUM(v.stock) FILTER (WHERE v.active = 1), 0) AS stock,
            CASE WHEN COUNT(*) = 1 THEN MIN(v.sku) END AS sku
        FROM product_variants v WHERE v.product_id IN (SELECT a.product_id FROM added a)
        GROUP BY v.product_id) AS fresh
    WHERE products.id = fresh.product_id
        AND (products.price_cents, products.stock, products.sku) IS DISTINCT FROM
            (COALESCE(fresh.active_price, fresh.lowest_price, products.price_cents), fresh.stock,
            fresh.sku);
    RETURN NULL;
END $$;

DROP TRIGGER IF EXISTS product_variants_added ON product_variants;
CREATE TRIGGER product_variants_added AFTER INSERT ON product_variants
REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION product_variants_stock_added();

-- Each new variant's first price.
CREATE OR REPLACE FUNCTION variant_prices_record_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO variant_prices (variant_id, product_id, price_cents, at)
    SELECT a.id, a.product_id, a.price_cents, a.updated_at FROM added a;
    RETURN NULL;
END $$;

DROP TRIGGER IF EXISTS variant_prices_added ON product_variants;
CREATE TRIGGER variant_prices_added AFTER INSERT ON product_variants
REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION variant_prices_record_added();

-- Values written to active variants: a product's value is counted in facet_options when no
-- active variant of the product had it before the statement, and has its row of
-- option_products.
CREATE OR REPLACE FUNCTION variant_option_values_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO facet_options (active, category_id, name, value, n)
    SELECT p.active, COALESCE(p.category_id, ''), fresh.name, fresh.value, COUNT(*)
    FROM (SELECT DISTINCT a.product_id, a.name, a.value
        FROM added a JOIN product_variants v ON v.id = a.variant_id
        WHERE v.active = 1 AND NOT EXISTS (
            SELECT 1 FROM variant_option_values o JOIN product_variants w ON w.id = o.variant_id
            WHERE o.name = a.name AND o.value = a.value AND o.product_id = a.product_id
                AND w.active = 1 AND NOT EXISTS (
                    SELECT 1 FROM added b WHERE b.variant_id = o.variant_id AND b.name = o.name))
    ) AS fresh JOIN products p ON p.id = fresh.product_id
    GROUP BY p.active, COALESCE(p.category_id, ''), fresh.name, fresh.value
    ON CONFLICT (active, category_id, name, value) DO UPDATE SET n = facet_options.n + excluded.n;
    INSERT INTO option_products (name, value, product_id, product_active, product_created_at,
        product_price_cents, product_name)
    SELECT DISTINCT a.name, a.value, p.id, p.active, p.created_at, p.price_cents, p.name
    FROM added a JOIN product_variants v ON v.id = a.variant_id
        JOIN products p ON p.id = a.product_id
    WHERE v.active = 1
    ON CONFLICT (name, value, product_id) DO NOTHING;
    RETURN NULL;
END $$;

DROP TRIGGER IF EXISTS facet_option_values_added ON variant_option_values;
DROP TRIGGER IF EXISTS option_products_added ON variant_option_values;
CREATE TRIGGER variant_option_values_added AFTER INSERT ON variant_option_values
REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION variant_option_values_added();

-- A value removed: option_products row by row, as before (facet_option_values_removed too).
CREATE OR REPLACE FUNCTION option_products_values() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM option_products_keep(OLD.product_id, OLD.variant_id, OLD.name, OLD.value);
    RETURN OLD;
END $$;

CREATE TRIGGER option_products_removed AFTER DELETE ON variant_option_values
FOR EACH ROW EXECUTE FUNCTION option_products_values();
