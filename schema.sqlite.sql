-- SQLite's part of schema.sql, run after it (shop/migrate.py load_schema).

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
    description TEXT NOT NULL
);
