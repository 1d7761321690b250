-- 0028: a customer's address book (issue 38): saved shipping addresses, the checkout's fields,
-- with at most one default for shipping and one for billing per customer (the partial unique
-- indexes; setting one clears the previous default in the same transaction). Erasing the
-- customer deletes them; deleting the customer's row cascades.
CREATE TABLE customer_addresses (
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

CREATE INDEX customer_addresses_customer ON customer_addresses (customer_id, created_at, id);
CREATE UNIQUE INDEX customer_addresses_default_shipping ON customer_addresses (customer_id)
    WHERE default_shipping = 1;
CREATE UNIQUE INDEX customer_addresses_default_billing ON customer_addresses (customer_id)
    WHERE default_billing = 1;
