-- 0009: product search (issue 25) and sync by change time (issue 28). The index is filled
-- by `flask db upgrade` itself once the migrations have run: shop/migrate.finish rebuilds it
-- whenever the definition recorded in search_index differs from the code's (here: none yet).

CREATE TABLE IF NOT EXISTS search_index (
    name TEXT PRIMARY KEY,
    definition TEXT NOT NULL,
    built_at TEXT NOT NULL
);

CREATE INDEX IF NOT EXISTS products_updated ON products (updated_at, id);

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
