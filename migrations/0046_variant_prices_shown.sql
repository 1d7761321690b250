-- 0046: a list's prior prices (issue 42, docs/evidence-priors.md) look only at the active
-- variants of the page's products at the price each product shows: this index finds them
-- by (product id, price) and holds their id, so the 12 variants of a product are not read
-- from the table to keep the one or two at its price.
CREATE INDEX IF NOT EXISTS product_variants_shown_price
    ON product_variants (product_id, price_cents, id) WHERE active = 1;
