//! Catalog snapshots on PostgreSQL: the bytes of a built catalog, in chunks
//! of `rows::SNAPSHOT_CHUNK_BYTES` (see migration 0003).
//!
//! A save is one transaction that first takes a transaction-scoped advisory
//! lock ([`SNAPSHOT_LOCK`]), then deletes every chunk and inserts the new
//! ones. The lock queues saves from several nodes: each runs whole after the
//! one before has committed, so its `DELETE` (a new statement, so a new
//! snapshot under `READ COMMITTED`) sees and removes every chunk the other
//! wrote, and no insert can meet a chunk of the same key. Without it, two
//! saves of one generation would both insert `(generation, 0)`, and the
//! second would fail on the primary key; `ON CONFLICT DO NOTHING` would
//! avoid the failure but could keep chunks of both copies. Only saves take
//! this lock; loads never wait for it.
//!
//! A load is one `REPEATABLE READ, READ ONLY` transaction: the chunk count
//! and total length first, to allocate once, then each chunk by its key, in
//! order, all from one snapshot of the database, so a save committing
//! meanwhile is invisible to it (the chunks it deletes stay readable to
//! older snapshots). One statement per chunk keeps at most one chunk in
//! memory beside the snapshot, whatever the driver's buffering.

use sqlx::{PgPool, Row};

use super::error::db;
use super::{PgStore, begin_snapshot};
use crate::rows;
use crate::{StoreError, StoreResult};

/// The key of the advisory lock that serialises snapshot saves ("mds_snap").
const SNAPSHOT_LOCK: i64 = 0x6d64_735f_736e_6170;

/// Replaces every snapshot with `bytes` for `generation`.
pub(super) async fn save(store: &PgStore, generation: i64, bytes: &[u8]) -> StoreResult<()> {
    let chunks = rows::snapshot_chunks(bytes);
    let mut tx = store.begin_write().await?;
    sqlx::query("SELECT pg_advisory_xact_lock($1)").bind(SNAPSHOT_LOCK).execute(&mut *tx).await.map_err(db)?;
    sqlx::query("DELETE FROM catalog_snapshot_chunks").execute(&mut *tx).await.map_err(db)?;
    for (seq, chunk) in chunks {
        sqlx::query("INSERT INTO catalog_snapshot_chunks (generation, seq, bytes) VALUES ($1, $2, $3)")
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
pub(super) async fn load(pool: &PgPool, generation: i64) -> StoreResult<Option<Vec<u8>>> {
    let mut tx = begin_snapshot(pool).await?;
    let (chunks, total): (i64, Option<i64>) =
        sqlx::query_as("SELECT COUNT(*), SUM(octet_length(bytes)) FROM catalog_snapshot_chunks WHERE generation = $1")
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
        let chunk: &[u8] = row.try_get(0).map_err(StoreError::Database)?;
        out.extend_from_slice(chunk);
    }
    tx.commit().await.map_err(db)?;
    Ok(Some(out))
}
