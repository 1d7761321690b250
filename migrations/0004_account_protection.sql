-- 0004: account protection (issue 16): two-factor sign-in, recovery codes, the console's
-- second sign-in step, password reset tokens and the mail outbox. New tables only.
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
    last_error TEXT
);

CREATE INDEX IF NOT EXISTS mail_outbox_next_attempt_at ON mail_outbox (next_attempt_at);
