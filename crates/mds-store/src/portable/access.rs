//! Tiers, accounts and keys.
//!
//! Each change (a `*_on` function) checks what it depends on (the account,
//! the tier, a free prefix) inside the write transaction it is given (its
//! own, begun by `roles`, or an audited change's, by `admin`) and gets the operator a sentence
//! naming what is missing or taken. Where another writer could change the
//! same row between the check and the write, the row is locked (`KEY_LOCK`,
//! `FOR UPDATE` on PostgreSQL; SQLite's write transaction holds the whole
//! file) or the unique constraint that fires instead is told apart by its
//! name.
//!
//! Every change bumps the `auth` change counter and logs what it changed
//! in its transaction (`auth::bump_auth`). Tier and
//! entitlement changes also append a row to `tier_history` /
//! `entitlement_history` there, effective from the `now` they are given, so
//! the quota in force for a past month can be told later.
//!
//! Compiled once per backend (see `portable/mod.rs`).

use chrono::{DateTime, Utc};
use mds_domain::{Account, AccountName, Environment, KeyHash, KeyPrefix, Tier, TierName};
use sqlx::Row;

use super::auth::bump_auth;
use super::dialect::KEY_LOCK;
use super::{Conn, DbRow, Pool, begin_read, begin_write, db, execute, unique_or};
use crate::rows;
use crate::{KeyRecord, RolledKey, StoreError, StoreResult};

const TIER_SELECT: &str = "SELECT name, rate_limit_per_minute, monthly_quota FROM tiers";
const ACCOUNT_SELECT: &str = "SELECT name, entitled, created_at FROM accounts";
const KEY_SELECT: &str = "SELECT k.prefix, k.hash_hex, a.name AS account, k.tier, k.environment, k.created_at, \
                          k.revoked_at, k.expires_at FROM api_keys k JOIN accounts a ON a.id = k.account_id";
const KEY_ORDER: &str = "ORDER BY k.created_at, k.prefix";

/// The name of the unique constraint on `api_keys.prefix` (PostgreSQL's
/// default name; SQLite names no constraint).
const KEY_PREFIX_CONSTRAINT: &str = "api_keys_prefix_key";

/// Every tier, by name.
pub(crate) async fn tiers(pool: &Pool) -> StoreResult<Vec<Tier>> {
    tiers_on(&mut *pool.acquire().await.map_err(db)?).await
}

pub(crate) async fn tiers_on(conn: &mut Conn) -> StoreResult<Vec<Tier>> {
    let rs = sqlx::query(&format!("{TIER_SELECT} ORDER BY name")).fetch_all(conn).await.map_err(db)?;
    rs.iter().map(rows::tier).collect()
}

/// Appends a tier's values to its history, effective from `at`.
pub(crate) async fn record_tier(
    conn: &mut Conn,
    tier: &TierName,
    rate_limit_per_minute: u32,
    monthly_quota: i64,
    at: DateTime<Utc>,
) -> StoreResult<()> {
    let insert = sqlx::query(
        "INSERT INTO tier_history (tier, rate_limit_per_minute, monthly_quota, effective_from) \
         VALUES ($1, $2, $3, $4)",
    );
    let values = insert.bind(tier.as_str()).bind(i64::from(rate_limit_per_minute)).bind(monthly_quota);
    execute(conn, values.bind(rows::ts(&at))).await?;
    Ok(())
}

/// Appends an account's entitlement to its history, effective from `at`.
async fn record_entitlement(conn: &mut Conn, account_id: i64, entitled: bool, at: DateTime<Utc>) -> StoreResult<()> {
    let insert =
        sqlx::query("INSERT INTO entitlement_history (account_id, entitled, effective_from) VALUES ($1, $2, $3)");
    execute(conn, insert.bind(account_id).bind(entitled).bind(rows::ts(&at))).await?;
    Ok(())
}

/// Inserts a tier (its quota as stored) unless one of that name exists;
/// true when inserted. Records no history.
pub(crate) async fn insert_tier(conn: &mut Conn, tier: &Tier, monthly_quota: i64) -> StoreResult<bool> {
    let done = sqlx::query(
        "INSERT INTO tiers (name, rate_limit_per_minute, monthly_quota) VALUES ($1, $2, $3) \
         ON CONFLICT (name) DO NOTHING",
    )
    .bind(tier.name.as_str())
    .bind(i64::from(tier.rate_limit_per_minute))
    .bind(monthly_quota)
    .execute(conn)
    .await
    .map_err(db)?;
    Ok(done.rows_affected() == 1)
}

