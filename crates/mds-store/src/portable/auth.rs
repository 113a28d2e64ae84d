//! What a serving node reads to authenticate (contract section 2.1): the
//! directory (tiers and accounts, whole), active keys by prefix, and the
//! auth change log, "what changed since generation G", so a node keeps only
//! the keys it has seen and does work proportional to a change.
//!
//! Every change of tiers, accounts or keys goes through [`bump_auth`]: it
//! bumps the `auth` generation and logs what changed under the new
//! generation, in the change's transaction (so the log has a row for every
//! generation it reaches back to), and prunes the log from its oldest end.
//!
//! Compiled once per backend (see `portable/mod.rs`).

use mds_domain::KeyPrefix;
use sqlx::Row;

use super::access::{accounts_on, tiers_on};
use super::meta::{bump_generation, read_generation};
use super::{Conn, Pool, begin_read, begin_write, db, fetch_all};
use crate::rows::{self, META_GENERATION_AUTH, RowExt};
use crate::{AUTH_CHANGES_KEPT, ActiveKey, AuthChanges, AuthDirectory, KeyLookup, StoreResult};

/// The most prefixes one lookup statement binds (well below either
/// driver's limit of bound values).
const LOOKUP_CHUNK: usize = 500;

/// An active key with its account's entitlement and its plan tier's limits.
const ACTIVE_KEY_SELECT: &str = "SELECT k.prefix, k.hash_hex, a.name AS account, a.entitled, k.tier, k.environment, \
     k.created_at, k.revoked_at, k.expires_at, t.name, t.rate_limit_per_minute, t.monthly_quota \
     FROM api_keys k JOIN accounts a ON a.id = k.account_id JOIN tiers t ON t.name = k.tier \
     WHERE k.revoked_at IS NULL AND k.prefix IN";

/// Bumps the `auth` generation for a change of the key `key`, or of tiers
/// or accounts (`None`), logs it, and prunes the log; returns the new
/// generation. Call inside the transaction of the change.
pub(crate) async fn bump_auth(conn: &mut Conn, key: Option<&KeyPrefix>) -> StoreResult<i64> {
    let generation = bump_generation(conn, META_GENERATION_AUTH).await?;
    sqlx::query("INSERT INTO auth_changes (generation, prefix) VALUES ($1, $2)")
        .bind(generation)
        .bind(key.map(KeyPrefix::as_str))
        .execute(&mut *conn)
        .await
        .map_err(db)?;
    prune(conn, generation - AUTH_CHANGES_KEPT).await?;
    Ok(generation)
}

/// Deletes the change log up to generation `upto`; returns how many rows.
pub(crate) async fn prune(conn: &mut Conn, upto: i64) -> StoreResult<u64> {
    let done =
        sqlx::query("DELETE FROM auth_changes WHERE generation <= $1").bind(upto).execute(conn).await.map_err(db)?;
    Ok(done.rows_affected())
}

/// [`prune`] in a transaction of its own.
pub(crate) async fn prune_log(pool: &Pool, upto: i64) -> StoreResult<u64> {
    let mut tx = begin_write(pool).await?;
    let n = prune(&mut tx, upto).await?;
    tx.commit().await.map_err(db)?;
    Ok(n)
}

/// Tiers and accounts, whole, in one snapshot.
pub(crate) async fn directory(pool: &Pool) -> StoreResult<AuthDirectory> {
    let mut tx = begin_read(pool).await?;
    let generation = read_generation(&mut tx, META_GENERATION_AUTH).await?;
    let accounts = accounts_on(&mut tx).await?;
    let tiers = tiers_on(&mut tx).await?;
    tx.commit().await.map_err(db)?;
    Ok(AuthDirectory { generation, accounts, tiers })
}

/// The active keys among `prefixes`, in one snapshot: one indexed read per
/// [`LOOKUP_CHUNK`] prefixes.
pub(crate) async fn lookup(pool: &Pool, prefixes: &[&str]) -> StoreResult<KeyLookup> {
    let mut tx = begin_read(pool).await?;
    let generation = read_generation(&mut tx, META_GENERATION_AUTH).await?;
    let mut keys = Vec::new();
    for chunk in prefixes.chunks(LOOKUP_CHUNK) {
        let marks: Vec<String> = (1..=chunk.len()).map(|i| format!("${i}")).collect();
        let sql = format!("{ACTIVE_KEY_SELECT} ({})", marks.join(", "));
        let mut q = sqlx::query(&sql);
        for p in chunk {
            q = q.bind(*p);
        }
        for r in q.fetch_all(&mut *tx).await.map_err(db)? {
            keys.push(ActiveKey {
                record: rows::key_record(&r)?,
                entitled: r.flag("entitled")?,
                plan_tier: rows::tier(&r)?,
            });
        }
    }
    tx.commit().await.map_err(db)?;
    Ok(KeyLookup { generation, keys })
}

/// What changed after generation `since`, in one snapshot.
pub(crate) async fn changes(pool: &Pool, since: i64) -> StoreResult<AuthChanges> {
    let mut tx = begin_read(pool).await?;
    let generation = read_generation(&mut tx, META_GENERATION_AUTH).await?;
    let oldest: Option<i64> =
        sqlx::query_scalar("SELECT MIN(generation) FROM auth_changes").fetch_one(&mut *tx).await.map_err(db)?;
    let select = sqlx::query("SELECT prefix FROM auth_changes WHERE generation > $1 ORDER BY generation");
    let rs = fetch_all(&mut tx, select.bind(since)).await?;
    tx.commit().await.map_err(db)?;
    // Every generation bumped since the log began has a row, and pruning
    // removes only the oldest: the log covers (since, generation] when it
    // still holds since + 1. A store behind the asker (restored) is not
    // covered either.
    let complete = since == generation || (since < generation && oldest.is_some_and(|o| o <= since + 1));
    let mut out = AuthChanges { generation, complete, ..AuthChanges::default() };
    let mut seen = std::collections::HashSet::new();
    for r in &rs {
        match r.try_get::<Option<String>, _>("prefix").map_err(db)? {
            Some(p) => {
                if seen.insert(p.clone()) {
                    out.keys.push(p);
                }
            }
            None => out.directory = true,
        }
    }
    Ok(out)
}
