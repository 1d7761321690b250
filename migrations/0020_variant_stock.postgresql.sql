-- 0020: a change of a variant's stock brings its product's stock (the list's column, the sum
-- of its active variants) up to date in the same statement (issue 29: checkout writes the
-- variant alone, one write fewer). services/variants.refresh still recomputes every list
-- column after other writes of a product; both compute the same sum. products_lone_variant
-- (fired by this UPDATE) then finds the lone variant already at that stock and stops.
CREATE OR REPLACE FUNCTION product_variants_stock() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE products SET stock = (SELECT COALESCE(SUM(stock), 0) FROM product_variants
        WHERE product_id = NEW.product_id AND active = 1)
    WHERE id = NEW.product_id;
    RETURN NULL;
END $$;

CREATE TRIGGER product_variants_stock AFTER UPDATE OF stock ON product_variants
FOR EACH ROW WHEN (NEW.stock IS DISTINCT FROM OLD.stock) EXECUTE FUNCTION product_variants_stock();
