//! Storage of mds: async role traits combined in [`Store`], implemented
//! once for both backends.
//!
//! # Layout
//! - [`roles`]: what the service and the operator commands need from storage,
//!   one trait per role ([`AccessStore`], [`UsageStore`], [`CatalogStore`],
//!   [`IdentityStore`], [`NewsStore`], [`ActionStore`], [`PriceStore`], [`MetaStore`], [`AdminStore`]) and
//!   [`Store`], all of them. [`SnapshotImport`] and [`IdentityImport`]:
//!   what an identity import is given and what it did.
//! - [`actions`]: what [`ActionStore`] is given and answers besides the
//!   actions: unresolved rows, an import's counts, a read's filter.
//! - [`prices`]: what [`PriceStore`] is given and answers: a bar as stored,
//!   a day of them, an import's counts, the days held.
//! - [`error`]: [`StoreError`] and its opaque [`Cause`].
//! - [`sqlite`]: the embedded SQLite backend (the default).
//! - [`postgres`]: the PostgreSQL backend, for several nodes on one database.
//! - `portable` (private, `src/portable/`): the implementation of the roles,
//!   written once and compiled inside each backend module against that
//!   backend's pool, transactions, error mapping and SQL dialect.
//! - [`schema`]: where a store's schema stands against this build
//!   ([`SchemaState`], [`MetaStore::schema`]): behind (run `mds migrate`),
//!   current, or ahead and still usable (expand-only migrations).
//! - [`url`]: the database URL, with a `Debug` that masks the password.
//! - [`open`]: picks the backend from the URL; [`open_with_clock`], with
//!   the clock that dates what the store writes (a node's own).
//! - `rows` (private): row decoding, encodings and error sentences.
//!
//! Every mutation that changes what a serving node caches (companies, news,
//! tiers, accounts, keys) bumps the store's *generation* in the same
//! transaction; serving nodes poll [`MetaStore::generations`] and reload what
//! changed, so a change made by `mds keys revoke` in another process is
//! seen within one poll interval.

use std::borrow::Cow;
use std::sync::Arc;

use chrono::{DateTime, NaiveDate, Utc};
use mds_domain::clock::{Clock, SystemClock};
use mds_domain::usage::BillingMonth;
use mds_domain::{Account, AccountName, AdminTokenName, Environment, KeyHash, KeyPrefix, Tier, TierName};

pub mod actions;
pub mod error;
pub mod postgres;
pub mod prices;
pub mod roles;
mod rows;
pub mod schema;
pub mod sqlite;
pub mod url;
pub mod webhooks;

pub use actions::{
    ActionFilter, ActionImport, ActionMove, ActionsMoved, KeptUnresolved, ResolvedRow, UnresolvedAction,
};
pub use error::{Cause, StoreError, StoreResult};
pub use mds_domain::daily::DailyUsage;
pub use mds_domain::snapshot::SnapshotImport;
pub use prices::{
    DayBars, IdentityNow, PriceDay, PriceImport, PriceStep, Rebound, StoredBar, SymbolPeriods, SymbolRow,
};
pub use roles::{
    AccessStore, ActionStore, AdminStore, CatalogStore, EventStore, IdentityStore, MetaStore, NewsStore, PriceStore,
    Store, UsageStore, WebhookStore,
};
pub use schema::SchemaState;
pub use url::DatabaseUrl;
pub use webhooks::{DeliveryOutcome, NewWebhook, WebhookAttempt, WebhookDelivery, WebhookEndpoint, WebhookPatch};

/// Every role trait, for calling their methods on a concrete store:
/// `use mds_store::prelude::*;`.
pub mod prelude {
    pub use crate::roles::{
        AccessStore, ActionStore, AdminStore, CatalogStore, EventStore, IdentityStore, MetaStore, NewsStore,
        PriceStore, Store, UsageStore, WebhookStore,
    };
}

/// A page of the event log (`EventStore::event_page`), read in one
/// transaction with the ids that tell a reader's position apart.
#[derive(Debug, Clone, PartialEq)]
pub struct EventLogPage {
    /// The events after the position that pass the filter, in id order.
    pub events: Vec<mds_domain::StoredEvent>,
    /// The latest id issued (or the highest pruned, when the log is empty):
    /// a position beyond it was not issued by this service.
    pub latest: mds_domain::EventId,
    /// The highest id retention removed: a position below it has expired.
    pub pruned_through: mds_domain::EventId,
}

/// A stream's lease, for [`EventStore::open_stream`]: the stream `id` of
/// `key`, held by `node` until `until`, opened only if the key holds fewer
/// than `max` streams whose lease runs past `now` (across nodes).
#[derive(Debug, Clone)]
pub struct StreamLease {
    /// The stream's id (`str_…`).
    pub id: String,
    /// The key it is opened with.
    pub key: mds_domain::KeyPrefix,
    /// The node that serves it.
    pub node: String,
    /// When it is opened.
    pub now: DateTime<Utc>,
    /// Until when it is counted unless renewed.
    pub until: DateTime<Utc>,
    /// The most streams a key may hold.
    pub max: usize,
}

