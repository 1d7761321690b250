-- Issue 42: an order's e-mail is rendered by the worker when it is sent, from the template
-- named here and the snapshot of the order frozen at the event (JSON, shop/mail:
-- order_snapshot); text_body is then empty until it is sent. The context is blanked with
-- the bodies once sent.
ALTER TABLE mail_outbox ADD COLUMN template TEXT;
ALTER TABLE mail_outbox ADD COLUMN context TEXT;
