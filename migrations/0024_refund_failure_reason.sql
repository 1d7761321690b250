-- 0024: why Stripe refused a refund (its code and message), as Stripe's own Refund object
-- has a failure_reason; NULL for every refund that did not fail. A refused refund is
-- `failed` and its amount is no longer reserved (docs/payments.md, "When Stripe says no").
ALTER TABLE refunds ADD COLUMN failure_reason TEXT;
