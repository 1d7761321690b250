SET LOCAL lock_timeout = '5s';

-- 0025: carts (issue 38). A cart's id is 32 random bytes (URL-safe Base64): the address of
-- the cart, which a guest's storefront and the reminder mail's link carry (a guest's
-- capability); a signed-in customer's cart has customer_id and is refused to anybody else.
-- status: 'open' or 'completed' (order_id: the order it made; read-only from then on).
-- reminders: the visitor agreed to one reminder e-mail; reminded_at: when it was queued.
CREATE TABLE IF NOT EXISTS carts (
    id TEXT PRIMARY KEY,
    customer_id TEXT REFERENCES customers (id) ON DELETE CASCADE,
    status TEXT NOT NULL DEFAULT 'open',
    email TEXT,
    shipping_address TEXT,
    shipping_method_id TEXT,
    discount_code TEXT,
    note TEXT,
    reminders INTEGER NOT NULL DEFAULT 0,
    reminded_at TEXT,
    order_id TEXT REFERENCES orders (id) ON DELETE SET NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);

CREATE INDEX IF NOT EXISTS carts_customer ON carts (customer_id, status);
CREATE INDEX IF NOT EXISTS carts_status_updated ON carts (status, updated_at);
CREATE INDEX IF NOT EXISTS carts_email ON carts (email);

-- One line per variant of a cart; a deleted variant takes its lines with it.
CREATE TABLE IF NOT EXISTS cart_lines (
    id TEXT PRIMARY KEY,
    cart_id TEXT NOT NULL REFERENCES carts (id) ON DELETE CASCADE,
    variant_id TEXT NOT NULL REFERENCES product_variants (id) ON DELETE CASCADE,
    quantity INTEGER NOT NULL CHECK (quantity > 0),
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (cart_id, variant_id)
);

CREATE INDEX IF NOT EXISTS cart_lines_variant ON cart_lines (variant_id);

-- A guest's order (issue 38) has no customer: it belongs to guest_email, and its holder
-- reads it with a token of 32 random bytes whose SHA-256 is token_hash.
ALTER TABLE orders ALTER COLUMN customer_id DROP NOT NULL;
ALTER TABLE orders ADD COLUMN guest_email TEXT;
ALTER TABLE orders ADD COLUMN token_hash TEXT;
CREATE INDEX IF NOT EXISTS orders_guest_email ON orders (guest_email);

-- A customer proves they hold their e-mail address with a link mailed to it (issue 38):
-- email_verified_at, and the verification tokens (only their SHA-256), valid for a time.
-- Verifying attaches the guest orders placed with the address (docs/orders.md).
ALTER TABLE customers ADD COLUMN email_verified_at TEXT;
CREATE TABLE IF NOT EXISTS email_verifications (
    id TEXT PRIMARY KEY,
    token_hash TEXT NOT NULL UNIQUE,
    customer_id TEXT NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
    email TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    used_at TEXT
);

CREATE INDEX IF NOT EXISTS email_verifications_customer
    ON email_verifications (customer_id, created_at);
