-- 0020: a change of a variant's stock brings its product's list columns (price_cents: the
-- lowest active price; stock: the sum of its active variants; sku: a lone variant's) up to
-- date in the same statement (issue 29: checkout writes the variant alone, one write fewer).
-- The same columns and rule as services/variants.refresh, which still runs after every other
-- write of a variant. All three, not only stock: products_lone_variant (0007), fired by this
-- UPDATE, copies the product's price, stock and SKU onto a lone variant, so a stale price or
-- SKU here would undo a PATCH that changed the variant's price and stock together
-- (tests/test_variants.py). With the columns fresh it finds nothing to change.
CREATE OR REPLACE FUNCTION product_variants_stock() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE products SET
        price_cents = COALESCE(
            (SELECT MIN(price_cents) FROM product_variants
                WHERE product_id = NEW.product_id AND active = 1),
            (SELECT MIN(price_cents) FROM product_variants WHERE product_id = NEW.product_id),
            price_cents),
        stock = COALESCE((SELECT SUM(stock) FROM product_variants
            WHERE product_id = NEW.product_id AND active = 1), 0),
        sku = CASE WHEN (SELECT COUNT(*) FROM product_variants WHERE product_id = NEW.product_id) = 1
            THEN (SELECT MIN(sku) FROM product_variants WHERE product_id = NEW.product_id) END
    WHERE id = NEW.product_id;
    RETURN NULL;
END $$;

CREATE TRIGGER product_variants_stock AFTER UPDATE OF stock ON product_variants
FOR EACH ROW WHEN (NEW.stock IS DISTINCT FROM OLD.stock) EXECUTE FUNCTION product_variants_stock();
