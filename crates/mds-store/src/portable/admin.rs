//! Admin tokens, the audit log, and the audited changes of tiers, accounts
//! and keys (contract section 9).
//!
//! An audited change runs, in the write transaction it is given (begun and
//! committed by `roles`), the change of `access` (`access::*_on`), reads
//! the record before it where there is one, and appends its audit entry:
//! the change and its entry commit together or not at all.
//!
//! Compiled once per backend (see `portable/mod.rs`).

use chrono::{DateTime, Utc};
use mds_domain::{Account, AccountName, Actor, AdminTokenName, AuditEntry, KeyHash, KeyPrefix, Tier};
use serde_json::{Value, json};

use super::access::{self, key_by_prefix};
use super::{Conn, Pool, db, unique_or};
use crate::rows::{self, RowExt};
use crate::{AdminTokenRecord, KeyRecord, RolledKey, StoreError, StoreResult};

const TOKEN_SELECT: &str = "SELECT name, prefix, hash_hex, created_at, revoked_at FROM admin_tokens";

/// Appends the audit entry of the change made in the caller's write
/// transaction, so the change and its entry commit together or not at all:
/// `action` (`kind.verb`) on the item `id`, its target `kind:id`.
pub(super) async fn audit(
    tx: &mut Conn,
    actor: &Actor,
    at: DateTime<Utc>,
    action: &str,
    id: &(dyn std::fmt::Display + Sync),
    before: Option<Value>,
    after: Option<Value>,
) -> StoreResult<()> {
    sqlx::query(
        "INSERT INTO audit_log (at, actor, action, target, before_json, after_json) VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(rows::ts(&at))
    .bind(actor.as_str())
    .bind(action)
    .bind(format!("{}:{id}", action.split_once('.').map_or(action, |(kind, _)| kind)))
    .bind(before.map(|v| v.to_string()))
    .bind(after.map(|v| v.to_string()))
    .execute(tx)
    .await
    .map_err(db)?;
    Ok(())
}

fn tier_json(t: &Tier) -> Value {
    serde_json::to_value(t).expect("a tier serialises")
}

fn account_json(a: &Account) -> Value {
    serde_json::to_value(a).expect("an account serialises")
}

fn key_json(k: &KeyRecord) -> Value {
    serde_json::to_value(k.view()).expect("a key serialises")
}

fn token_json(t: &AdminTokenRecord) -> Value {
    json!({
        "name": t.name,
        "prefix": t.prefix,
        "created_at": mds_domain::time::format_utc(&t.created_at),
        "revoked_at": t.revoked_at.as_ref().map(mds_domain::time::format_utc),
    })
}

/// Sets a tier and records `tier.create` / `tier.update`.
pub(crate) async fn set_tier(tx: &mut Conn, tier: &Tier, actor: &Actor, now: DateTime<Utc>) -> StoreResult<bool> {
    let before = access::tiers_on(tx).await?.into_iter().find(|t| t.name == tier.name);
    let created = access::set_tier_on(tx, tier, now).await?;
    let action = if created { "tier.create" } else { "tier.update" };
    audit(tx, actor, now, action, &tier.name, before.as_ref().map(tier_json), Some(tier_json(tier))).await?;
    Ok(created)
}

/// Creates an account and records `account.create`.
pub(crate) async fn create_account(
    tx: &mut Conn,
    name: &AccountName,
    actor: &Actor,
    now: DateTime<Utc>,
) -> StoreResult<Account> {
    let account = access::create_account_on(tx, name, now).await?;
    audit(tx, actor, now, "account.create", name, None, Some(account_json(&account))).await?;
    Ok(account)
}

/// Sets an account's entitlement and records `account.update`.
pub(crate) async fn set_account_entitled(
    tx: &mut Conn,
    name: &AccountName,
    entitled: bool,
    actor: &Actor,
    now: DateTime<Utc>,
) -> StoreResult<Account> {
    let before = access::accounts_on(tx).await?.into_iter().find(|a| &a.name == name);
    let account = access::set_account_entitled_on(tx, name, entitled, now).await?;
    let (before, after) = (before.as_ref().map(account_json), Some(account_json(&account)));
    audit(tx, actor, now, "account.update", name, before, after).await?;
    Ok(account)
}

/// Stores a key and records `key.create`.
pub(crate) async fn create_key(tx: &mut Conn, key: &KeyRecord, actor: &Actor) -> StoreResult<KeyRecord> {
    let created = access::create_key_on(tx, key).await?;
    audit(tx, actor, key.created_at, "key.create", &key.prefix, None, Some(key_json(&created))).await?;
    Ok(created)
}

/// Rolls a key ([`access::roll_key_on`]) and records `key.roll` on the old
/// key: before, the old key as it was; after, the old key with its expiry
/// and the new key.
pub(crate) async fn roll_key(
    tx: &mut Conn,
    old: &KeyPrefix,
    new: (&KeyPrefix, KeyHash),
    actor: &Actor,
    now: DateTime<Utc>,
    old_expires_at: DateTime<Utc>,
) -> StoreResult<RolledKey> {
    let before = key_by_prefix(tx, old, false).await?;
    let rolled = access::roll_key_on(tx, old, new, now, old_expires_at).await?;
    let after = json!({ "old": key_json(&rolled.old), "new": key_json(&rolled.new) });
    audit(tx, actor, now, "key.roll", old, before.as_ref().map(key_json), Some(after)).await?;
    Ok(rolled)
}

/// Revokes a key and records `key.revoke`, unless it was revoked already.
pub(crate) async fn revoke_key(
    tx: &mut Conn,
    prefix: &KeyPrefix,
    actor: &Actor,
    now: DateTime<Utc>,
) -> StoreResult<(KeyRecord, bool)> {
    let (key, before) = access::revoke_key_on(tx, prefix, now).await?;
    let Some(before) = before else {
        return Ok((key, false));
    };
    audit(tx, actor, now, "key.revoke", prefix, Some(key_json(&before)), Some(key_json(&key))).await?;
    Ok((key, true))
}

/// One key by prefix.
pub(crate) async fn key(pool: &Pool, prefix: &KeyPrefix) -> StoreResult<Option<KeyRecord>> {
    key_by_prefix(&mut *pool.acquire().await.map_err(db)?, prefix, false).await
}

fn token(r: &impl RowExt) -> StoreResult<AdminTokenRecord> {
    let name = r.text("name")?;
    let prefix = r.text("prefix")?;
    let hash = r.text("hash_hex")?;
    Ok(AdminTokenRecord {
        name: AdminTokenName::parse(&name).map_err(|e| rows::corrupt(format_args!("admin_tokens: {e}")))?,
        hash: KeyHash::from_hex(&hash)
            .ok_or_else(|| rows::corrupt(format_args!("admin_tokens {prefix}: hash_hex is not 32 bytes of hex")))?,
        created_at: rows::instant("admin_tokens", "created_at", &r.text("created_at")?)?,
        revoked_at: rows::opt_instant("admin_tokens", "revoked_at", r.opt_text("revoked_at")?)?,
        prefix,
    })
}

fn token_exists(name: &AdminTokenName) -> StoreError {
    StoreError::Conflict(format!("an admin token named \"{name}\" exists; revoke it first or choose another name"))
}

/// Stores an admin token and records `admin_token.create`.
pub(crate) async fn create_token(tx: &mut Conn, t: &AdminTokenRecord, actor: &Actor) -> StoreResult<AdminTokenRecord> {
    let taken = sqlx::query(&format!("{TOKEN_SELECT} WHERE name = $1 AND revoked_at IS NULL"))
        .bind(t.name.as_str())
        .fetch_optional(&mut *tx)
        .await
        .map_err(db)?;
    if taken.is_some() {
        return Err(token_exists(&t.name));
    }
    sqlx::query(
        "INSERT INTO admin_tokens (name, prefix, hash_hex, created_at, revoked_at) VALUES ($1, $2, $3, $4, NULL)",
    )
    .bind(t.name.as_str())
    .bind(&t.prefix)
    .bind(t.hash.to_hex())
    .bind(rows::ts(&t.created_at))
    .execute(&mut *tx)
    .await
    // A concurrent create of the same name (PostgreSQL), or a prefix drawn twice.
    .map_err(|e| {
        unique_or(e, |c| match c {
            Some("admin_tokens_active_name") | None => token_exists(&t.name),
            Some(_) => StoreError::Conflict("an admin token with the same prefix exists; try again".into()),
        })
    })?;
    let mut stored = t.clone();
    stored.revoked_at = None;
    audit(tx, actor, t.created_at, "admin_token.create", &t.name, None, Some(token_json(&stored))).await?;
    Ok(stored)
}

/// Revokes the active admin token of that name and records
/// `admin_token.revoke`.
pub(crate) async fn revoke_token(
    tx: &mut Conn,
    name: &AdminTokenName,
    actor: &Actor,
    now: DateTime<Utc>,
) -> StoreResult<AdminTokenRecord> {
    let r = sqlx::query(&format!("{TOKEN_SELECT} WHERE name = $1 AND revoked_at IS NULL"))
        .bind(name.as_str())
        .fetch_optional(&mut *tx)
        .await
        .map_err(db)?
        .ok_or_else(|| StoreError::NotFound(format!("no admin token named \"{name}\" (or it is revoked)")))?;
    let before = token(&r)?;
    let done = sqlx::query("UPDATE admin_tokens SET revoked_at = $1 WHERE prefix = $2 AND revoked_at IS NULL")
        .bind(rows::ts(&now))
        .bind(&before.prefix)
        .execute(&mut *tx)
        .await
        .map_err(db)?;
    if done.rows_affected() != 1 {
        // Revoked by another writer since the read (PostgreSQL).
        return Err(StoreError::NotFound(format!("no admin token named \"{name}\" (or it is revoked)")));
    }
    let after = AdminTokenRecord { revoked_at: Some(now), ..before.clone() };
    audit(tx, actor, now, "admin_token.revoke", name, Some(token_json(&before)), Some(token_json(&after))).await?;
    Ok(after)
}

/// Every admin token, oldest first.
pub(crate) async fn tokens(pool: &Pool) -> StoreResult<Vec<AdminTokenRecord>> {
    let rs = sqlx::query(&format!("{TOKEN_SELECT} ORDER BY created_at, prefix")).fetch_all(pool).await.map_err(db)?;
    rs.iter().map(token).collect()
}

/// The active admin token with this prefix.
pub(crate) async fn token_by_prefix(pool: &Pool, prefix: &str) -> StoreResult<Option<AdminTokenRecord>> {
    let r = sqlx::query(&format!("{TOKEN_SELECT} WHERE prefix = $1 AND revoked_at IS NULL"))
        .bind(prefix)
        .fetch_optional(pool)
        .await
        .map_err(db)?;
    r.as_ref().map(token).transpose()
}

/// A page of the audit log, newest first.
pub(crate) async fn audit_log(pool: &Pool, before: Option<i64>, limit: usize) -> StoreResult<Vec<AuditEntry>> {
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let rs = sqlx::query(
        "SELECT id, at, actor, action, target, before_json, after_json FROM audit_log \
         WHERE id < $1 ORDER BY id DESC LIMIT $2",
    )
    .bind(before.unwrap_or(i64::MAX))
    .bind(limit)
    .fetch_all(pool)
    .await
    .map_err(db)?;
    rs.iter()
        .map(|r| {
            let json = |col: &str| -> StoreResult<Option<Value>> {
                r.opt_text(col)?
                    .map(|s| serde_json::from_str(&s).map_err(|e| rows::corrupt(format_args!("audit_log.{col}: {e}"))))
                    .transpose()
            };
            Ok(AuditEntry {
                id: r.int("id")?,
                at: rows::instant("audit_log", "at", &r.text("at")?)?,
                actor: r.text("actor")?,
                action: r.text("action")?,
                target: r.text("target")?,
                before: json("before_json")?,
                after: json("after_json")?,
            })
        })
        .collect()
}
