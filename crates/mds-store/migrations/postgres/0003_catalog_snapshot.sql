-- Catalog snapshots, on PostgreSQL: the table of
-- migrations/sqlite/0003_catalog_snapshot.sql, adapted as in 0001 (SQLite's
-- INTEGER is BIGINT here) and with BYTEA for SQLite's BLOB.
--
-- Catalog snapshots: a serving node's built company catalog, as opaque
-- bytes, saved under the `companies` generation it was built from, so that a
-- node starting later loads it instead of rebuilding the catalog from the
-- companies table. One generation is kept at most: saving one deletes every
-- other, in the same transaction.
--
-- A snapshot (some 150 MB for a million companies) is stored in chunks of
-- 4 MiB, numbered from 0 by `seq`, so that neither saving nor loading holds
-- more than the snapshot and one chunk in memory. A snapshot has at least one
-- chunk: an empty snapshot is one empty chunk, so it reads back as present.
--
-- The order `companies_sorted` streams (`ORDER BY ticker COLLATE "C", isin
-- COLLATE "C"`) is already served by the index `companies_ticker_isin` of
-- 0001: its columns are `COLLATE "C"`.
CREATE TABLE catalog_snapshot_chunks (
    generation BIGINT NOT NULL,
    seq        BIGINT NOT NULL CHECK (seq >= 0),
    bytes      BYTEA NOT NULL,
    PRIMARY KEY (generation, seq)
);

-- Chunks are stored out of line and uncompressed: compressing 150 MB would
-- cost seconds at every save and load (a node must be ready within 3 s of
-- start), and whether the bytes are worth compressing is the catalog's
-- business, not the store's.
ALTER TABLE catalog_snapshot_chunks ALTER COLUMN bytes SET STORAGE EXTERNAL;
