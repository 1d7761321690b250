-- 0009: product search (issue 25) and sync by change time (issue 28). The index is filled
-- by `flask db upgrade` itself once the migrations have run: shop/migrate.finish rebuilds it
-- whenever the definition recorded in search_index differs from the code's (here: none yet).

CREATE TABLE IF NOT EXISTS search_index (
    name TEXT PRIMARY KEY,
    definition TEXT NOT NULL,
    built_at TEXT NOT NULL
);

CREATE INDEX IF NOT EXISTS products_updated ON products (updated_at, id);

-- 0009: product search. One weighted tsvector per product (name and SKUs A, option values
-- B, description C), written by shop/services/search.py in the transaction of every product
-- write, in the text search configuration SHOP_SEARCH_LANGUAGE names (english by default).
CREATE TABLE IF NOT EXISTS product_search (
    product_id TEXT PRIMARY KEY REFERENCES products (id) ON DELETE CASCADE,
    document TSVECTOR NOT NULL,
    active INTEGER NOT NULL DEFAULT 1
);

CREATE INDEX IF NOT EXISTS product_search_document ON product_search USING GIN (document);
