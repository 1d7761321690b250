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
        compare_at_price_cents = CASE WHEN compare_at_price_cents >= NEW.price_cents
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

-- 0020: a variant's stock change refreshes its product's list columns (checkout writes the
-- variant alone); the same rule as services/variants.refresh. All three columns: the
-- lone-variant trigger above copies them back onto a lone variant.
CREATE TRIGGER IF NOT EXISTS product_variants_stock AFTER UPDATE OF stock ON product_variants
WHEN NEW.stock IS NOT OLD.stock
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
END;
