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
