-- The daily usage ledger, on PostgreSQL: the tables, columns and data steps
-- of migrations/sqlite/0005_usage_daily.sql, adapted as in 0001 (SQLite's
-- INTEGER is BIGINT here, ids are identities, TEXT is `COLLATE "C"`; a
-- table here always has a row id, so `WITHOUT ROWID` has no counterpart).

-- 1. Route templates (`/v1/companies`), each stored once, so a ledger row
-- carries a small id rather than the text.
CREATE TABLE usage_routes (
    id       BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    template TEXT COLLATE "C" NOT NULL UNIQUE
);

-- 2. Requests and `304`s per key, day (`year * 10000 + month * 100 + day`)
-- and route.
CREATE TABLE usage_daily (
    key_id       BIGINT NOT NULL REFERENCES api_keys (id),
    day          BIGINT NOT NULL CHECK (day BETWEEN 10101 AND 99991231),
    route_id     BIGINT NOT NULL REFERENCES usage_routes (id),
    requests     BIGINT NOT NULL CHECK (requests >= 0),
    not_modified BIGINT NOT NULL CHECK (not_modified >= 0),
    PRIMARY KEY (key_id, day, route_id)
);

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
