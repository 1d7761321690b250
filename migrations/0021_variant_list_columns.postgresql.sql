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

DROP TRIGGER IF EXISTS product_variants_stock ON product_variants;

CREATE TRIGGER product_variants_stock AFTER UPDATE OF price_cents, stock, active, sku
ON product_variants FOR EACH ROW
WHEN (NEW.price_cents IS DISTINCT FROM OLD.price_cents OR NEW.stock IS DISTINCT FROM OLD.stock
    OR NEW.active IS DISTINCT FROM OLD.active OR NEW.sku IS DISTINCT FROM OLD.sku)
EXECUTE FUNCTION product_variants_stock();

CREATE TRIGGER product_variants_added AFTER INSERT ON product_variants
FOR EACH ROW EXECUTE FUNCTION product_variants_stock();

CREATE TRIGGER product_variants_removed AFTER DELETE ON product_variants
FOR EACH ROW EXECUTE FUNCTION product_variants_stock();