/// Creates or changes a tier; true when created. Every call is recorded in
/// the tier's history as of `now`, changed or not.
pub(crate) async fn set_tier_on(tx: &mut Conn, tier: &Tier, now: DateTime<Utc>) -> StoreResult<bool> {
    let quota = rows::to_bigint("monthly_quota", tier.monthly_quota)?;
    // A concurrent insert of the same name waits for the other transaction
    // and then does nothing, so the update below applies on top of it.
    let created = insert_tier(tx, tier, quota).await?;
    if !created {
        sqlx::query("UPDATE tiers SET rate_limit_per_minute = $1, monthly_quota = $2 WHERE name = $3")
            .bind(i64::from(tier.rate_limit_per_minute))
            .bind(quota)
            .bind(tier.name.as_str())
            .execute(&mut *tx)
            .await
            .map_err(db)?;
    }
    record_tier(tx, &tier.name, tier.rate_limit_per_minute, quota, now).await?;
    bump_auth(tx, None).await?;
    Ok(created)
}

/// Creates an entitled account, entitled in its history from `now`.
pub(crate) async fn create_account_on(tx: &mut Conn, name: &AccountName, now: DateTime<Utc>) -> StoreResult<Account> {
    let id: i64 =
        sqlx::query_scalar("INSERT INTO accounts (name, entitled, created_at) VALUES ($1, $2, $3) RETURNING id")
            .bind(name.as_str())
            .bind(true)
            .bind(rows::ts(&now))
            .fetch_one(&mut *tx)
            .await
            .map_err(|e| unique_or(e, |_| rows::account_exists(name)))?;
    record_entitlement(tx, id, true, now).await?;
    bump_auth(tx, None).await?;
    Ok(Account { name: name.clone(), entitled: true, created_at: now })
}

/// Sets an account's entitlement; every call is recorded in its history as of
/// `now`, changed or not.
pub(crate) async fn set_account_entitled_on(
    tx: &mut Conn,
    name: &AccountName,
    entitled: bool,
    now: DateTime<Utc>,
) -> StoreResult<Account> {
    let r = sqlx::query("UPDATE accounts SET entitled = $1 WHERE name = $2 RETURNING id, name, entitled, created_at")
        .bind(entitled)
        .bind(name.as_str())
        .fetch_optional(&mut *tx)
        .await
        .map_err(db)?
        .ok_or_else(|| rows::no_account(name))?;
    let account = rows::account(&r)?;
    let id: i64 = r.try_get("id").map_err(db)?;
    record_entitlement(tx, id, entitled, now).await?;
    bump_auth(tx, None).await?;
    Ok(account)
}

/// Every account, by name.
pub(crate) async fn accounts(pool: &Pool) -> StoreResult<Vec<Account>> {
    accounts_on(&mut *pool.acquire().await.map_err(db)?).await
}

pub(crate) async fn accounts_on(conn: &mut Conn) -> StoreResult<Vec<Account>> {
    let rs = sqlx::query(&format!("{ACCOUNT_SELECT} ORDER BY name")).fetch_all(conn).await.map_err(db)?;
    rs.iter().map(rows::account).collect()
}

pub(crate) async fn account_id(conn: &mut Conn, name: &AccountName) -> StoreResult<i64> {
    let id: Option<i64> = sqlx::query_scalar("SELECT id FROM accounts WHERE name = $1")
        .bind(name.as_str())
        .fetch_optional(conn)
        .await
        .map_err(db)?;
    id.ok_or_else(|| rows::no_account(name))
}

pub(crate) async fn tier_exists(conn: &mut Conn, name: &TierName) -> StoreResult<bool> {
    let found = sqlx::query("SELECT 1 FROM tiers WHERE name = $1")
        .bind(name.as_str())
        .fetch_optional(conn)
        .await
        .map_err(db)?;
    Ok(found.is_some())
}

/// A key by prefix, revoked or not; `lock` takes the key's row lock until the
/// end of the transaction (where the backend has row locks).
pub(crate) async fn key_by_prefix(conn: &mut Conn, prefix: &KeyPrefix, lock: bool) -> StoreResult<Option<KeyRecord>> {
    let lock = if lock { KEY_LOCK } else { "" };
    let r = sqlx::query(&format!("{KEY_SELECT} WHERE k.prefix = $1{lock}"))
        .bind(prefix.as_str())
        .fetch_optional(conn)
        .await
        .map_err(db)?;
    r.as_ref().map(rows::key_record).transpose()
}

