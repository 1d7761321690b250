-- 0039 (issue 42): a collection's page read as one range of an index. The filter collected
-- every product of the collection and sorted them (5.5-6.7 ms of CPU on SQLite, 60-67 ms on
-- PostgreSQL at 100,000 products with a collection of 2,000; docs/performance.md, "List
-- filters: one index range (issue 42)"). Each row of collection_products now carries its
-- product's state and sort keys (but updated_at, changed by every edit), kept by the
-- triggers below in the transaction of the write, whichever release or tool writes; an
-- index per sort then answers `?collection=…&sort=…` in the sort's order.
ALTER TABLE collection_products ADD COLUMN product_active INTEGER,
    ADD COLUMN product_created_at TEXT, ADD COLUMN product_price_cents BIGINT,
    ADD COLUMN product_name TEXT;

UPDATE collection_products cp
SET product_active = p.active, product_created_at = p.created_at,
    product_price_cents = p.price_cents, product_name = p.name
FROM products p WHERE p.id = cp.product_id;

CREATE INDEX IF NOT EXISTS collection_products_created
    ON collection_products (collection_id, product_active, product_created_at, product_id);
CREATE INDEX IF NOT EXISTS collection_products_price
    ON collection_products (collection_id, product_active, product_price_cents, product_id);
CREATE INDEX IF NOT EXISTS collection_products_name
    ON collection_products (collection_id, product_active, product_name, product_id);

CREATE OR REPLACE FUNCTION collection_products_keyed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    SELECT p.active, p.created_at, p.price_cents, p.name
    INTO NEW.product_active, NEW.product_created_at, NEW.product_price_cents, NEW.product_name
    FROM products p WHERE p.id = NEW.product_id;
    RETURN NEW;
END $$;

CREATE TRIGGER collection_products_keyed BEFORE INSERT OR UPDATE OF product_id
ON collection_products FOR EACH ROW EXECUTE FUNCTION collection_products_keyed();

CREATE OR REPLACE FUNCTION products_list_keys() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE collection_products
    SET product_active = NEW.active, product_created_at = NEW.created_at,
        product_price_cents = NEW.price_cents, product_name = NEW.name
    WHERE product_id = NEW.id;
    RETURN NEW;
END $$;

CREATE TRIGGER products_list_keys AFTER UPDATE OF active, created_at, price_cents, name
ON products FOR EACH ROW
WHEN (OLD.active IS DISTINCT FROM NEW.active OR OLD.created_at IS DISTINCT FROM NEW.created_at
    OR OLD.price_cents IS DISTINCT FROM NEW.price_cents OR OLD.name IS DISTINCT FROM NEW.name)
EXECUTE FUNCTION products_list_keys();
