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
-- The order `companies_sorted` streams (ticker, then ISIN, in byte order) is
-- already served by the index `companies_ticker_isin` of 0001.
CREATE TABLE catalog_snapshot_chunks (
    generation BIGINT NOT NULL,
    seq        INTEGER NOT NULL CHECK (seq >= 0),
    bytes      BLOB NOT NULL,
    PRIMARY KEY (generation, seq)
);
