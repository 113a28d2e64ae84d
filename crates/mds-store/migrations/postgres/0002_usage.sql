-- Usage counting, quota history and per-kind change counters, on PostgreSQL:
-- the tables, columns and data steps of migrations/sqlite/0002_usage.sql,
-- adapted as in 0001 (SQLite's INTEGER is BIGINT here, booleans are BOOLEAN,
-- ids are identities, TEXT is `COLLATE "C"`).

-- 1. Change counters, one per kind of cached data, in `meta` as decimal text:
-- `generation_companies` (company upserts), `generation_news` (article
-- upserts) and `generation_auth` (tiers, accounts, keys). They replace the
-- single `generation` of 0001, whose value each of them continues from, plus
-- one, so that no counter reads the same as before the upgrade. The old row is
-- removed: a node of an older build still polling it then fails loudly (and
-- an older build refuses this schema on start) instead of silently never
-- seeing another change. On a new store there is no `generation` row yet and
-- nothing is inserted here; the seed of `migrate` adds the counters at 0.
INSERT INTO meta (key, value)
SELECT 'generation_companies', (CAST(value AS BIGINT) + 1)::text FROM meta WHERE key = 'generation';
INSERT INTO meta (key, value)
SELECT 'generation_news', (CAST(value AS BIGINT) + 1)::text FROM meta WHERE key = 'generation';
INSERT INTO meta (key, value)
SELECT 'generation_auth', (CAST(value AS BIGINT) + 1)::text FROM meta WHERE key = 'generation';
DELETE FROM meta WHERE key = 'generation';

-- 2. Every value a tier had, from when it took effect: one row per `set_tier`
-- call and per default tier seeded, in the same transaction. Read oldest first
-- (by `effective_from`, then `id`).
CREATE TABLE tier_history (
    id                    BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tier                  TEXT COLLATE "C" NOT NULL REFERENCES tiers (name),
    rate_limit_per_minute BIGINT NOT NULL CHECK (rate_limit_per_minute >= 0),
    monthly_quota         BIGINT NOT NULL CHECK (monthly_quota >= 0),
    effective_from        TEXT COLLATE "C" NOT NULL
);

CREATE INDEX tier_history_tier ON tier_history (tier, id);

-- Tiers that exist already: their current values, in force since long ago
-- (nothing older is known).
INSERT INTO tier_history (tier, rate_limit_per_minute, monthly_quota, effective_from)
SELECT name, rate_limit_per_minute, monthly_quota, '1970-01-01T00:00:00+00:00' FROM tiers ORDER BY name;

-- 3. Every entitlement an account had, from when it took effect: one row per
-- `create_account` (entitled) and per `set_account_entitled` call.
CREATE TABLE entitlement_history (
    id             BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    account_id     BIGINT NOT NULL REFERENCES accounts (id),
    entitled       BOOLEAN NOT NULL,
    effective_from TEXT COLLATE "C" NOT NULL
);

CREATE INDEX entitlement_history_account_id ON entitlement_history (account_id, id);

-- Accounts that exist already: their current entitlement, since creation.
INSERT INTO entitlement_history (account_id, entitled, effective_from)
SELECT id, entitled, created_at FROM accounts ORDER BY id;

-- 4. Requests counted per key and billing month (`year * 100 + month`).
CREATE TABLE usage_counts (
    key_id   BIGINT NOT NULL REFERENCES api_keys (id),
    month    BIGINT NOT NULL CHECK (month BETWEEN 100 AND 999912),
    requests BIGINT NOT NULL CHECK (requests >= 0),
    PRIMARY KEY (key_id, month)
);

-- 5. Ids of the usage batches applied, so a batch sent twice counts once.
-- Rows older than a week are pruned by `apply_usage` (hence the index).
CREATE TABLE usage_batches (
    id         TEXT COLLATE "C" PRIMARY KEY,
    applied_at TEXT COLLATE "C" NOT NULL
);

CREATE INDEX usage_batches_applied_at ON usage_batches (applied_at);
