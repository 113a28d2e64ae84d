//! Catalog snapshots: the bytes of a built catalog, in chunks of
//! `rows::SNAPSHOT_CHUNK_BYTES` (see migration 0003).
//!
//! A save is one write transaction that first takes the backend's lock on
//! saves (`dialect::lock_snapshot_saves`), then deletes every chunk and
//! inserts the new ones: all or nothing, and saves from several processes or
//! nodes queue, each replacing the one before it whole.
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
use crate::rows;

/// Replaces every snapshot with `bytes` for `generation`.
pub(crate) async fn save(pool: &Pool, generation: i64, bytes: &[u8]) -> StoreResult<()> {
    let chunks = rows::snapshot_chunks(bytes);
    let mut tx = begin_write(pool).await?;
    dialect::lock_snapshot_saves(&mut tx).await?;
    sqlx::query("DELETE FROM catalog_snapshot_chunks").execute(&mut *tx).await.map_err(db)?;
    for (seq, chunk) in chunks {
        let insert = sqlx::query("INSERT INTO catalog_snapshot_chunks (generation, seq, bytes) VALUES ($1, $2, $3)");
        execute(&mut tx, insert.bind(generation).bind(seq).bind(chunk)).await?;
    }
    tx.commit().await.map_err(db)?;
    Ok(())
}

/// The snapshot of `generation`, if one is saved.
pub(crate) async fn load(pool: &Pool, generation: i64) -> StoreResult<Option<Vec<u8>>> {
    let mut tx = begin_read(pool).await?;
    let (chunks, total): (i64, Option<i64>) = sqlx::query_as(&format!(
        "SELECT COUNT(*), SUM({BYTE_LENGTH}(bytes)) FROM catalog_snapshot_chunks WHERE generation = $1"
    ))
    .bind(generation)
    .fetch_one(&mut *tx)
    .await
    .map_err(db)?;
    let Some(mut out) = rows::snapshot_buffer(generation, chunks, total)? else {
        return Ok(None);
    };
    for seq in 0..chunks {
        let row = sqlx::query("SELECT bytes FROM catalog_snapshot_chunks WHERE generation = $1 AND seq = $2")
            .bind(generation)
            .bind(seq)
            .fetch_optional(&mut *tx)
            .await
            .map_err(db)?
            .ok_or_else(|| rows::snapshot_chunk_missing(generation, seq))?;
        let chunk: &[u8] = row.try_get(0).map_err(rows::undecodable)?;
        out.extend_from_slice(chunk);
    }
    tx.commit().await.map_err(db)?;
    Ok(Some(out))
}