/// Stores a key as given (its account and tier must exist, its prefix and
/// hash be new).
pub(crate) async fn create_key_on(tx: &mut Conn, key: &KeyRecord) -> StoreResult<KeyRecord> {
    let account_id = account_id(tx, &key.account).await?;
    if !tier_exists(tx, &key.tier).await? {
        return Err(rows::no_tier(&key.tier));
    }
    if key_by_prefix(tx, &key.prefix, false).await?.is_some() {
        return Err(rows::prefix_exists(&key.prefix));
    }
    sqlx::query(
        "INSERT INTO api_keys (prefix, hash_hex, account_id, tier, environment, created_at, revoked_at, expires_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
    )
    .bind(key.prefix.as_str())
    .bind(key.hash.to_hex())
    .bind(account_id)
    .bind(key.tier.as_str())
    .bind(key.environment.as_str())
    .bind(rows::ts(&key.created_at))
    .bind(key.revoked_at.as_ref().map(rows::ts))
    .bind(key.expires_at.as_ref().map(rows::ts))
    .execute(&mut *tx)
    .await
    // Another node may have stored the same prefix since the check above
    // (not on SQLite, whose write transaction holds the file: there only the
    // hash is left).
    .map_err(|e| {
        unique_or(e, |constraint| {
            if constraint == Some(KEY_PREFIX_CONSTRAINT) {
                rows::prefix_exists(&key.prefix)
            } else {
                rows::hash_exists()
            }
        })
    })?;
    bump_auth(tx, Some(&key.prefix)).await?;
    Ok(key.clone())
}

/// Rolls the key `old`: stores the new key `new` (prefix and hash; its
/// account, tier and environment are the old key's, it does not expire)
/// and makes the old one expire at `old_expires_at` (or when it expired
/// already, if sooner), in the caller's write transaction. `NotFound` for no such key;
/// `Conflict` for a revoked or expired one, or a new key of another
/// environment.
pub(crate) async fn roll_key_on(
    tx: &mut Conn,
    old: &KeyPrefix,
    new: (&KeyPrefix, KeyHash),
    now: DateTime<Utc>,
    old_expires_at: DateTime<Utc>,
) -> StoreResult<RolledKey> {
    let mut was = key_by_prefix(tx, old, true).await?.ok_or_else(|| rows::no_key(old))?;
    if was.revoked_at.is_some() {
        return Err(StoreError::Conflict(format!("key \"{old}\" is revoked")));
    }
    if was.expires_at.is_some_and(|e| e <= now) {
        return Err(StoreError::Conflict(format!("key \"{old}\" has expired")));
    }
    if Environment::of_key(new.0.as_str()) != Some(was.environment) {
        return Err(StoreError::Conflict(format!("the new key is not a {} key", was.environment.as_str())));
    }
    let key = KeyRecord {
        prefix: new.0.clone(),
        hash: new.1,
        account: was.account.clone(),
        tier: was.tier.clone(),
        environment: was.environment,
        created_at: now,
        revoked_at: None,
        expires_at: None,
    };
    let rolled = create_key_on(tx, &key).await?;
    let until = was.expires_at.map_or(old_expires_at, |e| e.min(old_expires_at));
    set_key_instant(tx, old, "expires_at", until).await?;
    was.expires_at = Some(until);
    Ok(RolledKey { old: was, new: rolled })
}

/// Sets the instant `column` (`revoked_at`, `expires_at`) of the key
/// `prefix` to `at`, and logs the key's change.
async fn set_key_instant(tx: &mut Conn, prefix: &KeyPrefix, column: &str, at: DateTime<Utc>) -> StoreResult<()> {
    let sql = format!("UPDATE api_keys SET {column} = $1 WHERE prefix = $2");
    execute(tx, sqlx::query(&sql).bind(rows::ts(&at)).bind(prefix.as_str())).await?;
    bump_auth(tx, Some(prefix)).await?;
    Ok(())
}

/// Revokes a key; a revoked key is returned as it is, and nothing changes.
pub(crate) async fn revoke_key(pool: &Pool, prefix: &KeyPrefix, now: DateTime<Utc>) -> StoreResult<KeyRecord> {
    let mut tx = begin_write(pool).await?;
    let (key, _) = revoke_key_on(&mut tx, prefix, now).await?;
    tx.commit().await.map_err(db)?;
    Ok(key)
}

