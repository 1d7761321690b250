-- 0021: a product's list columns (price_cents: the lowest active variant price, else the
-- lowest price; stock: the sum of its active variants' stock; sku: a lone variant's) follow
-- its variants in the database alone, the one place of that rule: the trigger of 0020 (a
-- change of stock) now fires on every change of a variant that can move them (added,
-- removed, a change of its price, stock, active flag or SKU), and services/variants.refresh
-- only reads the result. One scan of the product's variants, and no write when the columns
-- are already right (a product's row written once per change that moves it: the import's
-- 10,000 rows, docs/performance.md). A product being deleted takes its variants with it (ON
-- DELETE CASCADE): their trigger finds no row to update. products_lone_variant (0007) still
-- copies the columns back onto a lone variant: with them fresh it finds nothing to change.
DROP TRIGGER IF EXISTS product_variants_stock;

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
