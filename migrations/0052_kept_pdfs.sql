-- 0052 (issue 42): an issued document's PDF is made once and kept. `pdf` holds the bytes
-- every download and the e-mail attachment serve from then on, so an issued invoice or
-- credit note stays the same bytes even when a later release draws PDFs differently (GoBD's
-- immutability of an issued document; Stripe keeps its invoice PDFs the same way). NULL
-- until the worker draws it after issue (`flask jobs run`), or the first download does
-- (`UPDATE ... WHERE pdf IS NULL`): documents of earlier releases start NULL and are filled
-- the same way. The partial indexes are the worker's queue: the documents still to draw,
-- newest first. No list reads the column (docs/invoicing.md, "The kept PDF").
ALTER TABLE invoices ADD COLUMN pdf BYTEA;
ALTER TABLE credit_notes ADD COLUMN pdf BYTEA;
CREATE INDEX IF NOT EXISTS invoices_unkept ON invoices (issued_at) WHERE pdf IS NULL;
CREATE INDEX IF NOT EXISTS credit_notes_unkept ON credit_notes (issued_at) WHERE pdf IS NULL;
