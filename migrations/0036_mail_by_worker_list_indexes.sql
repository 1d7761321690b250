-- Issue 42: an order's e-mail is rendered by the worker when it is sent, from the template
-- named here and the snapshot of the order frozen at the event (JSON, shop/mail:
-- order_snapshot); text_body is then empty until it is sent. The context is blanked with
-- the bodies once sent.
ALTER TABLE mail_outbox ADD COLUMN template TEXT;
ALTER TABLE mail_outbox ADD COLUMN context TEXT;

-- Issue 42, the list filters that collect their matches first (a collection, options): each
-- match's sort keys and state read from an index instead of its row (docs/performance.md,
-- "List filters at 100k, continued"). products_keys: the match by id with active and the
-- sorts' columns but updated_at (changed by every edit; that sort reads rows);
-- variant_option_values_variant: a second option of the same variant tested in the index.
CREATE INDEX IF NOT EXISTS products_keys ON products (id, active, created_at, price_cents, name);
CREATE INDEX IF NOT EXISTS variant_option_values_variant
    ON variant_option_values (variant_id, name, value);
