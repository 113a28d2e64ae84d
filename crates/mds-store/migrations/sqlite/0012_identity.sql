-- Identity over time (contract section 10): exchange snapshots, NSE's
-- change files and the identity events made of them.
--
-- `identity_snapshots`: the day of every snapshot imported, per series
-- (`nse`, `nse_sme`, `bse`), with its row count. A snapshot older than a
-- series' latest is refused by the importer.
-- `identity_runs`: the snapshots' rows, run-length encoded: a row (symbol,
-- name, face value, date of listing) as it stood unchanged in its series
-- from the snapshot of `since` up to, not including, the snapshot of
-- `until` (NULL while the latest snapshot shows it so). A snapshot whose
-- rows did not change adds only its day. Days are `YYYY-MM-DD`; face values
-- decimal text, as written by Rust's `f64` `Display` (exact round trip).
-- `nse_symbol_changes`, `nse_name_changes`: the rows of NSE's cumulative
-- change files, kept whole (most name funds and bonds no snapshot shows).
-- `identity_events`: the events derived from all of the above
-- (`mds_domain::snapshot::derive`), per ISIN in order (`seq` from 0), each
-- the JSON of `mds_domain::IdentityEvent`; an `isin_changed` is under both
-- of its ISINs. Rewritten, for the ISINs whose events changed, by every
-- import of snapshots or change files.
CREATE TABLE identity_snapshots (
    series      TEXT NOT NULL CHECK (series IN ('nse', 'nse_sme', 'bse')),
    as_of       TEXT NOT NULL,
    rows        BIGINT NOT NULL,
    imported_at TEXT NOT NULL,
    PRIMARY KEY (series, as_of)
);

CREATE TABLE identity_runs (
    series     TEXT NOT NULL CHECK (series IN ('nse', 'nse_sme', 'bse')),
    isin       TEXT NOT NULL,
    since      TEXT NOT NULL,
    until      TEXT,
    symbol     TEXT NOT NULL,
    name       TEXT NOT NULL,
    face_value TEXT,
    listed_on  TEXT,
    PRIMARY KEY (series, isin, since)
);

-- The open runs of a series (what the next snapshot is compared with).
CREATE INDEX identity_runs_open ON identity_runs (series, until, isin);

CREATE TABLE nse_symbol_changes (
    old_symbol TEXT NOT NULL,
    new_symbol TEXT NOT NULL,
    changed_on TEXT NOT NULL,
    company    TEXT NOT NULL,
    PRIMARY KEY (old_symbol, new_symbol, changed_on)
);

CREATE TABLE nse_name_changes (
    symbol     TEXT NOT NULL,
    prev_name  TEXT NOT NULL,
    new_name   TEXT NOT NULL,
    changed_on TEXT NOT NULL,
    PRIMARY KEY (symbol, prev_name, new_name, changed_on)
);

CREATE TABLE identity_events (
    isin       TEXT NOT NULL,
    seq        BIGINT NOT NULL,
    event_json TEXT NOT NULL,
    PRIMARY KEY (isin, seq)
);
