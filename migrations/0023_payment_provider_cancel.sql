-- 0023 (issue 35): cancelling a card order cancels its PaymentIntent at Stripe, after the
-- cancel commits (never a network call inside a transaction). payments.provider_cancel says
-- where that stands: NULL nothing to cancel (not cancelled, or not a card payment), 'due'
-- the order is cancelled and its intent must be cancelled (done right after the commit,
-- retried by the worker while Stripe cannot be reached), 'cancelled' Stripe cancelled it,
-- 'succeeded' Stripe had taken the money first (left to the review path and reconcile),
-- 'refused' Stripe refused to cancel it (no such intent; never asked again).
-- Card orders cancelled before this release get 'due', so the worker cancels their intents
-- too: a client secret handed out for them could still be paid. Additive: the previous
-- release neither reads nor writes the column.

ALTER TABLE payments ADD COLUMN provider_cancel TEXT;

UPDATE payments SET provider_cancel = 'due'
    WHERE provider = 'stripe' AND reference <> ''
    AND order_id IN (SELECT id FROM orders WHERE status = 'cancelled');

CREATE INDEX IF NOT EXISTS payments_cancel_due ON payments (updated_at, id)
    WHERE provider_cancel = 'due' AND reference <> '';
