-- The admin API (contract section 9; issue 16): admin tokens, the audit
-- log and idempotency keys. The tables of migrations/sqlite/0010_admin.sql, TEXT in `COLLATE "C"`.
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
    id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name       TEXT COLLATE "C" NOT NULL,
    prefix     TEXT COLLATE "C" NOT NULL UNIQUE,
    hash_hex   TEXT COLLATE "C" NOT NULL UNIQUE,
    created_at TEXT COLLATE "C" NOT NULL,
    revoked_at TEXT COLLATE "C"
);

CREATE UNIQUE INDEX admin_tokens_active_name ON admin_tokens (name) WHERE revoked_at IS NULL;

CREATE TABLE audit_log (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at          TEXT COLLATE "C" NOT NULL,
    actor       TEXT COLLATE "C" NOT NULL,
    action      TEXT COLLATE "C" NOT NULL,
    target      TEXT COLLATE "C" NOT NULL,
    before_json TEXT COLLATE "C",
    after_json  TEXT COLLATE "C"
);

-- `idempotency_keys`: the `POST`s made with an `Idempotency-Key`, kept 24 h.
-- `key_hash` names the claim (SHA-256 of the token's name and the key, so
-- the key is not stored); `fingerprint` is a SHA-256 of the request;
-- `status` and `body` are its answer (NULL while it runs), the body
-- encrypted with a keystream only the Idempotency-Key derives.
CREATE TABLE idempotency_keys (
    key_hash    TEXT COLLATE "C" PRIMARY KEY,
    fingerprint TEXT COLLATE "C" NOT NULL,
    status      BIGINT,
    body        TEXT COLLATE "C",
    created_at  TEXT COLLATE "C" NOT NULL
);

CREATE INDEX idempotency_keys_created_at ON idempotency_keys (created_at);
