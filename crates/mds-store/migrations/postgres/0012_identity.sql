-- Identity over time: the tables and meaning of
-- migrations/sqlite/0012_identity.sql (read it for what they hold).
CREATE TABLE identity_snapshots (
    series      TEXT COLLATE "C" NOT NULL CHECK (series IN ('nse', 'nse_sme', 'bse')),
    as_of       TEXT COLLATE "C" NOT NULL,
    rows        BIGINT NOT NULL,
    imported_at TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (series, as_of)
);

CREATE TABLE identity_runs (
    series     TEXT COLLATE "C" NOT NULL CHECK (series IN ('nse', 'nse_sme', 'bse')),
    isin       TEXT COLLATE "C" NOT NULL,
    since      TEXT COLLATE "C" NOT NULL,
    until      TEXT COLLATE "C",
    symbol     TEXT COLLATE "C" NOT NULL,
    name       TEXT COLLATE "C" NOT NULL,
    face_value TEXT COLLATE "C",
    listed_on  TEXT COLLATE "C",
    PRIMARY KEY (series, isin, since)
);

CREATE INDEX identity_runs_open ON identity_runs (series, until, isin);

CREATE TABLE nse_symbol_changes (
    old_symbol TEXT COLLATE "C" NOT NULL,
    new_symbol TEXT COLLATE "C" NOT NULL,
    changed_on TEXT COLLATE "C" NOT NULL,
    company    TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (old_symbol, new_symbol, changed_on)
);

CREATE TABLE nse_name_changes (
    symbol     TEXT COLLATE "C" NOT NULL,
    prev_name  TEXT COLLATE "C" NOT NULL,
    new_name   TEXT COLLATE "C" NOT NULL,
    changed_on TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (symbol, prev_name, new_name, changed_on)
);

CREATE TABLE identity_events (
    isin       TEXT COLLATE "C" NOT NULL,
    seq        BIGINT NOT NULL,
    event_json TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (isin, seq)
);
