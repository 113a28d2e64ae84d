//! The stored outcomes of `POST`s made with an `Idempotency-Key` (contract
//! section 9): claimed before the request runs, completed with its answer,
//! forgotten after [`crate::IDEMPOTENCY_TTL`].
//!
//! Compiled once per backend (see `portable/mod.rs`).

use chrono::{DateTime, Utc};

use super::{Pool, begin_write, db, execute};
use crate::rows::{self, RowExt};
use crate::{IDEMPOTENCY_ABANDONED, IDEMPOTENCY_TTL, IdempotencyClaim, StoreResult};

/// Claims `key` for a request with `fingerprint` at `now`, forgetting
/// claims older than the TTL first.
pub(crate) async fn claim(
    pool: &Pool,
    key: &str,
    fingerprint: &str,
    now: DateTime<Utc>,
) -> StoreResult<IdempotencyClaim> {
    let mut tx = begin_write(pool).await?;
    sqlx::query("DELETE FROM idempotency_keys WHERE created_at < $1")
        .bind(rows::ts(&(now - IDEMPOTENCY_TTL)))
        .execute(&mut *tx)
        .await
        .map_err(db)?;
    // A concurrent claim of the same key waits here for this one's commit
    // (PostgreSQL), then finds the row.
    let insert = sqlx::query(
        "INSERT INTO idempotency_keys (key_hash, fingerprint, status, body, created_at) VALUES ($1, $2, NULL, NULL, $3) \
         ON CONFLICT (key_hash) DO NOTHING",
    );
    let inserted = execute(&mut tx, insert.bind(key).bind(fingerprint).bind(rows::ts(&now))).await? == 1;
    let claim = if inserted {
        IdempotencyClaim::Claimed
    } else {
        let r = sqlx::query("SELECT fingerprint, status, body, created_at FROM idempotency_keys WHERE key_hash = $1")
            .bind(key)
            .fetch_one(&mut *tx)
            .await
            .map_err(db)?;
        if r.text("fingerprint")? != fingerprint {
            IdempotencyClaim::OtherRequest
        } else {
            let status: Option<i64> = sqlx::Row::try_get(&r, "status").map_err(rows::undecodable)?;
            match (status, r.opt_text("body")?) {
                (Some(status), Some(body)) => IdempotencyClaim::Done {
                    status: u16::try_from(status)
                        .map_err(|_| rows::corrupt(format_args!("idempotency_keys.status out of range: {status}")))?,
                    body,
                },
                _ => {
                    // A claim still without an answer long after any request
                    // could have ended: its node died. Taken over (by one
                    // of several takers: the update names the claim it saw).
                    let claimed_at = r.text("created_at")?;
                    let stale =
                        rows::instant("idempotency_keys", "created_at", &claimed_at)? < now - IDEMPOTENCY_ABANDONED;
                    let taken = stale
                        && sqlx::query(
                            "UPDATE idempotency_keys SET created_at = $1 \
                             WHERE key_hash = $2 AND status IS NULL AND created_at = $3",
                        )
                        .bind(rows::ts(&now))
                        .bind(key)
                        .bind(&claimed_at)
                        .execute(&mut *tx)
                        .await
                        .map_err(db)?
                        .rows_affected()
                            == 1;
                    if taken { IdempotencyClaim::Claimed } else { IdempotencyClaim::Running }
                }
            }
        }
    };
    tx.commit().await.map_err(db)?;
    Ok(claim)
}

/// Records the answer of the request that claimed `key`.
pub(crate) async fn complete(pool: &Pool, key: &str, status: u16, body: &str) -> StoreResult<()> {
    sqlx::query("UPDATE idempotency_keys SET status = $1, body = $2 WHERE key_hash = $3")
        .bind(i64::from(status))
        .bind(body)
        .bind(key)
        .execute(pool)
        .await
        .map_err(db)?;
    Ok(())
}

/// Forgets a claim whose request failed (a `5xx`): a retry runs afresh.
pub(crate) async fn release(pool: &Pool, key: &str) -> StoreResult<()> {
    sqlx::query("DELETE FROM idempotency_keys WHERE key_hash = $1 AND status IS NULL")
        .bind(key)
        .execute(pool)
        .await
        .map_err(db)?;
    Ok(())
}
