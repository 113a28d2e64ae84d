//! Snapshots: the bytes of a built catalog or news index, in chunks of
//! `rows::SNAPSHOT_CHUNK_BYTES` in the table of their kind
//! (`rows::SnapshotKind`; migrations 0003 and 0015).
//!
//! A save is one write transaction that first takes the backend's lock on
//! saves (`dialect::lock_snapshot_saves`, one for both kinds: saves are
//! rare), then deletes every chunk of its kind and inserts the new ones: all
//! or nothing, and saves from several processes or nodes queue, each
//! replacing the one before it whole.
//!
//! A load is one read transaction (`begin_read`: one snapshot of the
//! database from its first statement on, never blocked by a save): the
//! chunk count and total length first, to allocate once, then each chunk by
//! its key, in order. One statement per chunk rather than one streamed
//! statement: a driver reads ahead of a stream by dozens of rows, which for
//! 4 MiB rows would be hundreds of megabytes beside the snapshot.
//!
//! Compiled once per backend (see `portable/mod.rs`).

use sqlx::Row;

use super::dialect::{self, BYTE_LENGTH};
use super::{Pool, begin_read, begin_write, db, execute};
use crate::StoreResult;
use crate::rows::{self, SnapshotKind};

/// Replaces every snapshot of `kind` with `bytes` for `generation`.
pub(crate) async fn save(pool: &Pool, generation: i64, bytes: &[u8], kind: SnapshotKind) -> StoreResult<()> {
    let table = kind.table();
    let chunks = rows::snapshot_chunks(bytes);
    let mut tx = begin_write(pool).await?;
    dialect::lock_snapshot_saves(&mut tx).await?;
    sqlx::query(&format!("DELETE FROM {table}")).execute(&mut *tx).await.map_err(db)?;
    let insert_sql = format!("INSERT INTO {table} (generation, seq, bytes) VALUES ($1, $2, $3)");
    for (seq, chunk) in chunks {
        execute(&mut tx, sqlx::query(&insert_sql).bind(generation).bind(seq).bind(chunk)).await?;
    }
    tx.commit().await.map_err(db)?;
    Ok(())
}

/// The snapshot of `kind` of `generation`, if one is saved.
pub(crate) async fn load(pool: &Pool, generation: i64, kind: SnapshotKind) -> StoreResult<Option<Vec<u8>>> {
    let table = kind.table();
    let mut tx = begin_read(pool).await?;
    let (chunks, total): (i64, Option<i64>) =
        sqlx::query_as(&format!("SELECT COUNT(*), SUM({BYTE_LENGTH}(bytes)) FROM {table} WHERE generation = $1"))
            .bind(generation)
            .fetch_one(&mut *tx)
            .await
            .map_err(db)?;
    let Some(mut out) = rows::snapshot_buffer(kind, generation, chunks, total)? else {
        return Ok(None);
    };
    let chunk_sql = format!("SELECT bytes FROM {table} WHERE generation = $1 AND seq = $2");
    for seq in 0..chunks {
        let row = sqlx::query(&chunk_sql)
            .bind(generation)
            .bind(seq)
            .fetch_optional(&mut *tx)
            .await
            .map_err(db)?
            .ok_or_else(|| rows::snapshot_chunk_missing(kind, generation, seq))?;
        let chunk: &[u8] = row.try_get(0).map_err(rows::undecodable)?;
        out.extend_from_slice(chunk);
    }
    tx.commit().await.map_err(db)?;
    Ok(Some(out))
}
