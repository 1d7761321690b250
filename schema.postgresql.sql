-- PostgreSQL's part of schema.sql, run after it (shop/migrate.py load_schema).

-- 0009: product search. One weighted tsvector per product (name and SKUs A, option values
-- B, description C), written by shop/services/search.py in the transaction of every product
-- write, in the text search configuration SHOP_SEARCH_LANGUAGE names (english by default).
CREATE TABLE IF NOT EXISTS product_search (
    product_id TEXT PRIMARY KEY REFERENCES products (id) ON DELETE CASCADE,
    document TSVECTOR NOT NULL
);

CREATE INDEX IF NOT EXISTS product_search_document ON product_search USING GIN (document);
