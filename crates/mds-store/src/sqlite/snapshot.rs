//! Catalog snapshots on SQLite: the bytes of a built catalog, in chunks of
//! `rows::SNAPSHOT_CHUNK_BYTES` (see migration 0003).
//!
//! A save is one `BEGIN IMMEDIATE` transaction that deletes every chunk and
//! inserts the new ones: all or nothing, and saves from several processes
//! queue on the write lock (each replaces the one before it whole). A save
//! of 150 MB holds the write lock while it writes them: other writers wait
//! for it, and fail as unavailable if that takes longer than the busy
//! timeout.
//!
//! A load is one read transaction (WAL: one snapshot of the file from its
//! first statement on, never blocked by a save): the chunk count and total
//! length first, to allocate once, then each chunk by its key, in order. One
//! statement per chunk rather than one streamed statement: the driver reads
//! ahead of a stream by dozens of rows, which for 4 MiB rows would be
//! hundreds of megabytes beside the snapshot.

use sqlx::{Row, SqlitePool};

use super::SqliteStore;
use super::error::db;
use crate::rows;
use crate::{StoreError, StoreResult};

/// Replaces every snapshot with `bytes` for `generation`.
pub(super) async fn save(store: &SqliteStore, generation: i64, bytes: &[u8]) -> StoreResult<()> {
    let chunks = rows::snapshot_chunks(bytes);
    let mut tx = store.begin_write().await?;
    sqlx::query("DELETE FROM catalog_snapshot_chunks").execute(&mut *tx).await.map_err(db)?;
    for (seq, chunk) in chunks {
        sqlx::query("INSERT INTO catalog_snapshot_chunks (generation, seq, bytes) VALUES (?, ?, ?)")
            .bind(generation)
            .bind(seq)
            .bind(chunk)
            .execute(&mut *tx)
            .await
            .map_err(db)?;
    }
    tx.commit().await.map_err(db)?;
    Ok(())
}

/// The snapshot of `generation`, if one is saved.
pub(super) async fn load(pool: &SqlitePool, generation: i64) -> StoreResult<Option<Vec<u8>>> {
    let mut tx = pool.begin().await.map_err(db)?;
    let (chunks, total): (i64, Option<i64>) =
        sqlx::query_as("SELECT COUNT(*), SUM(LENGTH(bytes)) FROM catalog_snapshot_chunks WHERE generation = ?")
            .bind(generation)
            .fetch_one(&mut *tx)
            .await
            .map_err(db)?;
    let Some(mut out) = rows::snapshot_buffer(generation, chunks, total)? else {
        return Ok(None);
    };
    for seq in 0..chunks {
        let row = sqlx::query("SELECT bytes FROM catalog_snapshot_chunks WHERE generation = ? AND seq = ?")
            .bind(generation)
            .bind(seq)
            .fetch_optional(&mut *tx)
            .await
            .map_err(db)?
            .ok_or_else(|| rows::snapshot_chunk_missing(generation, seq))?;
        let chunk: &[u8] = row.try_get(0).map_err(StoreError::Database)?;
        out.extend_from_slice(chunk);
    }
    tx.commit().await.map_err(db)?;
    Ok(Some(out))
}
