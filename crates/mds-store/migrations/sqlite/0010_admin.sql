-- The admin API (contract section 9; issue 16): admin tokens, the audit
-- log and idempotency keys.
--
-- `admin_tokens`: only the SHA-256 of a token is stored (hex), never the
-- token; `prefix` (its first 18 characters) finds it. A revoked token keeps
-- its row (the audit log names it); its name may then be given to a new
-- token: names are unique among the tokens not revoked.
--
-- `audit_log`: one row per change made through the admin API or the CLI,
-- written in the transaction of the change. `id` orders it (newest last);
-- `actor` is `cli` or an admin token's name; `before_json` / `after_json`
-- are the changed record as JSON (NULL when it did not exist).
CREATE TABLE admin_tokens (
    id         INTEGER PRIMARY KEY,
    name       TEXT NOT NULL,
    prefix     TEXT NOT NULL UNIQUE,
    hash_hex   TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL,
    revoked_at TEXT
);

CREATE UNIQUE INDEX admin_tokens_active_name ON admin_tokens (name) WHERE revoked_at IS NULL;

CREATE TABLE audit_log (
    id          INTEGER PRIMARY KEY,
    at          TEXT NOT NULL,
    actor       TEXT NOT NULL,
    action      TEXT NOT NULL,
    target      TEXT NOT NULL,
    before_json TEXT,
    after_json  TEXT
);

-- `idempotency_keys`: the `POST`s made with an `Idempotency-Key`, kept 24 h.
-- `key_hash` names the claim (SHA-256 of the token's name and the key, so
-- the key is not stored); `fingerprint` is a SHA-256 of the request;
-- `status` and `body` are its answer (NULL while it runs), the body
-- encrypted with a keystream only the Idempotency-Key derives.
CREATE TABLE idempotency_keys (
    key_hash    TEXT PRIMARY KEY,
    fingerprint TEXT NOT NULL,
    status      INTEGER,
    body        TEXT,
    created_at  TEXT NOT NULL
);

CREATE INDEX idempotency_keys_created_at ON idempotency_keys (created_at);
