-- 0029: invoices and credit notes (issue 40). An invoice is a frozen snapshot of an order
-- (JSON) with its gap-free number, issued once; a credit note the same for a refund. Numbers
-- come from one counter row per series ('invoice', 'credit_note') and calendar year, bumped
-- in the transaction that issues the document (docs/invoicing.md).
CREATE TABLE IF NOT EXISTS invoice_counters (
    series TEXT NOT NULL,
    year INTEGER NOT NULL,
    last_number BIGINT NOT NULL,
    PRIMARY KEY (series, year)
);

CREATE TABLE IF NOT EXISTS invoices (
    id TEXT PRIMARY KEY,
    order_id TEXT NOT NULL UNIQUE REFERENCES orders (id) ON DELETE CASCADE,
    number TEXT NOT NULL UNIQUE,
    issued_at TEXT NOT NULL,
    customer_id TEXT,
    currency TEXT NOT NULL,
    total_cents BIGINT NOT NULL,
    snapshot TEXT NOT NULL
);

CREATE INDEX IF NOT EXISTS invoices_issued ON invoices (issued_at, id);

CREATE TABLE IF NOT EXISTS credit_notes (
    id TEXT PRIMARY KEY,
    refund_id TEXT NOT NULL UNIQUE REFERENCES refunds (id) ON DELETE CASCADE,
    order_id TEXT NOT NULL REFERENCES orders (id) ON DELETE CASCADE,
    invoice_id TEXT NOT NULL REFERENCES invoices (id) ON DELETE CASCADE,
    number TEXT NOT NULL UNIQUE,
    issued_at TEXT NOT NULL,
    currency TEXT NOT NULL,
    total_cents BIGINT NOT NULL,
    snapshot TEXT NOT NULL
);

CREATE INDEX IF NOT EXISTS credit_notes_issued ON credit_notes (issued_at, id);
CREATE INDEX IF NOT EXISTS credit_notes_order ON credit_notes (order_id);

-- 0029: every price a variant has had, from when it took effect (the variant's updated_at
-- of the write that set it): the EU prior price (docs/invoicing.md). Written by the triggers
-- below on every insert and every change of a price, whichever path wrote it (API, console,
-- import, the product's lone-variant trigger); pruned by the worker (catalogue/prices.py).
CREATE TABLE IF NOT EXISTS variant_prices (
    id INTEGER PRIMARY KEY,
    variant_id TEXT NOT NULL REFERENCES product_variants (id) ON DELETE CASCADE,
    product_id TEXT NOT NULL,
    price_cents BIGINT NOT NULL,
    at TEXT NOT NULL
);

CREATE INDEX IF NOT EXISTS variant_prices_variant ON variant_prices (variant_id, at, id);
CREATE INDEX IF NOT EXISTS variant_prices_at ON variant_prices (at);

CREATE TRIGGER IF NOT EXISTS variant_prices_added AFTER INSERT ON product_variants
BEGIN
    INSERT INTO variant_prices (variant_id, product_id, price_cents, at)
    VALUES (NEW.id, NEW.product_id, NEW.price_cents, NEW.updated_at);
END;

CREATE TRIGGER IF NOT EXISTS variant_prices_changed AFTER UPDATE OF price_cents ON product_variants
WHEN NEW.price_cents IS NOT OLD.price_cents
BEGIN
    INSERT INTO variant_prices (variant_id, product_id, price_cents, at)
    VALUES (NEW.id, NEW.product_id, NEW.price_cents, NEW.updated_at);
END;

-- Every variant's current price, from its last write (when it took effect is not known
-- earlier): its prior price is null until its price changes.
INSERT INTO variant_prices (variant_id, product_id, price_cents, at)
SELECT id, product_id, price_cents, updated_at FROM product_variants;

-- A compare-at price must be above the price (issue 40): a lone variant's is dropped when a
-- product's new price reaches it (it was kept while equal).
DROP TRIGGER IF EXISTS products_lone_variant;
CREATE TRIGGER IF NOT EXISTS products_lone_variant AFTER UPDATE OF price_cents, stock, sku
ON products
WHEN (SELECT COUNT(*) FROM product_variants WHERE product_id = NEW.id) = 1
BEGIN
    UPDATE product_variants SET price_cents = NEW.price_cents, stock = NEW.stock,
        sku = NEW.sku, updated_at = NEW.updated_at,
        compare_at_price_cents = CASE WHEN compare_at_price_cents > NEW.price_cents
            THEN compare_at_price_cents END
    WHERE product_id = NEW.id AND active = 1 AND (price_cents <> NEW.price_cents
        OR stock <> NEW.stock OR sku IS NOT NEW.sku);
END;
