-- 0020: a change of a variant's stock brings its product's stock (the list's column, the sum
-- of its active variants) up to date in the same statement (issue 29: checkout writes the
-- variant alone, one write fewer). services/variants.refresh still recomputes every list
-- column after other writes of a product; both compute the same sum. With SQLite's
-- recursive triggers off, products_lone_variant cannot fire this one back.
CREATE TRIGGER IF NOT EXISTS product_variants_stock AFTER UPDATE OF stock ON product_variants
WHEN NEW.stock IS NOT OLD.stock
BEGIN
    UPDATE products SET stock = (SELECT COALESCE(SUM(stock), 0) FROM product_variants
        WHERE product_id = NEW.product_id AND active = 1)
    WHERE id = NEW.product_id;
END;
