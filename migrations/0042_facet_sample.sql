-- 0042: the facets' sample (issue 42, docs/evidence-facets.md). A facet group counted from
-- the products reads its first SHOP_FACET_COUNT_CAP matches, then their option values from
-- option_products by product id: the product's index now holds the name and value too, so
-- the values are read from the index alone (it replaces option_products_product, a prefix
-- of it, which the triggers' lookups by product id use as well).
CREATE INDEX IF NOT EXISTS option_products_product_values
    ON option_products (product_id, name, value);
DROP INDEX IF EXISTS option_products_product;
