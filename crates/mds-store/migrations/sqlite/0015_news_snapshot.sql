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
    seq        INTEGER NOT NULL CHECK (seq >= 0),
    bytes      BLOB NOT NULL,
    PRIMARY KEY (generation, seq)
);
