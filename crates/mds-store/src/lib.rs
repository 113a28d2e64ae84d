//! Storage of mds: async role traits combined in [`Store`], implemented
//! once for both backends.
//!
//! # Layout
//! - [`roles`]: what the service and the operator commands need from storage,
//!   one trait per role ([`AccessStore`], [`UsageStore`], [`CatalogStore`],
//!   [`NewsStore`], [`MetaStore`]) and [`Store`], all of them.
//! - [`error`]: [`StoreError`] and its opaque [`Cause`].
//! - [`sqlite`]: the embedded SQLite backend (the default).
//! - [`postgres`]: the PostgreSQL backend, for several nodes on one database.
//! - `shared` (private, `src/shared/`): the implementation of the roles,
//!   written once and compiled inside each backend module against that
//!   backend's pool, transactions, error mapping and SQL dialect.
//! - [`url`]: the database URL, with a `Debug` that masks the password.
//! - [`open`]: picks the backend from the URL.
//! - `rows` (private): row decoding, encodings and error sentences.
//!
//! Every mutation that changes what a serving node caches (companies, news,
//! tiers, accounts, keys) bumps the store's *generation* in the same
//! transaction; serving nodes poll [`MetaStore::generations`] and reload what
//! changed, so a change made by `mds keys revoke` in another process is
//! seen within one poll interval.

use chrono::{DateTime, Utc};
use mds_domain::usage::BillingMonth;
use mds_domain::{Account, AccountName, Environment, KeyHash, KeyPrefix, Tier, TierName};

pub mod error;
pub mod postgres;
pub mod roles;
mod rows;
pub mod sqlite;
pub mod url;

pub use error::{Cause, StoreError, StoreResult};
pub use roles::{AccessStore, CatalogStore, MetaStore, NewsStore, Store, UsageStore};
pub use url::DatabaseUrl;

/// Every role trait, for calling their methods on a concrete store:
/// `use mds_store::prelude::*;`.
pub mod prelude {
    pub use crate::roles::{AccessStore, CatalogStore, MetaStore, NewsStore, Store, UsageStore};
}

/// How many rows an upsert inserted and how many it updated.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UpsertSummary {
    /// Rows that did not exist before.
    pub inserted: u64,
    /// Rows that existed and were replaced.
    pub updated: u64,
}

/// A key as stored: never the key itself, only its hash and prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyRecord {
    /// The key's prefix (17 characters; 12 for a key issued before); unique.
    pub prefix: KeyPrefix,
    /// SHA-256 of the whole key.
    pub hash: KeyHash,
    /// Owning account.
    pub account: AccountName,
    /// Tier the key was issued on (`plan_tier`).
    pub tier: TierName,
    /// `live` or `test`.
    pub environment: Environment,
    /// Creation instant.
    pub created_at: DateTime<Utc>,
    /// Revocation instant, if revoked.
    pub revoked_at: Option<DateTime<Utc>>,
}

/// A key to be stored.
#[derive(Debug, Clone)]
pub struct NewKey {
    /// The key's prefix ([`mds_domain::key::KEY_PREFIX_LEN`] characters).
    pub prefix: KeyPrefix,
    /// SHA-256 of the key.
    pub hash: KeyHash,
    /// Owning account (must exist).
    pub account: AccountName,
    /// Tier (must exist).
    pub tier: TierName,
    /// Environment, matching the key's scheme.
    pub environment: Environment,
    /// Creation instant.
    pub created_at: DateTime<Utc>,
}

/// Everything a serving node needs to authenticate and classify requests,
/// read in one consistent snapshot.
#[derive(Debug, Clone, Default)]
pub struct AuthSnapshot {
    /// Keys that are not revoked.
    pub keys: Vec<KeyRecord>,
    /// All accounts.
    pub accounts: Vec<Account>,
    /// All tiers.
    pub tiers: Vec<Tier>,
}

/// Change counters, one per kind of cached data, so a node reloads only what
/// changed (a revoked key does not rebuild the company catalog).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Generations {
    /// Bumped by company upserts.
    pub companies: i64,
    /// Bumped by article upserts.
    pub news: i64,
    /// Bumped by tier, account and key changes.
    pub auth: i64,
}

/// Requests to add to one key's count for one month.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageDelta {
    /// The key.
    pub key: KeyPrefix,
    /// The billing month the requests were made in.
    pub month: BillingMonth,
    /// How many requests.
    pub requests: u64,
}

/// A batch of usage deltas with an id that makes applying it idempotent: a
/// batch whose id was applied before is not counted again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageBatch {
    /// Unique id (`<node id>:<sequence>`), at most 100 characters.
    pub id: String,
    /// The deltas; a key and month appear at most once.
    pub deltas: Vec<UsageDelta>,
}

/// A statement slower than this is logged, at INFO: bulk reads (the catalog
/// stream, a snapshot) are slow by nature, so this is not a warning.
pub(crate) const SLOW_STATEMENT: std::time::Duration = std::time::Duration::from_secs(1);

/// Opens the store a URL names: `sqlite:…` or a bare path for SQLite
/// (created if missing), `postgres://…` or `postgresql://…` for PostgreSQL
/// (the database must exist).
pub async fn open(url: &DatabaseUrl) -> StoreResult<std::sync::Arc<dyn Store>> {
    match url.backend() {
        url::Backend::Sqlite => Ok(std::sync::Arc::new(sqlite::SqliteStore::connect(url).await?)),
        url::Backend::Postgres => Ok(std::sync::Arc::new(postgres::PgStore::connect(url).await?)),
    }
}
