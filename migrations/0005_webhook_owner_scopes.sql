-- 0005: a webhook belongs to a person (issue 22). A webhook made with an API key keeps that
-- key's scopes of the moment it was made, so it no longer depends on the key's later life
-- (rolled, expired, revoked); its rights are its owner's current permissions within them.
-- Expand only: one nullable column, which the previous release ignores. Webhooks made with a
-- key before this release get their key's scopes copied in.

ALTER TABLE webhooks ADD COLUMN scopes TEXT;

UPDATE webhooks SET scopes = (SELECT k.scopes FROM api_keys k WHERE k.id = webhooks.key_id)
WHERE created_with = 'api_key';
