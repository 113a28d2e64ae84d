//! Storage of mds: one narrow async [`Store`] trait, one implementation per
//! backend.
//!
//! # Layout
//! - [`Store`]: what the service and the operator commands need from storage.
//! - [`sqlite`]: the embedded SQLite backend (the default).
//! - [`postgres`]: the PostgreSQL backend, for several nodes on one database.
//! - [`url`]: the database URL, with a `Debug` that masks the password.
//! - [`open`]: picks the backend from the URL.
//! - [`testsuite`]: the storage test suite every backend runs
//!   ([`store_test_suite!`]).
//! - `rows` (private): row decoding and error sentences shared by backends.
//!
//! Every mutation that changes what a serving node caches (companies, news,
//! tiers, accounts, keys) bumps the store's *generation* in the same
//! transaction; serving nodes poll [`Store::generations`] and reload what
//! changed, so a change made by `mds keys revoke` in another process is
//! seen within one poll interval.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use mds_domain::usage::{BillingMonth, QuotaHistory};
use mds_domain::{Account, AccountName, Article, Company, Environment, KeyHash, KeyPrefix, Slug, Tier, TierName};

pub mod postgres;
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

/// What mds needs from storage. Implemented once per backend.
#[async_trait]
pub trait Store: Send + Sync + 'static {
    /// Creates or upgrades the schema; seeds the default tiers and the cursor
    /// secret on first run. Idempotent.
    async fn migrate(&self) -> StoreResult<()>;

    /// A cheap round trip, for readiness.
    async fn ping(&self) -> StoreResult<()>;

    /// The change counters, each bumped in the same transaction as the
    /// mutation of its kind of data.
    async fn generations(&self) -> StoreResult<Generations>;

    /// The secret that signs pagination cursors (32 random bytes made by
    /// `migrate`, shared by every node on the same store).
    async fn cursor_secret(&self) -> StoreResult<Vec<u8>>;

    /// Inserts or replaces companies by ISIN, all in one transaction.
    async fn upsert_companies(&self, rows: &[Company]) -> StoreResult<UpsertSummary>;

    /// Every company, ordered by ticker then ISIN.
    async fn companies(&self) -> StoreResult<Vec<Company>>;

    /// How many companies there are (for a reader of [`Store::companies_sorted`]
    /// to allocate once).
    async fn company_count(&self) -> StoreResult<u64>;

    /// Every company in `(ticker, isin)` byte order, handed to `each` one at a
    /// time (nothing else is held in memory). Stops at, and returns, the first
    /// error. The rows are those of one consistent read.
    async fn companies_sorted(&self, each: &mut (dyn FnMut(Company) + Send)) -> StoreResult<()>;

    /// Saves `bytes` as the catalog snapshot of companies generation
    /// `generation`, replacing every other snapshot, all or nothing. Saving
    /// the same generation twice keeps one (either copy: they are equal).
    /// Saves from several nodes at once do not fail, and leave one whole
    /// snapshot.
    async fn save_catalog_snapshot(&self, generation: i64, bytes: &[u8]) -> StoreResult<()>;

    /// The snapshot saved for `generation`, if any: always a whole one, read
    /// in one transaction (never half of one being replaced). Holds no more
    /// than the snapshot and one stored chunk in memory.
    async fn catalog_snapshot(&self, generation: i64) -> StoreResult<Option<Vec<u8>>>;

    /// Inserts or replaces articles by slug, all in one transaction.
    async fn upsert_articles(&self, rows: &[Article]) -> StoreResult<UpsertSummary>;

    /// One article by slug.
    async fn article(&self, slug: &Slug) -> StoreResult<Option<Article>>;

    /// How many articles there are.
    async fn article_count(&self) -> StoreResult<u64>;

    /// Every tier, ordered by name.
    async fn tiers(&self) -> StoreResult<Vec<Tier>>;

    /// Creates or changes a tier; returns true when it was created. Records
    /// the quota in the tier's history as of `now`.
    async fn set_tier(&self, tier: &Tier, now: DateTime<Utc>) -> StoreResult<bool>;

    /// Creates an account (entitled, recorded in its entitlement history as of
    /// `now`). `Conflict` if the name is taken.
    async fn create_account(&self, name: &AccountName, now: DateTime<Utc>) -> StoreResult<Account>;

    /// Sets an account's entitlement, recorded in its history as of `now`.
    /// `NotFound` if there is no such account.
    async fn set_account_entitled(
        &self,
        name: &AccountName,
        entitled: bool,
        now: DateTime<Utc>,
    ) -> StoreResult<Account>;

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

    /// Adds a batch of usage counts in one transaction, unless a batch with
    /// the same id was applied before. Returns whether it was applied now.
    /// Deltas for unknown keys are `NotFound` and nothing is applied.
    async fn apply_usage(&self, batch: &UsageBatch) -> StoreResult<bool>;

    /// A key's stored request counts for the months `from..=to` that have
    /// any, oldest first.
    async fn usage(
        &self,
        key: &KeyPrefix,
        from: BillingMonth,
        to: BillingMonth,
    ) -> StoreResult<Vec<(BillingMonth, u64)>>;

    /// The history of the key's quota: its plan tier's and the evaluation
    /// tier's quota changes and its account's entitlement changes.
    /// `NotFound` if there is no such key (revoked keys have history).
    async fn quota_history(&self, key: &KeyPrefix) -> StoreResult<QuotaHistory>;
}

/// Opens the store a URL names: `sqlite:…` or a bare path for SQLite
/// (created if missing), `postgres://…` or `postgresql://…` for PostgreSQL
/// (the database must exist).
pub async fn open(url: &DatabaseUrl) -> StoreResult<std::sync::Arc<dyn Store>> {
    match url.backend() {
        url::Backend::Sqlite => Ok(std::sync::Arc::new(sqlite::SqliteStore::connect(url).await?)),
        url::Backend::Postgres => Ok(std::sync::Arc::new(postgres::PgStore::connect(url).await?)),
    }
}
