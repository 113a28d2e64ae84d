//! Storage of mds: one narrow async [`Store`] trait, one implementation per
//! backend.
//!
//! # Layout
//! - [`Store`]: what the service and the operator commands need from storage.
//! - [`sqlite`]: the embedded SQLite backend (the default).
//! - [`url`]: the database URL, with a `Debug` that masks the password.
//! - [`open`]: picks the backend from the URL.
//! - [`testsuite`]: the storage test suite every backend runs
//!   ([`store_test_suite!`]).
//! - `rows` (private): row decoding and error sentences shared by backends.
//!
//! Every mutation that changes what a serving node caches (companies, news,
//! tiers, accounts, keys) bumps the store's *generation* in the same
//! transaction; serving nodes poll [`Store::generation`] and reload what
//! changed, so a change made by `mds keys revoke` in another process is
//! seen within one poll interval.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use mds_domain::{Account, AccountName, Article, Company, Environment, KeyHash, KeyPrefix, Slug, Tier, TierName};

mod rows;
pub mod sqlite;
pub mod testsuite;
pub mod url;

pub use url::DatabaseUrl;

/// Errors of the store. The `Display` of `NotFound`, `Conflict` and `Invalid`
/// is a sentence fit for an operator; the others carry their cause for the log.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The named thing does not exist (`no account named "acme"`).
    #[error("{0}")]
    NotFound(String),
    /// The thing exists already (`an account named "acme" already exists`).
    #[error("{0}")]
    Conflict(String),
    /// The request cannot be applied as given.
    #[error("{0}")]
    Invalid(String),
    /// The store cannot be reached (connection refused, pool timed out, I/O).
    #[error("store unavailable: {0}")]
    Unavailable(#[source] sqlx::Error),
    /// Any other database error.
    #[error("store error: {0}")]
    Database(#[source] sqlx::Error),
}

/// Result of a store operation.
pub type StoreResult<T> = Result<T, StoreError>;

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
    /// First 12 characters of the key; unique.
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
    /// First 12 characters of the key.
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

/// What mds needs from storage. Implemented once per backend.
#[async_trait]
pub trait Store: Send + Sync + 'static {
    /// Creates or upgrades the schema; seeds the default tiers and the cursor
    /// secret on first run. Idempotent.
    async fn migrate(&self) -> StoreResult<()>;

    /// A cheap round trip, for readiness.
    async fn ping(&self) -> StoreResult<()>;

    /// The change counter, bumped by every mutation of cached data.
    async fn generation(&self) -> StoreResult<i64>;

    /// The secret that signs pagination cursors (32 random bytes made by
    /// `migrate`, shared by every node on the same store).
    async fn cursor_secret(&self) -> StoreResult<Vec<u8>>;

    /// Inserts or replaces companies by ISIN, all in one transaction.
    async fn upsert_companies(&self, rows: &[Company]) -> StoreResult<UpsertSummary>;

    /// Every company, ordered by ticker then ISIN.
    async fn companies(&self) -> StoreResult<Vec<Company>>;

    /// Inserts or replaces articles by slug, all in one transaction.
    async fn upsert_articles(&self, rows: &[Article]) -> StoreResult<UpsertSummary>;

    /// One article by slug.
    async fn article(&self, slug: &Slug) -> StoreResult<Option<Article>>;

    /// How many articles there are.
    async fn article_count(&self) -> StoreResult<u64>;

    /// Every tier, ordered by name.
    async fn tiers(&self) -> StoreResult<Vec<Tier>>;

    /// Creates or changes a tier; returns true when it was created.
    async fn set_tier(&self, tier: &Tier) -> StoreResult<bool>;

    /// Creates an account (entitled). `Conflict` if the name is taken.
    async fn create_account(&self, name: &AccountName, now: DateTime<Utc>) -> StoreResult<Account>;

    /// Sets an account's entitlement. `NotFound` if there is no such account.
    async fn set_account_entitled(&self, name: &AccountName, entitled: bool) -> StoreResult<Account>;

    /// Every account, ordered by name.
    async fn accounts(&self) -> StoreResult<Vec<Account>>;

    /// Stores a new key. `NotFound` if the account or tier does not exist;
    /// `Conflict` if the prefix is taken (the caller makes a new key).
    async fn create_key(&self, key: &NewKey) -> StoreResult<KeyRecord>;

    /// Revokes a key by prefix. `NotFound` if there is no such key. Revoking a
    /// revoked key changes nothing and returns it as it is.
    async fn revoke_key(&self, prefix: &KeyPrefix, now: DateTime<Utc>) -> StoreResult<KeyRecord>;

    /// Keys, revoked ones included, optionally of one account (`NotFound` if
    /// that account does not exist), ordered by creation then prefix.
    async fn keys(&self, account: Option<&AccountName>) -> StoreResult<Vec<KeyRecord>>;

    /// Active keys, accounts and tiers, in one read transaction.
    async fn auth_snapshot(&self) -> StoreResult<AuthSnapshot>;
}

/// Opens the store a URL names: `sqlite:…` or a bare path for SQLite
/// (created if missing). PostgreSQL comes with its backend.
pub async fn open(url: &DatabaseUrl) -> StoreResult<std::sync::Arc<dyn Store>> {
    match url.backend() {
        url::Backend::Sqlite => Ok(std::sync::Arc::new(sqlite::SqliteStore::connect(url).await?)),
        url::Backend::Postgres => {
            Err(StoreError::Invalid("PostgreSQL is not supported by this build yet; use a sqlite: URL".into()))
        }
    }
}