/// How many rows an upsert inserted, changed, and left as they were.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UpsertSummary {
    /// Rows that did not exist before.
    pub inserted: u64,
    /// Rows that existed and were replaced by different content.
    pub updated: u64,
    /// Rows that existed with exactly the content given: not written, so
    /// not marked changed.
    pub unchanged: u64,
}

/// What an import of snapshots or change files did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IdentityImport {
    /// Snapshots added (a series whose snapshot of the day was already
    /// there as given adds none).
    pub snapshots: u64,
    /// Runs opened (new or changed rows) and closed (gone or changed rows).
    pub runs_opened: u64,
    /// Runs closed.
    pub runs_closed: u64,
    /// Change-file rows new to the store.
    pub change_rows: u64,
    /// Company rows inserted, changed (content or status) and left as
    /// they were, of those the import concerned.
    pub companies: UpsertSummary,
    /// Companies stamped only because their events changed.
    pub restamped: u64,
    /// ISINs whose events changed.
    pub isins_changed: u64,
    /// Events stored after the import (an `isin_changed` counts twice).
    pub events: u64,
    /// The `companies` generation the import made, if it changed any.
    pub generation: Option<i64>,
}

/// A company as stored, with the stamps of its last change (contract
/// section 7.2): what a catalog is built from.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredCompany {
    /// The company, details included.
    pub company: mds_domain::Company,
    /// When its content last changed.
    pub updated_at: DateTime<Utc>,
    /// The `companies` generation of the upsert that last changed it.
    pub change_seq: i64,
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
    /// When the key stops working, if it expires (set at issue, or by a
    /// roll).
    pub expires_at: Option<DateTime<Utc>>,
}

impl KeyRecord {
    /// The key as the admin API shows it.
    pub fn view(&self) -> mds_domain::admin::KeyView {
        mds_domain::admin::KeyView {
            key_prefix: self.prefix.as_str().to_owned(),
            account: self.account.clone(),
            tier: self.tier.clone(),
            environment: self.environment.as_str().to_owned(),
            created_at: self.created_at,
            revoked_at: self.revoked_at,
            expires_at: self.expires_at,
        }
    }
}

/// An admin token as stored: its name, prefix and hash, never the token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdminTokenRecord {
    /// Its name (unique among the tokens not revoked); the audit log's actor.
    pub name: AdminTokenName,
    /// Its first [`mds_domain::admin::ADMIN_TOKEN_PREFIX_LEN`] characters.
    pub prefix: String,
    /// SHA-256 of the token.
    pub hash: KeyHash,
    /// When it was made.
    pub created_at: DateTime<Utc>,
    /// When it was revoked, if it was.
    pub revoked_at: Option<DateTime<Utc>>,
}

/// How long an `Idempotency-Key` is remembered.
pub const IDEMPOTENCY_TTL: chrono::TimeDelta = chrono::TimeDelta::hours(24);

/// How long a claimed idempotency key may stay without an answer before a
/// retry takes it over (its request's node died): longer than any request
/// may run (`--request-timeout` is at most 300 s).
pub const IDEMPOTENCY_ABANDONED: chrono::TimeDelta = chrono::TimeDelta::minutes(10);

/// What a claim of an idempotency key found ([`AdminStore::idempotency_claim`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IdempotencyClaim {
    /// The key was free: it is now claimed for this request, which is to
    /// run and then complete it.
    Claimed,
    /// The key was used with another request.
    OtherRequest,
    /// The first request with the key has not completed yet.
    Running,
    /// The first request's answer: its status and its body as stored.
    Done {
        /// Status.
        status: u16,
        /// Body, as completed.
        body: String,
    },
}

/// A rolled key: the old one as it is now (expiring at the end of the
/// overlap window) and the new one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RolledKey {
    /// The key rolled, with its new `expires_at`.
    pub old: KeyRecord,
    /// The key issued in its place.
    pub new: KeyRecord,
}

/// The tiers and accounts whole, as a serving node holds them to resolve a
/// key's limits, read in one snapshot at the `auth` generation
/// `generation`. Keys are not in it: a node reads those one by one
/// ([`KeyLookup`]).
#[derive(Debug, Clone, Default)]
pub struct AuthDirectory {
    /// The `auth` generation of the read.
    pub generation: i64,
    /// All accounts.
    pub accounts: Vec<Account>,
    /// All tiers.
    pub tiers: Vec<Tier>,
}

/// How many generations of the auth change log a store keeps ([`AuthChanges`]):
/// a node further behind re-reads what it holds. At one change a second,
/// over a day.
pub const AUTH_CHANGES_KEPT: i64 = 100_000;

/// An active key as a serving node resolves it: its record, whether its
/// account is entitled, and its plan tier's limits, all from one read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActiveKey {
    /// The key (not revoked).
    pub record: KeyRecord,
    /// Whether its account is entitled.
    pub entitled: bool,
    /// The tier it was issued on, as it is now.
    pub plan_tier: Tier,
}

