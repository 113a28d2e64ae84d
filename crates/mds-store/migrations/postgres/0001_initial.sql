-- The first schema of mds, on PostgreSQL: the tables and columns of
-- migrations/sqlite/0001_initial.sql, with the same encodings, so both
-- backends return the same results.
--
-- Instants are RFC 3339 text in UTC written by `mds_domain::time::format_utc`,
-- as on SQLite (not `timestamptz`, which keeps microseconds only). Booleans
-- are BOOLEAN; ids are `BIGINT GENERATED ALWAYS AS IDENTITY` (SQLite's
-- `INTEGER PRIMARY KEY`). Every TEXT column is `COLLATE "C"`: comparisons,
-- uniqueness and ORDER BY are by bytes, as with SQLite's BINARY collation,
-- whatever the database's default collation, and the indexes serve the
-- byte-ordered listings.

-- Store-wide values: `generation` (the change counter, as decimal text) and
-- `cursor_secret` (32 random bytes, lower-case hex).
CREATE TABLE meta (
    key   TEXT COLLATE "C" PRIMARY KEY,
    value TEXT COLLATE "C" NOT NULL
);

CREATE TABLE tiers (
    name                  TEXT COLLATE "C" PRIMARY KEY,
    rate_limit_per_minute BIGINT NOT NULL CHECK (rate_limit_per_minute >= 0),
    monthly_quota         BIGINT NOT NULL CHECK (monthly_quota >= 0)
);

CREATE TABLE accounts (
    id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name       TEXT COLLATE "C" NOT NULL UNIQUE,
    entitled   BOOLEAN NOT NULL,
    created_at TEXT COLLATE "C" NOT NULL
);

-- Only the SHA-256 of a key is stored (hex), never the key.
CREATE TABLE api_keys (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    prefix      TEXT COLLATE "C" NOT NULL UNIQUE,
    hash_hex    TEXT COLLATE "C" NOT NULL UNIQUE,
    account_id  BIGINT NOT NULL REFERENCES accounts (id),
    tier        TEXT COLLATE "C" NOT NULL REFERENCES tiers (name),
    environment TEXT COLLATE "C" NOT NULL CHECK (environment IN ('live', 'test')),
    created_at  TEXT COLLATE "C" NOT NULL,
    revoked_at  TEXT COLLATE "C"
);

CREATE INDEX api_keys_account_id ON api_keys (account_id);
CREATE INDEX api_keys_tier ON api_keys (tier);

CREATE TABLE companies (
    isin            TEXT COLLATE "C" PRIMARY KEY,
    ticker          TEXT COLLATE "C" NOT NULL,
    name            TEXT COLLATE "C" NOT NULL,
    industry        TEXT COLLATE "C",
    sector          TEXT COLLATE "C",
    is_bse          BOOLEAN NOT NULL,
    is_nse          BOOLEAN NOT NULL,
    market_cap_band TEXT COLLATE "C",
    logo_url        TEXT COLLATE "C"
);

-- The listing order of GET /v1/companies, and its keyset pagination.
CREATE INDEX companies_ticker_isin ON companies (ticker, isin);

CREATE TABLE articles (
    slug         TEXT COLLATE "C" PRIMARY KEY,
    headline     TEXT COLLATE "C" NOT NULL,
    subheadline  TEXT COLLATE "C",
    excerpt      TEXT COLLATE "C",
    body         TEXT COLLATE "C",
    category     TEXT COLLATE "C",
    -- JSON array of strings, in the order given; '[]' when there are none.
    tags_json    TEXT COLLATE "C" NOT NULL,
    isin         TEXT COLLATE "C",
    ticker       TEXT COLLATE "C",
    company_name TEXT COLLATE "C",
    author_name  TEXT COLLATE "C",
    hero_image   TEXT COLLATE "C",
    url          TEXT COLLATE "C",
    published_at TEXT COLLATE "C",
    updated_at   TEXT COLLATE "C"
);
