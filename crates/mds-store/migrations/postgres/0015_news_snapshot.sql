-- News index snapshots, on PostgreSQL: the table of
-- migrations/sqlite/0015_news_snapshot.sql, adapted as in 0003 (SQLite's
-- INTEGER is BIGINT here, BLOB is BYTEA).
--
-- News index snapshots: a serving node's built news index (the news list in
-- memory, `mds_node::news_index`), as opaque bytes, saved under the `news`
-- generation it was built from, so that a node starting later loads it
-- instead of reading every article (tens of seconds at a million). The
-- same shape and rules as `catalog_snapshot_chunks` (0003), in a table of
-- its own so that saving one kind never removes the other: one generation
-- kept at most, in chunks of 4 MiB numbered from 0 by `seq`, an empty
-- snapshot stored as one empty chunk.
CREATE TABLE news_snapshot_chunks (
    generation BIGINT NOT NULL,
    seq        BIGINT NOT NULL CHECK (seq >= 0),
    bytes      BYTEA NOT NULL,
    PRIMARY KEY (generation, seq)
);

-- Out of line and uncompressed, as the catalog's (0003): the news index
-- compresses its own text already, and a node must be ready within
-- seconds of start.
ALTER TABLE news_snapshot_chunks ALTER COLUMN bytes SET STORAGE EXTERNAL;
