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
            compare_at_price_cents = CASE WHEN compare_at_price_cents >= NEW.price_cents
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

-- 0020: a variant's stock change refreshes its product's list columns (checkout writes the
-- variant alone); the same rule as services/variants.refresh. All three columns: the
-- lone-variant trigger above copies them back onto a lone variant.
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
