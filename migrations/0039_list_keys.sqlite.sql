-- 0039 (issue 42): a collection's page read as one range of an index. The filter collected
-- every product of the collection and sorted them (5.5-6.7 ms of CPU on SQLite, 60-67 ms on
-- PostgreSQL at 100,000 products with a collection of 2,000; docs/performance.md, "List
-- filters: one index range (issue 42)"). Each row of collection_products now carries its
-- product's state and sort keys (but updated_at, changed by every edit), kept by the
-- triggers below in the transaction of the write, whichever release or tool writes; an
-- index per sort then answers `?collection=…&sort=…` in the sort's order.
ALTER TABLE collection_products ADD COLUMN product_active INTEGER;
ALTER TABLE collection_products ADD COLUMN product_created_at TEXT;
ALTER TABLE collection_products ADD COLUMN product_price_cents BIGINT;
ALTER TABLE collection_products ADD COLUMN product_name TEXT;

UPDATE collection_products
SET (product_active, product_created_at, product_price_cents, product_name) = (
    SELECT p.active, p.created_at, p.price_cents, p.name FROM products p
    WHERE p.id = collection_products.product_id);

CREATE INDEX IF NOT EXISTS collection_products_created
    ON collection_products (collection_id, product_active, product_created_at, product_id);
CREATE INDEX IF NOT EXISTS collection_products_price
    ON collection_products (collection_id, product_active, product_price_cents, product_id);
CREATE INDEX IF NOT EXISTS collection_products_name
    ON collection_products (collection_id, product_active, product_name, product_id);

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

CREATE TRIGGER IF NOT EXISTS products_list_keys
AFTER UPDATE OF active, created_at, price_cents, name ON products
WHEN OLD.active IS NOT NEW.active OR OLD.created_at IS NOT NEW.created_at
    OR OLD.price_cents IS NOT NEW.price_cents OR OLD.name IS NOT NEW.name
BEGIN
    UPDATE collection_products
    SET product_active = NEW.active, product_created_at = NEW.created_at,
        product_price_cents = NEW.price_cents, product_name = NEW.name
    WHERE product_id = NEW.id;
END;
