-- End-of-day prices: the tables and meaning of
-- migrations/sqlite/0017_prices.sql (read it for what they hold).
--
-- `bars` is partitioned by range of `day`, one partition a calendar year
-- (`bars_y2025` holds 20250101 to 20251231). No partition is made here:
-- the write that first brings a day of a year makes that year's
-- (`CREATE TABLE … (LIKE bars INCLUDING ALL)` then `ATTACH PARTITION`,
-- which locks `bars` against other attaches only, not against reads), so
-- the table holds as many years as the data does. Written with `COPY`.
CREATE TABLE bars (
    day          BIGINT NOT NULL,
    isin         TEXT COLLATE "C" NOT NULL,
    series       TEXT COLLATE "C" NOT NULL,
    symbol       TEXT COLLATE "C" NOT NULL,
    isin_source  TEXT COLLATE "C" NOT NULL CHECK (isin_source IN ('file', 'symbol')),
    open         BIGINT NOT NULL,
    high         BIGINT NOT NULL,
    low          BIGINT NOT NULL,
    close        BIGINT NOT NULL,
    last         BIGINT,
    prev_close   BIGINT NOT NULL,
    volume       BIGINT NOT NULL,
    turnover     BIGINT NOT NULL,
    trades       BIGINT NOT NULL,
    delivery_qty BIGINT,
    delivery_pct BIGINT,
    PRIMARY KEY (day, isin, series)
) PARTITION BY RANGE (day);

CREATE INDEX bars_isin ON bars (isin, day);

CREATE TABLE bar_days (
    day  BIGINT NOT NULL PRIMARY KEY,
    bars BIGINT NOT NULL
);
