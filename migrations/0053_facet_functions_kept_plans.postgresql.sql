-- 0053: the facets' count functions of 0027 in PL/pgSQL instead of SQL: a SQL function's
-- statement is planned again at every call (~1-3 ms each, once per option value an import
-- writes), a PL/pgSQL one's plan is kept for the session. Same statements, same counts
-- (docs/performance.md, "The PostgreSQL import").
CREATE OR REPLACE FUNCTION facet_price(_by INTEGER, _active INTEGER, _category TEXT,
    _price BIGINT) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO facet_prices (active, category_id, low, n)
    SELECT _active, COALESCE(_category, ''), MAX(b.low), _by FROM facet_bands b
    WHERE b.low <= _price
    ON CONFLICT (active, category_id, low) DO UPDATE SET n = facet_prices.n + excluded.n;
END $$;

-- Add _by to the count of every value of the product _product's active variants.
CREATE OR REPLACE FUNCTION facet_product_options(_by INTEGER, _product TEXT, _active INTEGER,
    _category TEXT) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO facet_options (active, category_id, name, value, n)
    SELECT _active, COALESCE(_category, ''), o.name, o.value, _by
    FROM product_variants v JOIN variant_option_values o ON o.variant_id = v.id
    WHERE v.product_id = _product AND v.active = 1
    GROUP BY o.name, o.value
    ON CONFLICT (active, category_id, name, value) DO UPDATE SET n = facet_options.n + excluded.n;
END $$;

-- Add _by to the count of each value of the variant _variant (or only _name = _value) that no
-- other active variant of its product _product has.
CREATE OR REPLACE FUNCTION facet_variant_options(_by INTEGER, _product TEXT, _variant TEXT,
    _name TEXT, _value TEXT) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO facet_options (active, category_id, name, value, n)
    SELECT p.active, COALESCE(p.category_id, ''), mine.name, mine.value, _by
    FROM products p, (
        SELECT m.name, m.value FROM variant_option_values m
        WHERE m.variant_id = _variant AND _name IS NULL
        UNION ALL
        SELECT _name, _value WHERE _name IS NOT NULL
    ) mine
    WHERE p.id = _product AND NOT EXISTS (
        SELECT 1 FROM variant_option_values o JOIN product_variants v ON v.id = o.variant_id
        WHERE o.name = mine.name AND o.value = mine.value AND o.product_id = _product
            AND o.variant_id <> _variant AND v.active = 1)
    ON CONFLICT (active, category_id, name, value) DO UPDATE SET n = facet_options.n + excluded.n;
END $$;
