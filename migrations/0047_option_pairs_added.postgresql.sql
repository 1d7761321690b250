-- 0047 (issue 42): option_pairs (0044) follows an INSERT of option values once a statement,
-- over its rows, as 0045 made the other INSERT triggers of variant_option_values: its row
-- trigger planned its statement again for every value a catalogue import writes (0045's
-- measurement: planning, not work, was most of a PostgreSQL import). Same rule: a value
-- written makes its pairs with its variant's other values, where the variant is active.
-- The row trigger keeps the DELETE part.
CREATE OR REPLACE FUNCTION option_pairs_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO option_pairs (name, value, other_name, other_value, product_id,
        product_active, product_created_at, product_price_cents, product_name)
    SELECT DISTINCT CASE WHEN m.name > a.name COLLATE "C" THEN a.name ELSE m.name END,
        CASE WHEN m.name > a.name COLLATE "C" THEN a.value ELSE m.value END,
        CASE WHEN m.name > a.name COLLATE "C" THEN m.name ELSE a.name END,
        CASE WHEN m.name > a.name COLLATE "C" THEN m.value ELSE a.value END,
        p.id, p.active, p.created_at, p.price_cents, p.name
    FROM added a
    JOIN product_variants v ON v.id = a.variant_id AND v.active = 1
    JOIN variant_option_values m ON m.variant_id = a.variant_id AND m.name <> a.name
    JOIN products p ON p.id = a.product_id
    ON CONFLICT (name, value, other_name, other_value, product_id) DO NOTHING;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION option_pairs_values() RETURNS trigger LANGUAGE plpgsql AS $$
-- A value removed: the product's pairs with it that no active variant has any more.
-- PL/pgSQL, so that each statement's plan is kept for the session.
BEGIN
    DELETE FROM option_pairs op
    WHERE op.product_id = OLD.product_id
        AND ((op.name = OLD.name AND op.value = OLD.value)
            OR (op.other_name = OLD.name AND op.other_value = OLD.value))
        AND NOT EXISTS (
            SELECT 1 FROM variant_option_values a
            JOIN variant_option_values b ON b.variant_id = a.variant_id
            JOIN product_variants v ON v.id = a.variant_id
            WHERE a.name = op.name AND a.value = op.value AND a.product_id = OLD.product_id
                AND b.name = op.other_name AND b.value = op.other_value
                AND b.product_id = OLD.product_id AND v.active = 1);
    RETURN OLD;
END $$;

DROP TRIGGER IF EXISTS option_pairs_values ON variant_option_values;
CREATE TRIGGER option_pairs_values AFTER DELETE ON variant_option_values
FOR EACH ROW EXECUTE FUNCTION option_pairs_values();
CREATE TRIGGER option_pairs_added AFTER INSERT ON variant_option_values
REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION option_pairs_added();
