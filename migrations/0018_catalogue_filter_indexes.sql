-- 0018 (issues 25 and 29): the product list's filters find their rows through an index that
-- holds everything the filter and its capped total test, so neither reads a table row per
-- candidate (measured at 100,000 products, SQLite, CPU per request: docs/performance.md).
--
-- - In stock: a partial index of the products in stock, in the default sort's order; the
--   capped total of `in_stock=true` counted every candidate's row to test `stock`.
-- - Category: a category's products by state and date, so the total of a category tree is
--   counted in the index, a small tree's products are collected without their rows, and a
--   category without sub-categories pages in the default order straight from it.
-- - Option values: the lookup also holds the variant, so `option.Size=M` finds its products
--   (and tells them from an inactive variant's, through the partial index of inactive
--   variants, a few rows) without a row of `variant_option_values` or `product_variants`
--   per match.
-- Indexes only: the previous release reads the same tables and keeps them up to date.

CREATE INDEX IF NOT EXISTS products_in_stock ON products (active, created_at, id)
    WHERE stock > 0;
DROP INDEX IF EXISTS products_category_id;
CREATE INDEX IF NOT EXISTS products_category ON products (category_id, active, created_at, id);
DROP INDEX IF EXISTS variant_option_values_lookup;
CREATE INDEX IF NOT EXISTS variant_option_values_lookup
    ON variant_option_values (name, value, product_id, variant_id);
CREATE INDEX IF NOT EXISTS product_variants_inactive ON product_variants (id) WHERE active = 0;
