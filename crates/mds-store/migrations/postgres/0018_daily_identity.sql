-- NSE's ISIN-keyed daily price files as a series of the identity history
-- (contract 14.1, 10.3), and the symbol-keyed rows no ISIN held yet.
--
-- `identity_daily`: per (ISIN, symbol) pair an ISIN-keyed daily file
-- showed, the first and last day one did (`YYYY-MM-DD`): the compact form
-- the identity derivation reads (`mds_domain::snapshot::daily`).
-- `identity_daily_days`: the days of the ISIN-keyed files imported.
-- `bars_unresolved`: the symbol-keyed rows whose symbol no ISIN carried on
-- their day when imported, kept (as `bars`, without the ISIN) so that a
-- later list, change file, action file or daily file that makes their ISIN
-- known resolves them; one a day, symbol and series; replaced with the day.
CREATE TABLE identity_daily (
    isin      TEXT COLLATE "C" NOT NULL,
    symbol    TEXT COLLATE "C" NOT NULL,
    first_day TEXT COLLATE "C" NOT NULL,
    last_day  TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (isin, symbol)
);

CREATE TABLE identity_daily_days (
    day TEXT COLLATE "C" NOT NULL PRIMARY KEY
);

CREATE TABLE bars_unresolved (
    day          BIGINT NOT NULL,
    symbol       TEXT COLLATE "C" NOT NULL,
    series       TEXT COLLATE "C" NOT NULL,
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
    PRIMARY KEY (day, symbol, series)
);

-- The kept rows of a symbol, to resolve when its periods move (its bars
-- are found through the ISINs its periods named, `bars_isin`: an index on
-- `bars (symbol)` made the import of both archives several times slower).
CREATE INDEX bars_unresolved_symbol ON bars_unresolved (symbol, day);
