-- End-of-day prices (contract section 14): NSE's daily bars, one row a
-- security, series and trading day, as published (never adjusted: the
-- adjustments are applied when reading, from the corporate actions).
--
-- `bars`: `day` is the trading day as the number YYYYMMDD (20250212), so a
-- day compares, sorts and partitions (PostgreSQL) as an integer; prices and
-- `turnover` are whole paise; `delivery_pct` is hundredths of a percent;
-- `last`, `delivery_qty` and `delivery_pct` are NULL when the day's files
-- do not have them. `symbol` is the NSE symbol the row was published under
-- (the key the two formats pair on, and what a symbol-keyed row was
-- resolved from); `isin_source` is `file` when the day's file named the
-- ISIN, `symbol` when it was resolved through the symbol's periods
-- (section 10). A day is always replaced whole, in one transaction.
-- `bar_days`: the days held, each with how many bars it holds, written in
-- the transaction that writes the day.
CREATE TABLE bars (
    day          BIGINT NOT NULL,
    isin         TEXT NOT NULL,
    series       TEXT NOT NULL,
    symbol       TEXT NOT NULL,
    isin_source  TEXT NOT NULL CHECK (isin_source IN ('file', 'symbol')),
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
) WITHOUT ROWID;

-- One security's series (`GET /v1/companies/{isin}/prices`): ISIN, then day.
CREATE INDEX bars_isin ON bars (isin, day);

CREATE TABLE bar_days (
    day  BIGINT NOT NULL PRIMARY KEY,
    bars BIGINT NOT NULL
);
