-- The first schema of mds.
--
-- Kept portable to PostgreSQL (whose backend carries the same tables): TEXT
-- and INTEGER/BIGINT columns only; booleans as 0/1 with a CHECK; instants as
-- RFC 3339 text in UTC written by `mds_domain::time::format_utc` (one fixed
-- format, so lexical order is time order). `INTEGER PRIMARY KEY` is SQLite's
-- auto-assigned row id; PostgreSQL spells it `BIGINT GENERATED ALWAYS AS
-- IDENTITY`.

-- Store-wide values: `generation` (the change counter, as decimal text) and
-- `cursor_secret` (32 random bytes, lower-case hex).
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

CREATE TABLE tiers (
    name                  TEXT PRIMARY KEY,
    rate_limit_per_minute BIGINT NOT NULL CHECK (rate_limit_per_minute >= 0),
    monthly_quota         BIGINT NOT NULL CHECK (monthly_quota >= 0)
);

CREATE TABLE accounts (
    id         INTEGER PRIMARY KEY,
    name       TEXT NOT NULL UNIQUE,
    entitled   INTEGER NOT NULL CHECK (entitled IN (0, 1)),
    created_at TEXT NOT NULL
);

-- Only the SHA-256 of a key is stored (hex), never the key.
CREATE TABLE api_keys (
    id          INTEGER PRIMARY KEY,
    prefix      TEXT NOT NULL UNIQUE,
    hash_hex    TEXT NOT NULL UNIQUE,
    account_id  INTEGER NOT NULL REFERENCES accounts (id),
    tier        TEXT NOT NULL REFERENCES tiers (name),
    environment TEXT NOT NULL CHECK (environment IN ('live', 'test')),
    created_at  TEXT NOT NULL,
    revoked_at  TEXT
);

CREATE INDEX api_keys_account_id ON api_keys (account_id);
CREATE INDEX api_keys_tier ON api_keys (tier);

CREATE TABLE companies (
    isin            TEXT PRIMARY KEY,
    ticker          TEXT NOT NULL,
    name            TEXT NOT NULL,
    industry        TEXT,
    sector          TEXT,
    is_bse          INTEGER NOT NULL CHECK (is_bse IN (0, 1)),
    is_nse          INTEGER NOT NULL CHECK (is_nse IN (0, 1)),
    market_cap_band TEXT,
    logo_url        TEXT
);

-- The listing order of GET /v1/companies, and its keyset pagination.
CREATE INDEX companies_ticker_isin ON companies (ticker, isin);

CREATE TABLE articles (
    slug         TEXT PRIMARY KEY,
    headline     TEXT NOT NULL,
    subheadline  TEXT,
    excerpt      TEXT,
    body         TEXT,
    category     TEXT,
    -- JSON array of strings, in the order given; '[]' when there are none.
    tags_json    TEXT NOT NULL,
    isin         TEXT,
    ticker       TEXT,
    company_name TEXT,
    author_name  TEXT,
    hero_image   TEXT,
    url          TEXT,
    published_at TEXT,
    updated_at   TEXT
);
