-- The daily usage ledger: what each key did on each day (UTC) on each route,
-- requests counted against the quota and `304`s (free). `apply_usage` adds a
-- batch's days here and their sums to `usage_counts` in one transaction, so
-- a month's count is always the sum of its days.
--
-- Portable to PostgreSQL in the same way as 0001 (TEXT and INTEGER/BIGINT
-- only). `WITHOUT ROWID`: a row lives in its primary key's b-tree, so the
-- key is not stored twice (a table and an index).

-- 1. Route templates (`/v1/companies`), each stored once, so a ledger row
-- carries a small id rather than the text.
CREATE TABLE usage_routes (
    id       INTEGER PRIMARY KEY,
    template TEXT NOT NULL UNIQUE
);

-- 2. Requests and `304`s per key, day (`year * 10000 + month * 100 + day`)
-- and route.
CREATE TABLE usage_daily (
    key_id       INTEGER NOT NULL REFERENCES api_keys (id),
    day          INTEGER NOT NULL,
    route_id     INTEGER NOT NULL REFERENCES usage_routes (id),
    requests     BIGINT NOT NULL CHECK (requests >= 0),
    not_modified BIGINT NOT NULL CHECK (not_modified >= 0),
    PRIMARY KEY (key_id, day, route_id)
) WITHOUT ROWID;

-- 3. Counts made before this ledger existed have no day or route: each
-- month's count goes on the month's first day under the label
-- `unattributed` (not a route template), so the days still add up to the
-- month.
INSERT INTO usage_routes (template)
SELECT 'unattributed' WHERE EXISTS (SELECT 1 FROM usage_counts WHERE requests > 0);
INSERT INTO usage_daily (key_id, day, route_id, requests, not_modified)
SELECT c.key_id, c.month * 100 + 1, r.id, c.requests, 0
FROM usage_counts c JOIN usage_routes r ON r.template = 'unattributed'
WHERE c.requests > 0;