/// [`revoke_key`] inside the caller's write transaction; also the key as it
/// was before (`None` when it was revoked already and nothing changed).
pub(crate) async fn revoke_key_on(
    tx: &mut Conn,
    prefix: &KeyPrefix,
    now: DateTime<Utc>,
) -> StoreResult<(KeyRecord, Option<KeyRecord>)> {
    // Locked, so of two nodes revoking at once the second sees the first's
    // `revoked_at` and keeps it.
    let mut key = key_by_prefix(tx, prefix, true).await?.ok_or_else(|| rows::no_key(prefix))?;
    if key.revoked_at.is_some() {
        return Ok((key, None));
    }
    let before = key.clone();
    set_key_instant(tx, prefix, "revoked_at", now).await?;
    key.revoked_at = Some(now);
    Ok((key, Some(before)))
}

/// At most `limit` tiers by name, after the tier named `after`.
pub(crate) async fn tiers_after(pool: &Pool, after: Option<&TierName>, limit: usize) -> StoreResult<Vec<Tier>> {
    by_name_after(pool, TIER_SELECT, after.map_or("", TierName::as_str), limit, rows::tier).await
}

/// At most `limit` accounts by name, after the account named `after`.
pub(crate) async fn accounts_after(
    pool: &Pool,
    after: Option<&AccountName>,
    limit: usize,
) -> StoreResult<Vec<Account>> {
    by_name_after(pool, ACCOUNT_SELECT, after.map_or("", AccountName::as_str), limit, rows::account).await
}

/// At most `limit` rows of `select` (a `SELECT … FROM` a table keyed by
/// `name`) by name, after the name `after` (`""`: from the first), each
/// decoded by `decode`.
async fn by_name_after<T>(
    pool: &Pool,
    select: &str,
    after: &str,
    limit: usize,
    decode: fn(&DbRow) -> StoreResult<T>,
) -> StoreResult<Vec<T>> {
    let rs = sqlx::query(&format!("{select} WHERE name > $1 ORDER BY name LIMIT $2"))
        .bind(after)
        .bind(sql_limit(limit))
        .fetch_all(pool)
        .await
        .map_err(db)?;
    rs.iter().map(decode).collect()
}

/// At most `limit` keys, revoked ones included, optionally of one account,
/// in [`KEY_ORDER`], after the key at `after` (its `created_at` and
/// prefix): one walk of `api_keys_created` (or `api_keys_account_created`)
/// from the position, as deep pages cost what the first costs.
pub(crate) async fn keys_after(
    pool: &Pool,
    account: Option<&AccountName>,
    after: Option<(DateTime<Utc>, &KeyPrefix)>,
    limit: usize,
) -> StoreResult<Vec<KeyRecord>> {
    let (at, prefix) = after.map_or((String::new(), ""), |(at, p)| (rows::ts(&at), p.as_str()));
    // One snapshot, so the account check and the page agree.
    let mut tx = begin_read(pool).await?;
    let rs = match account {
        Some(name) => {
            let id = account_id(&mut tx, name).await?;
            sqlx::query(&format!(
                "{KEY_SELECT} WHERE k.account_id = $1 AND (k.created_at, k.prefix) > ($2, $3) {KEY_ORDER} LIMIT $4"
            ))
            .bind(id)
            .bind(&at)
            .bind(prefix)
            .bind(sql_limit(limit))
            .fetch_all(&mut *tx)
            .await
        }
        None => {
            sqlx::query(&format!("{KEY_SELECT} WHERE (k.created_at, k.prefix) > ($1, $2) {KEY_ORDER} LIMIT $3"))
                .bind(&at)
                .bind(prefix)
                .bind(sql_limit(limit))
                .fetch_all(&mut *tx)
                .await
        }
    }
    .map_err(db)?;
    tx.commit().await.map_err(db)?;
    rs.iter().map(rows::key_record).collect()
}

fn sql_limit(limit: usize) -> i64 {
    i64::try_from(limit).unwrap_or(i64::MAX)
}

/// Keys, revoked ones included, optionally of one account.
pub(crate) async fn keys(pool: &Pool, account: Option<&AccountName>) -> StoreResult<Vec<KeyRecord>> {
    // One snapshot, so the account check and the list agree.
    let mut tx = begin_read(pool).await?;
    let rs = match account {
        Some(name) => {
            let id = account_id(&mut tx, name).await?;
            sqlx::query(&format!("{KEY_SELECT} WHERE k.account_id = $1 {KEY_ORDER}")).bind(id).fetch_all(&mut *tx).await
        }
        None => sqlx::query(&format!("{KEY_SELECT} {KEY_ORDER}")).fetch_all(&mut *tx).await,
    }
    .map_err(db)?;
    tx.commit().await.map_err(db)?;
    rs.iter().map(rows::key_record).collect()
}
