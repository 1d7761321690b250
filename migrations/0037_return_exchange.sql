-- 0037: a received return exchanged for a draft order (issue 41, docs/returns.md
-- "Exchanges"): the draft made with the return's value as its credit, so a replay of the
-- exchange answers that same draft.
ALTER TABLE returns ADD COLUMN exchange_draft_id TEXT;