/// The active keys among some prefixes, read at the `auth` generation
/// `generation` (in one snapshot): a node may keep them as they are until
/// a change after `generation` touches them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KeyLookup {
    /// The `auth` generation of the read.
    pub generation: i64,
    /// The active keys found; a prefix not among them has no key or a
    /// revoked one.
    pub keys: Vec<ActiveKey>,
}

/// What changed in keys, tiers and accounts after some `auth` generation,
/// from the change log, read in one snapshot at `generation`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuthChanges {
    /// The `auth` generation of the read: the changes are those up to it.
    pub generation: i64,
    /// False when the log no longer reaches back to the generation asked
    /// for (pruned, or the store is older than the asker): the asker must
    /// re-read every key it holds and the directory.
    pub complete: bool,
    /// The keys created, revoked or otherwise changed, each once.
    pub keys: Vec<String>,
    /// Whether a tier or account changed (the directory is to be re-read).
    pub directory: bool,
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
    /// Bumped by every usage batch applied (a node's flush): what a node
    /// keeps of the store's counts it keeps for this generation.
    pub usage: i64,
    /// Bumped by a corporate-action import that stores or changes an
    /// action (0 until the first): what a node keeps of the actions routes'
    /// pages is kept for this generation.
    pub actions: i64,
    /// Bumped by a price import that writes a day (0 until the first):
    /// what a node keeps of the price routes' answers is kept for this
    /// generation.
    pub prices: i64,
}

/// What one key did on one day (UTC) on one route, to add to the store: the
/// requests the quota counts and the `304`s it does not. The month's count
/// of the key is the sum of its days' `requests`, so the store derives it
/// from these and the two never disagree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageDelta {
    /// The key.
    pub key: KeyPrefix,
    /// The day (UTC) the requests were admitted on.
    pub day: NaiveDate,
    /// The route template (`/v1/companies`), 1 to [`MAX_USAGE_ROUTE_CHARS`]
    /// characters.
    pub route: Cow<'static, str>,
    /// Requests counted against the quota.
    pub requests: u64,
    /// Conditional requests answered `304` (free).
    pub not_modified: u64,
}

impl UsageDelta {
    /// `requests` counted requests of `key` on `day` on `route`, no `304`.
    pub fn counted(key: KeyPrefix, day: NaiveDate, route: impl Into<Cow<'static, str>>, requests: u64) -> Self {
        UsageDelta { key, day, route: route.into(), requests, not_modified: 0 }
    }

    /// The billing month of its day.
    pub fn month(&self) -> BillingMonth {
        BillingMonth::of_day(self.day)
    }
}

/// The longest route label of a [`UsageDelta`], in characters.
pub const MAX_USAGE_ROUTE_CHARS: usize = 200;

/// A batch of usage deltas with an id that makes applying it idempotent: a
/// batch whose id was applied before is not counted again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageBatch {
    /// Unique id (`<node id>:<sequence>`), at most 100 characters.
    pub id: String,
    /// The deltas; a key, day and route appear at most once.
    pub deltas: Vec<UsageDelta>,
}

/// What applying a [`UsageBatch`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AppliedBatch {
    /// Whether it was applied now (not before, under the same id).
    pub fresh: bool,
    /// The `usage` generation as of which the store has it: the one the
    /// batch moved the counter to, or for a batch applied before, the
    /// counter now (at or after the one it moved it to; a batch whose
    /// commit was not acknowledged may so look later than it is).
    pub generation: i64,
}

/// A statement slower than this is logged, at INFO: bulk reads (the catalog
/// stream, a snapshot) are slow by nature, so this is not a warning.
pub(crate) const SLOW_STATEMENT: std::time::Duration = std::time::Duration::from_secs(1);

/// Opens the store a URL names: `sqlite:…` or a bare path for SQLite
/// (created if missing), `postgres://…` or `postgresql://…` for PostgreSQL
/// (the database must exist). What it writes is dated by the system clock
/// ([`open_with_clock`] with [`SystemClock`]).
pub async fn open(url: &DatabaseUrl) -> StoreResult<Arc<dyn Store>> {
    open_with_clock(url, Arc::new(SystemClock)).await
}

/// [`open`], the times the store writes (events, migrations, imports,
/// usage) read from `clock`: a node's store is opened with the node's clock
/// (`NodeConfig::clock`), so the node, its limits and its store tell one
/// time, and a test that moves it moves them all.
pub async fn open_with_clock(url: &DatabaseUrl, clock: Arc<dyn Clock>) -> StoreResult<Arc<dyn Store>> {
    match url.backend() {
        url::Backend::Sqlite => Ok(Arc::new(sqlite::SqliteStore::connect(url).await?.with_clock(clock))),
        url::Backend::Postgres => Ok(Arc::new(postgres::PgStore::connect(url).await?.with_clock(clock))),
    }
}
