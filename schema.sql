-- The whole current schema, in a dialect both SQLite and PostgreSQL accept: the readable
-- description. Databases are changed only by the migrations in migrations/ (`flask --app app
-- db upgrade`), whose runner keeps its records in schema_migrations. Every schema change is a
-- new migration AND the same change here: tests/test_migrations.py proves that this file and
-- the migrations build the same tables, columns, indexes and constraints. Tests build their
-- databases from this file. See docs/migrations.md.
-- Conventions: ids are opaque TEXT, timestamps are TEXT in ISO 8601 UTC with a Z (they sort
-- as they compare), flags are INTEGER 0/1, money is BIGINT minor units, JSON is TEXT.

-- schema_version held the SHA-256 of this script for the release before migrations (bd8e86d),
-- whose nodes still read it during a rolling upgrade: removed in a later release.
CREATE TABLE IF NOT EXISTS schema_version (
    id INTEGER PRIMARY KEY,
    checksum TEXT NOT NULL
);

-- Administrators, roles and permissions ---------------------------------------------------

CREATE TABLE IF NOT EXISTS roles (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    builtin INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS role_permissions (
    role_id TEXT NOT NULL REFERENCES roles (id) ON DELETE CASCADE,
    permission TEXT NOT NULL,
    PRIMARY KEY (role_id, permission)
);

CREATE TABLE IF NOT EXISTS users (
    id TEXT PRIMARY KEY,
    email TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    password_hash TEXT NOT NULL,
    role_id TEXT NOT NULL REFERENCES roles (id),
    active INTEGER NOT NULL DEFAULT 1,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);

CREATE INDEX IF NOT EXISTS users_role_id ON users (role_id);

CREATE TABLE IF NOT EXISTS user_permissions (
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    permission TEXT NOT NULL,
    PRIMARY KEY (user_id, permission)
);

-- Customers -------------------------------------------------------------------------------

CREATE TABLE IF NOT EXISTS customers (
    id TEXT PRIMARY KEY,
    email TEXT UNIQUE,
    name TEXT,
    password_hash TEXT,
    active INTEGER NOT NULL DEFAULT 1,
    erased_at TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    -- 0025: when the customer proved they hold the address (shop/auth/email_verification.py)
    email_verified_at TEXT
);

CREATE INDEX IF NOT EXISTS customers_created_at ON customers (created_at, id);
CREATE INDEX IF NOT EXISTS customers_updated_at ON customers (updated_at, id);

-- Sessions: only the SHA-256 of the cookie value is stored ---------------------------------

CREATE TABLE IF NOT EXISTS user_session (
    id TEXT PRIMARY KEY,
    token_hash TEXT NOT NULL UNIQUE,
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at TEXT NOT NULL,
    last_seen_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    user_agent TEXT NOT NULL,
    ip TEXT
);

CREATE INDEX IF NOT EXISTS user_session_user_id ON user_session (user_id);

CREATE TABLE IF NOT EXISTS customer_session (
    id TEXT PRIMARY KEY,
    token_hash TEXT NOT NULL UNIQUE,
    customer_id TEXT NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
    created_at TEXT NOT NULL,
    last_seen_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    user_agent TEXT NOT NULL,
    ip TEXT
);

CREATE INDEX IF NOT EXISTS customer_session_customer_id ON customer_session (customer_id);

-- API keys: only the SHA-256 of the secret is stored ---------------------------------------
-- source is 'admin' (owner_id set) or 'cli' (no owner). An admin key whose owner is gone
-- is refused, never promoted to an ownerless one.

CREATE TABLE IF NOT EXISTS api_keys (
    id TEXT PRIMARY KEY,
    label TEXT NOT NULL,
    token_hash TEXT NOT NULL UNIQUE,
    scopes TEXT NOT NULL,
    source TEXT NOT NULL,
    owner_id TEXT REFERENCES users (id) ON DELETE SET NULL,
    created_at TEXT NOT NULL,
    expires_at TEXT,
    last_used_at TEXT,
    last_used_ip TEXT,
    revoked_at TEXT,
    revoked_by TEXT,
    refused_audit_at TEXT,
    rolled_from TEXT,
    rolled_to TEXT,
    allowed_ips TEXT,
    rate_limit_per_minute INTEGER,
    expiry_warned_at TEXT,
    idle_audited_at TEXT
);

CREATE INDEX IF NOT EXISTS api_keys_owner_id ON api_keys (owner_id, created_at, id);
CREATE INDEX IF NOT EXISTS api_keys_created_at ON api_keys (created_at, id);

-- Requests per key and day, and the refusals among them, flushed in batches (issue 14).
CREATE TABLE IF NOT EXISTS api_key_usage (
    key_id TEXT NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
    day TEXT NOT NULL,
    requests INTEGER NOT NULL DEFAULT 0,
    unauthorized INTEGER NOT NULL DEFAULT 0,
    forbidden INTEGER NOT NULL DEFAULT 0,
    rate_limited INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (key_id, day)
);

-- The addresses each key was used from (a new one is audited).
CREATE TABLE IF NOT EXISTS api_key_addresses (
    key_id TEXT NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
    ip TEXT NOT NULL,
    first_seen_at TEXT NOT NULL,
    last_seen_at TEXT NOT NULL,
    PRIMARY KEY (key_id, ip)
);

-- Audit log -------------------------------------------------------------------------------

CREATE TABLE IF NOT EXISTS audit_log (
    id TEXT PRIMARY KEY,
    at TEXT NOT NULL,
    event TEXT NOT NULL,
    actor_kind TEXT,
    actor_id TEXT,
    actor_label TEXT,
    ip TEXT,
    user_agent TEXT,
    details TEXT NOT NULL DEFAULT '{}'
);

CREATE INDEX IF NOT EXISTS audit_log_at ON audit_log (at, id);
CREATE INDEX IF NOT EXISTS audit_log_event_at ON audit_log (event, at, id);

-- Catalogue -------------------------------------------------------------------------------

CREATE TABLE IF NOT EXISTS categories (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    slug TEXT NOT NULL UNIQUE,
    description TEXT NOT NULL DEFAULT '',
    parent_id TEXT REFERENCES categories (id),
    position INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);

CREATE INDEX IF NOT EXISTS categories_parent_id ON categories (parent_id);
CREATE INDEX IF NOT EXISTS categories_position ON categories (position, name, id);

CREATE TABLE IF NOT EXISTS products (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    slug TEXT NOT NULL UNIQUE,
    description TEXT NOT NULL DEFAULT '',
    sku TEXT UNIQUE,
    price_cents BIGINT NOT NULL CHECK (price_cents >= 0),
    stock BIGINT NOT NULL DEFAULT 0 CHECK (stock >= 0),
    active INTEGER NOT NULL DEFAULT 1,
    category_id TEXT REFERENCES categories (id),
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    options TEXT NOT NULL DEFAULT '[]',
    low_stock_threshold BIGINT,
    tax_class TEXT NOT NULL DEFAULT 'standard'
);

-- Every sort of GET /products, for the public (active = 1) and for staff (all products).
CREATE INDEX IF NOT EXISTS products_category ON products (category_id, active, created_at, id);
-- category_id last (0027): a category tree's page walks them without reading rows; and
-- created_at (0039): a price range sorted by creation time reads no row per match.
CREATE INDEX IF NOT EXISTS products_active_name ON products (active, name, id, category_id);
CREATE INDEX IF NOT EXISTS products_active_price
    ON products (active, price_cents, id, category_id, created_at);
CREATE INDEX IF NOT EXISTS products_active_created ON products (active, created_at, id);
CREATE INDEX IF NOT EXISTS products_name ON products (name, id);
CREATE INDEX IF NOT EXISTS products_price ON products (price_cents, id);
CREATE INDEX IF NOT EXISTS products_created ON products (created_at, id);
-- 0036: a filter's matches by id with their state and sort keys, no row read per match.
CREATE INDEX IF NOT EXISTS products_keys ON products (id, active, created_at, price_cents, name);

-- Variants (0007): every product has at least one; price_cents, stock and sku of products are
-- kept by every variant write (lowest active price, total active stock, a lone variant's SKU),
-- so the product list keeps its indexes. option_key is the JSON list of the option values in
-- the product's option order. stock_low marks the one variant.stock_low event until the stock
-- is above the product's low_stock_threshold again. image_id: no foreign key (images, 0008).
-- The triggers (schema.sqlite.sql / schema.postgresql.sql) bridge the previous release.
CREATE TABLE IF NOT EXISTS product_variants (
    id TEXT PRIMARY KEY,
    product_id TEXT NOT NULL REFERENCES products (id) ON DELETE CASCADE,
    sku TEXT UNIQUE,
    options TEXT NOT NULL DEFAULT '{}',
    option_key TEXT NOT NULL DEFAULT '[]',
    price_cents BIGINT NOT NULL CHECK (price_cents >= 0),
    compare_at_price_cents BIGINT CHECK (compare_at_price_cents >= price_cents),
    stock BIGINT NOT NULL DEFAULT 0 CHECK (stock >= 0),
    weight_grams BIGINT CHECK (weight_grams >= 0),
    image_id TEXT,
    active INTEGER NOT NULL DEFAULT 1,
    position INTEGER NOT NULL DEFAULT 1,
    stock_low INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (product_id, option_key)
);

CREATE INDEX IF NOT EXISTS product_variants_product ON product_variants (product_id, position, id);
-- The few inactive variants (0018): an option filter tells their values apart through it.
CREATE INDEX IF NOT EXISTS product_variants_inactive ON product_variants (id) WHERE active = 0;

CREATE TABLE IF NOT EXISTS variant_option_values (
    variant_id TEXT NOT NULL REFERENCES product_variants (id) ON DELETE CASCADE,
    product_id TEXT NOT NULL,
    name TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (variant_id, name)
);

-- The option filters' and facets' lookup, with the variant (0018): no row read per match.
CREATE INDEX IF NOT EXISTS variant_option_values_lookup
    ON variant_option_values (name, value, product_id, variant_id);
-- 0036: a second option of the same variant, tested in the index.
CREATE INDEX IF NOT EXISTS variant_option_values_variant
    ON variant_option_values (variant_id, name, value);

-- The facets' counts (0027): products per state, category ('' for none) and price band's
-- lower end (facet_bands, the bands of shop/catalogue/facet_counts.py), and per option value
-- of an active variant; kept by the triggers of schema.<engine>.sql, recounted by every
-- `flask db upgrade`.
CREATE TABLE IF NOT EXISTS facet_bands (
    low BIGINT PRIMARY KEY
);

INSERT INTO facet_bands (low) VALUES (0), (1000), (2500), (5000), (10000), (25000)
ON CONFLICT DO NOTHING;

CREATE TABLE IF NOT EXISTS facet_prices (
    active INTEGER NOT NULL,
    category_id TEXT NOT NULL,
    low BIGINT NOT NULL,
    n BIGINT NOT NULL,
    PRIMARY KEY (active, category_id, low)
);

CREATE TABLE IF NOT EXISTS facet_options (
    active INTEGER NOT NULL,
    category_id TEXT NOT NULL,
    name TEXT NOT NULL,
    value TEXT NOT NULL,
    n BIGINT NOT NULL,
    PRIMARY KEY (active, category_id, name, value)
);

CREATE TABLE IF NOT EXISTS collections (
    id TEXT PRIMARY KEY,
    title TEXT NOT NULL,
    slug TEXT NOT NULL UNIQUE,
    description TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);

CREATE INDEX IF NOT EXISTS collections_title ON collections (title, id);

CREATE TABLE IF NOT EXISTS collection_products (
    collection_id TEXT NOT NULL REFERENCES collections (id) ON DELETE CASCADE,
    product_id TEXT NOT NULL REFERENCES products (id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    product_active INTEGER,
    product_created_at TEXT,
    product_price_cents BIGINT,
    product_name TEXT,
    PRIMARY KEY (collection_id, product_id)
);

CREATE INDEX IF NOT EXISTS collection_products_product_id ON collection_products (product_id);
CREATE INDEX IF NOT EXISTS collection_products_position
    ON collection_products (collection_id, position);
-- 0039: the product's state and sort keys (product_*, kept by the triggers of
-- schema.<engine>.sql): a collection's page by any sort but updated_at is one index range.
CREATE INDEX IF NOT EXISTS collection_products_created
    ON collection_products (collection_id, product_active, product_created_at, product_id);
CREATE INDEX IF NOT EXISTS collection_products_price
    ON collection_products (collection_id, product_active, product_price_cents, product_id);
CREATE INDEX IF NOT EXISTS collection_products_name
    ON collection_products (collection_id, product_active, product_name, product_id);

-- 0039: a row per product and option value an active variant of it has (what
-- `?option.<name>=<value>` matches), with the product's state and sort keys, kept by the
-- triggers of schema.<engine>.sql: an option's page is one range of an index.
CREATE TABLE IF NOT EXISTS option_products (
    name TEXT NOT NULL,
    value TEXT NOT NULL,
    product_id TEXT NOT NULL REFERENCES products (id) ON DELETE CASCADE,
    product_active INTEGER NOT NULL,
    product_created_at TEXT NOT NULL,
    product_price_cents BIGINT NOT NULL,
    product_name TEXT NOT NULL,
    PRIMARY KEY (name, value, product_id)
);

CREATE INDEX IF NOT EXISTS option_products_product_values
    ON option_products (product_id, name, value);
CREATE INDEX IF NOT EXISTS option_products_created
    ON option_products (name, value, product_active, product_created_at, product_id);
CREATE INDEX IF NOT EXISTS option_products_price
    ON option_products (name, value, product_active, product_price_cents, product_id);
CREATE INDEX IF NOT EXISTS option_products_name
    ON option_products (name, value, product_active, product_name, product_id);

-- 0044: a row per product and pair of values of two names (name < other_name, in code point
-- order) that one active variant of it has (what `?option.Size=M&option.Colour=Red`
-- matches), with the product's state and sort keys, kept by the triggers of
-- schema.<engine>.sql: a page of two option values is one range of an index.
CREATE TABLE IF NOT EXISTS option_pairs (
    name TEXT NOT NULL,
    value TEXT NOT NULL,
    other_name TEXT NOT NULL,
    other_value TEXT NOT NULL,
    product_id TEXT NOT NULL REFERENCES products (id) ON DELETE CASCADE,
    product_active INTEGER NOT NULL,
    product_created_at TEXT NOT NULL,
    product_price_cents BIGINT NOT NULL,
    product_name TEXT NOT NULL,
    PRIMARY KEY (name, value, other_name, other_value, product_id)
);

CREATE INDEX IF NOT EXISTS option_pairs_product
    ON option_pairs (product_id, name, value, other_name, other_value);
CREATE INDEX IF NOT EXISTS option_pairs_created ON option_pairs
    (name, value, other_name, other_value, product_active, product_created_at, product_id);
CREATE INDEX IF NOT EXISTS option_pairs_price ON option_pairs
    (name, value, other_name, other_value, product_active, product_price_cents, product_id);
CREATE INDEX IF NOT EXISTS option_pairs_name ON option_pairs
    (name, value, other_name, other_value, product_active, product_name, product_id);

-- Product images (stored in the database; docs/catalogue-and-content.md says why) ------

CREATE TABLE IF NOT EXISTS product_images (
    id TEXT PRIMARY KEY,
    product_id TEXT NOT NULL REFERENCES products (id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    alt TEXT NOT NULL DEFAULT '',
    content_type TEXT NOT NULL,
    width INTEGER NOT NULL,
    height INTEGER NOT NULL,
    bytes INTEGER NOT NULL,
    sha256 TEXT NOT NULL,
    data BYTEA,  -- NULL: in SHOP_IMAGE_DIR, named by sha256
    created_at TEXT NOT NULL
);

CREATE INDEX IF NOT EXISTS product_images_product ON product_images (product_id, position);

CREATE TABLE IF NOT EXISTS product_image_sizes (
    image_id TEXT NOT NULL REFERENCES product_images (id) ON DELETE CASCADE,
    width INTEGER NOT NULL,
    content_type TEXT NOT NULL,
    height INTEGER NOT NULL,
    bytes INTEGER NOT NULL,
    sha256 TEXT NOT NULL,
    data BYTEA,  -- NULL: in SHOP_IMAGE_DIR, named by sha256
    PRIMARY KEY (image_id, width)
);

-- Content registry ------------------------------------------------------------------------

CREATE TABLE IF NOT EXISTS content_entries (
    key TEXT PRIMARY KEY,
    type TEXT NOT NULL,
    data TEXT NOT NULL,
    published INTEGER NOT NULL DEFAULT 0,
    checksum TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);

CREATE INDEX IF NOT EXISTS content_entries_type ON content_entries (type, key);

-- Settings: one row per key, the value as JSON ---------------------------------------------

CREATE TABLE IF NOT EXISTS settings (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL,
    updated_at TEXT NOT NULL
);

-- Orders and payments ---------------------------------------------------------------------
-- counters holds the unfiltered lists' totals (rows products, products_active, orders),
-- kept by the writes and recounted by every `flask db upgrade` (shop/totals.py); the orders
-- row counts the orders created up to counted_to (checkout does not write it), and the row
-- order_number the numbers given before 0017. An order's seq is its number's integer: from
-- the sequence order_numbers on PostgreSQL, the highest seq plus one on SQLite
-- (shop/services/checkout.py). The orders of an erased customer stay, with shipping_address set to NULL.
-- restocked_at marks the one time a cancelled or refunded order put its stock back.

CREATE TABLE IF NOT EXISTS counters (
    name TEXT PRIMARY KEY,
    value BIGINT NOT NULL,
    counted_to TEXT
);

CREATE TABLE IF NOT EXISTS orders (
    id TEXT PRIMARY KEY,
    number TEXT NOT NULL UNIQUE,
    customer_id TEXT REFERENCES customers (id),
    status TEXT NOT NULL,
    subtotal_cents BIGINT NOT NULL,
    total_cents BIGINT NOT NULL,
    currency TEXT NOT NULL,
    shipping_address TEXT,
    restocked_at TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    discount_cents BIGINT NOT NULL DEFAULT 0,
    shipping_cents BIGINT NOT NULL DEFAULT 0,
    tax_cents BIGINT NOT NULL DEFAULT 0,
    pricing TEXT,
    discount_id TEXT,
    refunded_cents BIGINT NOT NULL DEFAULT 0,
    seq BIGINT,
    -- 0025: a guest's order (customer_id NULL) belongs to guest_email; token_hash is the
    -- SHA-256 of the token its holder reads it with (shop/orders/guests.py).
    guest_email TEXT,
    token_hash TEXT,
    payment_status TEXT NOT NULL DEFAULT 'pending',
    fulfillment_status TEXT NOT NULL DEFAULT 'unfulfilled',
    -- 0034: order edits (docs/orders.md, "Editing an order"): what the customer owes since
    -- an edit raised a paid order's total, and the part of refunded_cents edits gave back.
    balance_due_cents BIGINT NOT NULL DEFAULT 0,
    edit_refunded_cents BIGINT NOT NULL DEFAULT 0,
    -- 0038: the SHA-256 of the balance pay link's token (shop/orders/balance_link.py).
    balance_token_hash TEXT,
    -- 0040: the part of the total a credit paid (a draft's: an exchange), never refunded as
    -- money (docs/payments.md, "Orders paid with credit").
    credit_cents BIGINT NOT NULL DEFAULT 0
);

CREATE INDEX IF NOT EXISTS orders_customer_created ON orders (customer_id, created_at, id);
CREATE INDEX IF NOT EXISTS orders_created_at ON orders (created_at, id);
CREATE INDEX IF NOT EXISTS orders_updated_at ON orders (updated_at, id);
CREATE INDEX IF NOT EXISTS orders_status_created ON orders (status, created_at, id);
CREATE INDEX IF NOT EXISTS orders_discount_customer ON orders (discount_id, customer_id);
CREATE UNIQUE INDEX IF NOT EXISTS orders_seq ON orders (seq);
CREATE INDEX IF NOT EXISTS orders_payment_status_created ON orders (payment_status, created_at, id);
CREATE INDEX IF NOT EXISTS orders_fulfillment_status_created
    ON orders (fulfillment_status, created_at, id);
CREATE INDEX IF NOT EXISTS orders_guest_email ON orders (guest_email);

CREATE TABLE IF NOT EXISTS order_items (
    order_id TEXT NOT NULL REFERENCES orders (id) ON DELETE CASCADE,
    line INTEGER NOT NULL,
    product_id TEXT,
    name TEXT NOT NULL,
    sku TEXT,
    unit_price_cents BIGINT NOT NULL,
    quantity INTEGER NOT NULL,
    line_total_cents BIGINT NOT NULL,
    variant_id TEXT,
    options TEXT,
    discount_cents BIGINT NOT NULL DEFAULT 0,
    tax_cents BIGINT NOT NULL DEFAULT 0,
    tax_rate TEXT,
    total_cents BIGINT,
    PRIMARY KEY (order_id, line)
);

CREATE TABLE IF NOT EXISTS order_status_history (
    id TEXT PRIMARY KEY,
    order_id TEXT NOT NULL REFERENCES orders (id) ON DELETE CASCADE,
    status TEXT NOT NULL,
    note TEXT,
    at TEXT NOT NULL,
    by_kind TEXT,
    by_id TEXT,
    by_label TEXT
);

CREATE INDEX IF NOT EXISTS order_status_history_order ON order_status_history (order_id, at);

CREATE TABLE IF NOT EXISTS payments (
    id TEXT PRIMARY KEY,
    order_id TEXT NOT NULL UNIQUE REFERENCES orders (id) ON DELETE CASCADE,
    provider TEXT NOT NULL,
    amount_cents BIGINT NOT NULL,
    status TEXT NOT NULL,
    reference TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    note TEXT,
    -- NULL, 'due', 'cancelled' or 'succeeded': the intent of a cancelled card order (0023)
    provider_cancel TEXT
);

CREATE INDEX IF NOT EXISTS payments_cancel_due ON payments (updated_at, id)
    WHERE provider_cancel = 'due' AND reference <> '';

-- Stripe events (each id once) and refunds (issue 27, migration 0014).
CREATE TABLE IF NOT EXISTS stripe_events (
    id TEXT PRIMARY KEY,
    type TEXT NOT NULL,
    order_id TEXT,
    received_at TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS refunds (
    id TEXT PRIMARY KEY,
    order_id TEXT NOT NULL REFERENCES orders (id) ON DELETE CASCADE,
    amount_cents BIGINT NOT NULL CHECK (amount_cents >= 0),
    currency TEXT NOT NULL,
    lines TEXT NOT NULL DEFAULT '[]',
    shipping INTEGER NOT NULL DEFAULT 0,
    restock TEXT NOT NULL DEFAULT '[]',
    reason TEXT,
    provider TEXT NOT NULL,
    reference TEXT,
    status TEXT NOT NULL,
    idempotency_key TEXT,
    request_hash TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    by_kind TEXT,
    by_id TEXT,
    by_label TEXT,
    failure_reason TEXT,
    edit_id TEXT,
    -- 0038: a card refund split over the order's intents, [{"intent", "amount_cents",
    -- "reference"}] (NULL: all of the first intent).
    parts TEXT,
    -- 0040: the credit share of what a money refund took back, not paid out.
    credit_cents BIGINT NOT NULL DEFAULT 0
);

CREATE INDEX IF NOT EXISTS refunds_order ON refunds (order_id, created_at);
CREATE UNIQUE INDEX IF NOT EXISTS refunds_order_key ON refunds (order_id, idempotency_key);
CREATE UNIQUE INDEX IF NOT EXISTS refunds_reference ON refunds (reference);

CREATE TABLE IF NOT EXISTS idempotency_keys (
    customer_id TEXT NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
    key TEXT NOT NULL,
    request_hash TEXT NOT NULL,
    order_id TEXT NOT NULL REFERENCES orders (id) ON DELETE CASCADE,
    created_at TEXT NOT NULL,
    PRIMARY KEY (customer_id, key)
);

-- A customer's address book (migration 0028): at most one default of each kind per customer.
CREATE TABLE IF NOT EXISTS customer_addresses (
    id TEXT PRIMARY KEY,
    customer_id TEXT NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    line1 TEXT NOT NULL,
    line2 TEXT,
    city TEXT NOT NULL,
    postal_code TEXT NOT NULL,
    country TEXT NOT NULL,
    region TEXT,
    default_shipping INTEGER NOT NULL DEFAULT 0,
    default_billing INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);

CREATE INDEX IF NOT EXISTS customer_addresses_customer
    ON customer_addresses (customer_id, created_at, id);
CREATE UNIQUE INDEX IF NOT EXISTS customer_addresses_default_shipping
    ON customer_addresses (customer_id) WHERE default_shipping = 1;
CREATE UNIQUE INDEX IF NOT EXISTS customer_addresses_default_billing
    ON customer_addresses (customer_id) WHERE default_billing = 1;

-- Webhooks (migration 0003) --------------------------------------------------------------
CREATE TABLE IF NOT EXISTS webhooks (
    id TEXT PRIMARY KEY,
    url TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    secret TEXT NOT NULL,
    previous_secret TEXT,
    previous_secret_expires_at TEXT,
    enabled INTEGER NOT NULL DEFAULT 1,
    disabled_reason TEXT,
    disabled_at TEXT,
    owner_id TEXT REFERENCES users (id) ON DELETE SET NULL,
    key_id TEXT REFERENCES api_keys (id) ON DELETE SET NULL,
    created_with TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    last_success_at TEXT,
    failing_since TEXT,
    -- made with a key: that key's scopes then, which bound the owner's rights (0005)
    scopes TEXT
);

CREATE INDEX IF NOT EXISTS webhooks_created_at ON webhooks (created_at, id);

CREATE TABLE IF NOT EXISTS webhook_subscriptions (
    webhook_id TEXT NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    event TEXT NOT NULL,
    PRIMARY KEY (webhook_id, event)
);

CREATE INDEX IF NOT EXISTS webhook_subscriptions_event ON webhook_subscriptions (event);

CREATE TABLE IF NOT EXISTS webhook_events (
    id TEXT PRIMARY KEY,
    type TEXT NOT NULL,
    subject_id TEXT,
    payload TEXT NOT NULL,
    created_at TEXT NOT NULL
);

CREATE INDEX IF NOT EXISTS webhook_events_type_subject ON webhook_events (type, subject_id);

CREATE TABLE IF NOT EXISTS webhook_deliveries (
    id TEXT PRIMARY KEY,
    webhook_id TEXT NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    event_id TEXT NOT NULL REFERENCES webhook_events (id) ON DELETE CASCADE,
    event_type TEXT NOT NULL,
    status TEXT NOT NULL,
    scheduled_attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);

CREATE INDEX IF NOT EXISTS webhook_deliveries_due ON webhook_deliveries (next_attempt_at);
CREATE INDEX IF NOT EXISTS webhook_deliveries_webhook
    ON webhook_deliveries (webhook_id, created_at, id);
CREATE INDEX IF NOT EXISTS webhook_deliveries_webhook_updated
    ON webhook_deliveries (webhook_id, updated_at, id);
CREATE INDEX IF NOT EXISTS webhook_deliveries_event ON webhook_deliveries (event_id);

CREATE TABLE IF NOT EXISTS webhook_attempts (
    id TEXT PRIMARY KEY,
    delivery_id TEXT NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
    at TEXT NOT NULL,
    kind TEXT NOT NULL,
    status_code INTEGER,
    duration_ms INTEGER NOT NULL,
    response_excerpt TEXT,
    error TEXT
);

CREATE INDEX IF NOT EXISTS webhook_attempts_delivery ON webhook_attempts (delivery_id, at);

-- Pings and replays queued for the worker (migration 0011): one attempt asked for and not
-- yet made; its id becomes the attempt's. due_at: when the worker may take it, then its
-- lease's token.
CREATE TABLE IF NOT EXISTS webhook_requests (
    id TEXT PRIMARY KEY,
    delivery_id TEXT NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
    kind TEXT NOT NULL,
    requested_at TEXT NOT NULL,
    due_at TEXT NOT NULL
);

CREATE INDEX IF NOT EXISTS webhook_requests_due ON webhook_requests (due_at);
CREATE INDEX IF NOT EXISTS webhook_requests_delivery ON webhook_requests (delivery_id);

-- Account protection (migration 0004) -----------------------------------------------------
-- Two-factor sign-in of administrators: the TOTP secret (needed in clear to check codes),
-- enabled once confirmed; last_step is the last time step accepted, so no code works twice.

CREATE TABLE IF NOT EXISTS user_two_factor (
    user_id TEXT PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    secret TEXT NOT NULL,
    created_at TEXT NOT NULL,
    enabled_at TEXT,
    last_step BIGINT NOT NULL DEFAULT 0
);

-- Recovery codes: only their SHA-256; each works once.
CREATE TABLE IF NOT EXISTS user_recovery_codes (
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    code_hash TEXT NOT NULL,
    used_at TEXT,
    PRIMARY KEY (user_id, code_hash)
);

-- The console's second sign-in step: the SHA-256 of the browser's sign-in cookie, for whom
-- the password was right, until when.
CREATE TABLE IF NOT EXISTS two_factor_challenges (
    token_hash TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    expires_at TEXT NOT NULL
);

-- Password reset tokens: only their SHA-256; kind is 'admin' or 'customer'.
CREATE TABLE IF NOT EXISTS password_resets (
    id TEXT PRIMARY KEY,
    token_hash TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL,
    holder_id TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    used_at TEXT
);

CREATE INDEX IF NOT EXISTS password_resets_holder ON password_resets (kind, holder_id, created_at);

-- Mail waiting for the worker (shop/mail.py), written in the transaction that causes it.
-- next_attempt_at is NULL once sent or given up; the bodies are blanked once sent.
CREATE TABLE IF NOT EXISTS mail_outbox (
    id TEXT PRIMARY KEY,
    recipient TEXT NOT NULL,
    subject TEXT NOT NULL,
    text_body TEXT NOT NULL,
    html_body TEXT,
    created_at TEXT NOT NULL,
    next_attempt_at TEXT,
    attempts INTEGER NOT NULL DEFAULT 0,
    sent_at TEXT,
    failed_at TEXT,
    last_error TEXT,
    -- 0030: an attachment by reference, drawn when sent (`invoice:<order id>`).
    attachment TEXT,
    -- 0036: bodies rendered when sent from a template and its frozen context (JSON).
    template TEXT,
    context TEXT
);

CREATE INDEX IF NOT EXISTS mail_outbox_next_attempt_at ON mail_outbox (next_attempt_at);

-- 0009: product search (shop/services/search.py). The index itself differs per engine and
-- lives in schema.sqlite.sql / schema.postgresql.sql; this row says how it was built, so
-- `flask db upgrade` rebuilds it when the code's definition (or the language) changes.
CREATE TABLE IF NOT EXISTS search_index (
    name TEXT PRIMARY KEY,
    definition TEXT NOT NULL,
    built_at TEXT NOT NULL
);

-- Sync by change time (GET /products?updated_after=..., sort=updated_at).
CREATE INDEX IF NOT EXISTS products_updated ON products (updated_at, id);

-- Out of stock (0016): a partial index, only of those products (GET /products?in_stock=false).
CREATE INDEX IF NOT EXISTS products_out_of_stock ON products (active, created_at, id)
    WHERE stock = 0;
-- In stock (0018): the same for the products in stock, so that `in_stock=true`'s capped
-- total is counted in an index.
CREATE INDEX IF NOT EXISTS products_in_stock ON products (active, created_at, id)
    WHERE stock > 0;

-- Pricing (migration 0010): shipping methods, tax rates and discount codes. An order that
-- used a code holds its discount_id (no foreign key: the order keeps it if the code goes);
-- discounts.times_used counts those not cancelled.

CREATE TABLE IF NOT EXISTS shipping_methods (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    countries TEXT NOT NULL DEFAULT '[]',
    price_cents BIGINT NOT NULL CHECK (price_cents >= 0),
    free_over_cents BIGINT CHECK (free_over_cents >= 0),
    weight_bands TEXT NOT NULL DEFAULT '[]',
    tax_class TEXT NOT NULL DEFAULT 'standard',
    active INTEGER NOT NULL DEFAULT 1,
    position INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);

CREATE INDEX IF NOT EXISTS shipping_methods_position ON shipping_methods (position, name, id);

CREATE TABLE IF NOT EXISTS tax_rates (
    id TEXT PRIMARY KEY,
    country TEXT NOT NULL,
    region TEXT NOT NULL DEFAULT '',
    tax_class TEXT NOT NULL DEFAULT 'standard',
    rate TEXT NOT NULL,
    name TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (country, region, tax_class)
);

CREATE TABLE IF NOT EXISTS discounts (
    id TEXT PRIMARY KEY,
    code TEXT NOT NULL,
    code_key TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL,
    value TEXT NOT NULL,
    min_subtotal_cents BIGINT,
    starts_at TEXT,
    ends_at TEXT,
    usage_limit BIGINT,
    once_per_customer INTEGER NOT NULL DEFAULT 0,
    product_ids TEXT NOT NULL DEFAULT '[]',
    category_ids TEXT NOT NULL DEFAULT '[]',
    active INTEGER NOT NULL DEFAULT 1,
    times_used BIGINT NOT NULL DEFAULT 0 CHECK (times_used >= 0),
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);

CREATE INDEX IF NOT EXISTS discounts_created ON discounts (created_at, id);

-- Shipments (migration 0015): what left for an order, by which carrier and tracking number,
-- and how many units of which lines; a line's shipped quantity is the sum of its rows.
CREATE TABLE IF NOT EXISTS shipments (
    id TEXT PRIMARY KEY,
    order_id TEXT NOT NULL REFERENCES orders (id) ON DELETE CASCADE,
    carrier TEXT NOT NULL,
    tracking_number TEXT NOT NULL,
    tracking_url TEXT,
    created_at TEXT NOT NULL,
    by_kind TEXT,
    by_id TEXT,
    by_label TEXT
);

CREATE INDEX IF NOT EXISTS shipments_order ON shipments (order_id, created_at, id);

-- Staff-only notes on an order (issue 37, the console's order page): never in the order's
-- JSON, its events or its mails.
CREATE TABLE IF NOT EXISTS order_notes (
    id TEXT PRIMARY KEY,
    order_id TEXT NOT NULL REFERENCES orders (id) ON DELETE CASCADE,
    body TEXT NOT NULL,
    created_at TEXT NOT NULL,
    by_id TEXT,
    by_label TEXT
);

CREATE INDEX IF NOT EXISTS order_notes_order ON order_notes (order_id, created_at, id);

CREATE TABLE IF NOT EXISTS shipment_lines (
    shipment_id TEXT NOT NULL REFERENCES shipments (id) ON DELETE CASCADE,
    order_id TEXT NOT NULL REFERENCES orders (id) ON DELETE CASCADE,
    line INTEGER NOT NULL,
    quantity INTEGER NOT NULL CHECK (quantity > 0),
    PRIMARY KEY (shipment_id, line)
);

CREATE INDEX IF NOT EXISTS shipment_lines_order ON shipment_lines (order_id, line);

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
    order_id TEXT NOT NULL REFERENCES orders (id) ON DELETE CASCADE,
    number TEXT NOT NULL UNIQUE,
    issued_at TEXT NOT NULL,
    customer_id TEXT,
    currency TEXT NOT NULL,
    total_cents BIGINT NOT NULL,
    snapshot TEXT NOT NULL,
    -- 0034: an edit credits the order's invoice and issues a new one; one current per order.
    superseded_at TEXT,
    -- 0052: the PDF as made once (by the worker after issue, or the first download); NULL
    -- until then. Never read by a list (docs/invoicing.md, "The kept PDF").
    pdf BYTEA
);

CREATE INDEX IF NOT EXISTS invoices_issued ON invoices (issued_at, id);
CREATE UNIQUE INDEX IF NOT EXISTS invoices_current ON invoices (order_id) WHERE superseded_at IS NULL;

CREATE TABLE IF NOT EXISTS credit_notes (
    id TEXT PRIMARY KEY,
    refund_id TEXT UNIQUE REFERENCES refunds (id) ON DELETE CASCADE,
    order_id TEXT NOT NULL REFERENCES orders (id) ON DELETE CASCADE,
    invoice_id TEXT NOT NULL REFERENCES invoices (id) ON DELETE CASCADE,
    number TEXT NOT NULL UNIQUE,
    issued_at TEXT NOT NULL,
    currency TEXT NOT NULL,
    total_cents BIGINT NOT NULL,
    snapshot TEXT NOT NULL,
    -- 0034: a refund's credit note has refund_id, an edit's edit_id.
    edit_id TEXT,
    -- 0052: its PDF as made once, as invoices.pdf.
    pdf BYTEA
);

CREATE INDEX IF NOT EXISTS credit_notes_issued ON credit_notes (issued_at, id);
CREATE INDEX IF NOT EXISTS credit_notes_order ON credit_notes (order_id);
CREATE UNIQUE INDEX IF NOT EXISTS credit_notes_edit ON credit_notes (edit_id);
-- 0052: the documents whose PDF the worker has still to make, newest first.
CREATE INDEX IF NOT EXISTS invoices_unkept ON invoices (issued_at) WHERE pdf IS NULL;
CREATE INDEX IF NOT EXISTS credit_notes_unkept ON credit_notes (issued_at) WHERE pdf IS NULL;

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

-- 0025: e-mail verification tokens (only their SHA-256), shop/auth/email_verification.py.
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

-- 0032: returns (issue 41, shop/returns): units of an order's shipped lines its customer
-- sends back. A return moves requested -> approved -> received, or requested -> rejected;
-- its lines are the units asked for and, once received, the units that arrived. The refund
-- and restock of a received return are an ordinary refund (refund_id, docs/returns.md).
CREATE TABLE IF NOT EXISTS returns (
    id TEXT PRIMARY KEY,
    order_id TEXT NOT NULL REFERENCES orders (id) ON DELETE CASCADE,
    status TEXT NOT NULL,
    note TEXT,
    instructions TEXT,
    reject_reason TEXT,
    restock INTEGER NOT NULL DEFAULT 0,
    refund INTEGER NOT NULL DEFAULT 0,
    refund_id TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    decided_at TEXT,
    received_at TEXT,
    by_kind TEXT,
    by_id TEXT,
    by_label TEXT,
    exchange_draft_id TEXT
);

CREATE INDEX IF NOT EXISTS returns_order ON returns (order_id, created_at, id);
CREATE INDEX IF NOT EXISTS returns_created ON returns (created_at, id);
CREATE INDEX IF NOT EXISTS returns_status_created ON returns (status, created_at, id);

CREATE TABLE IF NOT EXISTS return_lines (
    return_id TEXT NOT NULL REFERENCES returns (id) ON DELETE CASCADE,
    order_id TEXT NOT NULL REFERENCES orders (id) ON DELETE CASCADE,
    line INTEGER NOT NULL,
    quantity INTEGER NOT NULL CHECK (quantity > 0),
    received INTEGER CHECK (received >= 0),
    reason TEXT,
    PRIMARY KEY (return_id, line)
);

CREATE INDEX IF NOT EXISTS return_lines_order ON return_lines (order_id, line);

-- Draft orders (issue 41, migration 0033) -----------------------------------------------

-- A draft order: an order staff prepare for a customer (customer_id) or for
-- an e-mail without an account (email), priced by the quote's function and taking no stock
-- until it is completed (order_id: the order it made; read-only from then on).
-- status: 'open' or 'completed'. credit_cents (with credit_note): value the customer has
-- already given (an exchange's returned goods), counted as paid when the order is made.
-- token_hash: the SHA-256 of the pay link's token (32 random bytes) mailed by send (sent_at).
CREATE TABLE IF NOT EXISTS draft_orders (
    id TEXT PRIMARY KEY,
    status TEXT NOT NULL DEFAULT 'open',
    customer_id TEXT REFERENCES customers (id) ON DELETE CASCADE,
    email TEXT,
    shipping_address TEXT NOT NULL,
    shipping_method_id TEXT,
    discount_code TEXT,
    note TEXT,
    credit_cents BIGINT NOT NULL DEFAULT 0 CHECK (credit_cents >= 0),
    credit_note TEXT,
    token_hash TEXT UNIQUE,
    sent_at TEXT,
    order_id TEXT REFERENCES orders (id) ON DELETE SET NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);

CREATE INDEX IF NOT EXISTS draft_orders_created ON draft_orders (created_at, id);
CREATE INDEX IF NOT EXISTS draft_orders_customer ON draft_orders (customer_id);

-- A draft's lines, in order (line 1, 2, ...); one line per variant.
CREATE TABLE IF NOT EXISTS draft_order_lines (
    draft_id TEXT NOT NULL REFERENCES draft_orders (id) ON DELETE CASCADE,
    line INTEGER NOT NULL,
    variant_id TEXT NOT NULL REFERENCES product_variants (id) ON DELETE CASCADE,
    quantity INTEGER NOT NULL CHECK (quantity > 0),
    PRIMARY KEY (draft_id, line),
    UNIQUE (draft_id, variant_id)
);

CREATE INDEX IF NOT EXISTS draft_order_lines_variant ON draft_order_lines (variant_id);

-- 0034: order edits (docs/orders.md, "Editing an order"): what each edit changed, the
-- totals before and after, its refund and the balance it left; an Idempotency-Key replays it.
CREATE TABLE IF NOT EXISTS order_edits (
    id TEXT PRIMARY KEY,
    order_id TEXT NOT NULL REFERENCES orders (id) ON DELETE CASCADE,
    changes TEXT NOT NULL,
    note TEXT,
    before_totals TEXT NOT NULL,
    after_totals TEXT NOT NULL,
    refund_id TEXT,
    balance_due_cents BIGINT NOT NULL DEFAULT 0,
    idempotency_key TEXT,
    request_hash TEXT,
    created_at TEXT NOT NULL,
    by_kind TEXT,
    by_id TEXT,
    by_label TEXT
);

CREATE INDEX IF NOT EXISTS order_edits_order ON order_edits (order_id, created_at, id);
CREATE UNIQUE INDEX IF NOT EXISTS order_edits_order_key ON order_edits (order_id, idempotency_key);

-- 0038: a card order's balance collected by a pay link (docs/orders.md, "Collecting a
-- balance"): one row per PaymentIntent asked for a balance; the webhook lowers the balance
-- once per intent.
CREATE TABLE IF NOT EXISTS balance_payments (
    id TEXT PRIMARY KEY,
    order_id TEXT NOT NULL REFERENCES orders (id) ON DELETE CASCADE,
    amount_cents BIGINT NOT NULL CHECK (amount_cents > 0),
    currency TEXT NOT NULL,
    reference TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL,
    received_cents BIGINT NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);

CREATE INDEX IF NOT EXISTS balance_payments_order ON balance_payments (order_id, created_at);
CREATE UNIQUE INDEX IF NOT EXISTS balance_payments_reference ON balance_payments (reference)
    WHERE reference <> '';
CREATE UNIQUE INDEX IF NOT EXISTS orders_balance_token ON orders (balance_token_hash);
