//! Snapshots in chunks: the company catalog's (schema version 3) and the
//! news index's (schema version 15), each kind in a table of its own.

#[allow(unused_imports)]
use super::*;

/// Which snapshot: each kind has a table of its own, of the same shape
/// (`generation`, `seq`, `bytes`), so saving one never removes the other.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SnapshotKind {
    /// The company catalog's, under a `companies` generation (migration 3).
    Catalog,
    /// The news index's, under a `news` generation (migration 15).
    News,
}

impl SnapshotKind {
    /// The table its chunks are stored in.
    pub(crate) fn table(self) -> &'static str {
        match self {
            SnapshotKind::Catalog => "catalog_snapshot_chunks",
            SnapshotKind::News => "news_snapshot_chunks",
        }
    }

    /// A word for error messages ("catalog snapshot 7: …").
    pub(crate) fn word(self) -> &'static str {
        match self {
            SnapshotKind::Catalog => "catalog",
            SnapshotKind::News => "news",
        }
    }
}

/// Bytes per stored chunk of a snapshot (the last chunk may be shorter).
/// Small enough that one chunk beside the whole snapshot is little extra
/// memory, large enough that 150 MB take a few dozen statements.
pub(crate) const SNAPSHOT_CHUNK_BYTES: usize = 4 << 20;

/// The chunks `bytes` is stored as, with their `seq`, in order: at least one,
/// so that an empty snapshot is stored (as one empty chunk) and reads back
/// as present.
pub(crate) fn snapshot_chunks(bytes: &[u8]) -> Vec<(i64, &[u8])> {
    let mut chunks: Vec<&[u8]> = bytes.chunks(SNAPSHOT_CHUNK_BYTES).collect();
    if chunks.is_empty() {
        chunks.push(&[]);
    }
    (0..).zip(chunks).collect()
}

/// The buffer a snapshot of `kind` is loaded into, from how many chunks the
/// generation has and their total length (`SUM`, null over no rows): `None`
/// when there is no chunk (no snapshot), else an empty vector with exactly
/// the snapshot's capacity.
pub(crate) fn snapshot_buffer(
    kind: SnapshotKind,
    generation: i64,
    chunks: i64,
    total: Option<i64>,
) -> StoreResult<Option<Vec<u8>>> {
    if chunks == 0 {
        return Ok(None);
    }
    let total = total.unwrap_or(0);
    let len = usize::try_from(total)
        .map_err(|_| corrupt(format_args!("{} snapshot {generation}: length {total}", kind.word())))?;
    Ok(Some(Vec::with_capacity(len)))
}

/// A chunk that should be there and is not: the chunks are not numbered
/// `0..count` (someone wrote the table behind the store's back).
pub(crate) fn snapshot_chunk_missing(kind: SnapshotKind, generation: i64, seq: i64) -> StoreError {
    corrupt(format_args!("{} snapshot {generation}: chunk {seq} is missing", kind.word()))
}
