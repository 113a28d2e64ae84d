//! What mds needs from storage, split by role, and [`Store`], all of them.
//!
//! A part of mds that needs one role takes that role only: the limiter and
//! the meter take a [`UsageStore`], for instance. Whoever holds the whole
//! store (`Arc<dyn Store>`) hands it to them as it is: `&dyn Store` coerces
//! to `&dyn UsageStore` (trait upcasting). A backend implements every role;
//! [`Store`] then comes with them.
//!
//! - [`MetaStore`], the schema, readiness, change counters, cursor secret.
//! - [`CatalogStore`], companies and catalog snapshots.
//! - [`IdentityStore`], identity over time: exchange snapshots, change
//!   files and the identity events made of them (contract section 10).
//! - [`NewsStore`], articles and news index snapshots.
//! - [`ActionStore`], corporate actions and the rows resolved to no ISIN
//!   (contract section 13).
//! - [`PriceStore`], end-of-day bars, a day at a time (contract section 14).
//! - [`AccessStore`], tiers, accounts, keys and the auth snapshot.
//! - [`UsageStore`], usage counts and quota history.
//! - [`AdminStore`], admin tokens, the audit log, and the changes of
//!   [`AccessStore`] made by someone (the CLI, an admin token), each
//!   recorded in the audit log in its own transaction.
//!
//! - [`EventStore`], the event log (contract section 11.1): read and
//!   pruned here; written by the changes that make its events, in their
//!   transactions.
//!
//! - [`WebhookStore`], webhook endpoints (contract section 11.2) and their
//!   delivery cursors, claimed by one node at a time with a lease.
//!
//! To call the roles' methods on a concrete store (a `SqliteStore` in a
//! test), bring them all into scope with `use mds_store::prelude::*;`.

use async_trait::async_trait;
use chrono::{DateTime, NaiveDate, Utc};
use mds_domain::actions::{ActionId, CorporateAction};
use mds_domain::news::NewsKey;
use mds_domain::news_search::ArticleText;
use mds_domain::snapshot::{NameChange, Series, SymbolChange};
use mds_domain::usage::{BillingMonth, QuotaHistory};
use mds_domain::{
    Account, AccountName, Actor, AdminTokenName, Article, ArticleSummary, AuditEntry, Company, IdentityEvent, Isin,
    KeyHash, KeyPrefix, NewsFilter, Slug, Tier, TierName,
};

use crate::{ActionFilter, ActionImport, ActionMove, ActionsMoved, KeptUnresolved, ResolvedRow, UnresolvedAction};
use crate::{
    AdminTokenRecord, AppliedBatch, AuthChanges, AuthDirectory, DailyUsage, EventLogPage, Generations,
    IdempotencyClaim, IdentityImport, KeyLookup, KeyRecord, RolledKey, SnapshotImport, StoreResult, StoredCompany,
    UpsertSummary, UsageBatch,
};
use crate::{DayBars, PriceDay, PriceImport};
use crate::{DeliveryOutcome, NewWebhook, WebhookAttempt, WebhookDelivery, WebhookEndpoint, WebhookPatch};

/// Every role of storage: what the service and the operator commands need.
/// Implemented for anything that implements all the roles.
pub trait Store:
    MetaStore
    + CatalogStore
    + IdentityStore
    + NewsStore
    + ActionStore
    + PriceStore
    + AccessStore
    + UsageStore
    + AdminStore
    + EventStore
    + WebhookStore
{
}

impl<
    T: MetaStore
        + CatalogStore
        + IdentityStore
        + NewsStore
        + ActionStore
        + PriceStore
        + AccessStore
        + UsageStore
        + AdminStore
        + EventStore
        + WebhookStore
        + ?Sized,
> Store for T
{
}

/// The schema and the store's own bookkeeping (the `meta` table).
#[async_trait]
pub trait MetaStore: Send + Sync + 'static {
    /// Creates or upgrades the schema; seeds the default tiers and the cursor
    /// secret on first run. Idempotent.
    async fn migrate(&self) -> StoreResult<()>;

    /// Where the schema stands against this build's migrations, read only
    /// (nothing is created on a store with no schema yet).
    async fn schema(&self) -> StoreResult<crate::SchemaState>;

    /// A cheap round trip, for readiness.
    async fn ping(&self) -> StoreResult<()>;

    /// The change counters, each bumped in the same transaction as the
    /// mutation of its kind of data.
    async fn generations(&self) -> StoreResult<Generations>;

    /// The secret that signs pagination cursors (32 random bytes made by
    /// `migrate`, shared by every node on the same store).
    async fn cursor_secret(&self) -> StoreResult<Vec<u8>>;
}

/// Companies, and the catalog snapshots built from them.
#[async_trait]
pub trait CatalogStore: Send + Sync + 'static {
    /// Inserts or replaces companies by ISIN, all in one transaction.
    async fn upsert_companies(&self, rows: &[Company]) -> StoreResult<UpsertSummary>;

    /// Inserts or replaces companies by ISIN handed over a chunk at a time
    /// (an import holds one chunk, not the file), all in one transaction:
    /// every chunk or none. An ISIN in two chunks: the later row wins.
    async fn upsert_company_chunks(
        &self,
        chunks: &mut (dyn Iterator<Item = Vec<Company>> + Send),
    ) -> StoreResult<UpsertSummary>;

    /// Every company, ordered by ticker then ISIN.
    async fn companies(&self) -> StoreResult<Vec<Company>>;

    /// How many companies there are (for a reader of
    /// [`CatalogStore::companies_sorted`] to allocate once).
    async fn company_count(&self) -> StoreResult<u64>;

    /// Every company with its change stamps in `(ticker, isin)` byte order,
    /// handed to `each` one at a time (nothing else is held in memory).
    /// Stops at, and returns, the first error. The rows are those of one
    /// consistent read.
    async fn companies_sorted(&self, each: &mut (dyn FnMut(StoredCompany) + Send)) -> StoreResult<()>;

    /// Every `companies` generation made by an upsert, with its random
    /// nonce, oldest first (one row per import): what a sync token is
    /// checked against, so a token from a history the store no longer has
    /// is told apart from one of the same generation number now.
    async fn generation_nonces(&self) -> StoreResult<Vec<(i64, i64)>>;

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
}

/// Identity over time (contract section 10): the identity events the
/// importer made from exchange snapshots and NSE's change files.
#[async_trait]
pub trait IdentityStore: Send + Sync + 'static {
    /// Every identity event, grouped by ISIN (ascending), each ISIN's
    /// oldest first (by date, then in the order they were made). An
    /// `isin_changed` stands under both of its ISINs.
    async fn identity_events(&self) -> StoreResult<Vec<(Isin, IdentityEvent)>>;

    /// [`IdentityStore::identity_events`], each handed to `each` as it is
    /// read (nothing else is held in memory). Stops at, and returns, the
    /// first error.
    async fn identity_events_each(&self, each: &mut (dyn FnMut(Isin, IdentityEvent) + Send)) -> StoreResult<()>;

    /// Imports exchange snapshots as of one day with the companies made of
    /// them, in one transaction: refuses (`Invalid`, naming both days, with
    /// nothing written) a snapshot older than the latest of its series;
    /// updates the series' runs; derives the events and statuses again
    /// from every run and change-file row; writes the companies given (with
    /// what the files did not say kept from the stored rows,
    /// [`mds_domain::snapshot::carry_over`]) and the statuses that moved;
    /// stamps every company whose row or events changed with a new
    /// `companies` generation. A snapshot the same as the latest of its
    /// day changes nothing.
    async fn import_snapshots(&self, import: &SnapshotImport) -> StoreResult<IdentityImport>;

    /// Adds NSE change-file rows (a row stored before is not added again)
    /// and derives the events and statuses again, in one transaction, as
    /// [`IdentityStore::import_snapshots`] does.
    async fn import_nse_changes(&self, symbols: &[SymbolChange], names: &[NameChange]) -> StoreResult<IdentityImport>;

    /// The days of the snapshots imported, per series, oldest first.
    async fn snapshot_days(&self) -> StoreResult<Vec<(Series, NaiveDate)>>;
}

/// Corporate actions (contract section 13): the actions imported, merged
/// across exchanges, and the rows resolved to no ISIN.
#[async_trait]
pub trait ActionStore: Send + Sync + 'static {
    /// Writes the actions and unresolved rows of one import, in one
    /// transaction (all or nothing). An action stored before under the same
    /// id takes in the new one ([`CorporateAction::absorb`]: the stored
    /// purpose stays, sources are joined); one that stays as it was is not
    /// written. An unresolved row stored before is not added again (one
    /// stored with none of its security id, series, face value and record
    /// date, as rows kept before migration 20 are, is given this one's);
    /// one that an action of this import resolved (its exchange, code, ex-date
    /// and text in `resolved`) is removed. The rows resolved are kept with
    /// the ISIN they were resolved to (one per exchange, code, ex-date and
    /// text; the latest import's resolution), for
    /// [`ActionStore::move_actions`].
    async fn import_actions(
        &self,
        actions: &[CorporateAction],
        unresolved: &[KeptUnresolved],
        resolved: &[ResolvedRow],
    ) -> StoreResult<ActionImport>;

    /// Every resolved row kept ([`ActionStore::import_actions`]), by
    /// exchange, code, ex-date and text.
    async fn action_rows(&self) -> StoreResult<Vec<ResolvedRow>>;

    /// Moves the actions of rows resolved again to another ISIN (contract
    /// 10.3: imports in any order give the same result), in one
    /// transaction: for each move, the stored actions of its row's ISIN and
    /// ex-date that its exchange published (those with its text, if any
    /// has it) leave that ISIN (removed, or, published by both exchanges,
    /// its exchange taken from their sources) and are stored at the new
    /// ISIN as the import of its row there would store them (new ids;
    /// joined with an action stored there under the same id; splits and
    /// consolidations deriving the identity history again, their
    /// `new_isin` the successor). The row keeps its new ISIN. Added and
    /// changed actions are announced as an import's are; each action
    /// removed by a `corporate_action.removed` naming the actions that
    /// replace it, after theirs.
    ///
    /// In the same transaction, `actions` (those of rows kept unresolved
    /// that resolve now, [`ActionStore::kept_unresolved`]) are stored as
    /// [`ActionStore::import_actions`] stores an import's, and their rows
    /// (`resolved`) leave the unresolved rows for the resolved ones kept
    /// (counted in [`ActionsMoved::resolved`]).
    async fn move_actions(
        &self,
        moves: &[ActionMove],
        actions: &[CorporateAction],
        resolved: &[ResolvedRow],
    ) -> StoreResult<ActionsMoved>;

    /// Derives the identity history again with `splits` (an import's
    /// splits and consolidations, not stored yet; other actions are passed
    /// over) beside the stored ones, and writes what changed, in a
    /// transaction of its own (contract 10.3: a split dates the ISIN change
    /// the lists only bound, and links an old ISIN to its successor on
    /// another exchange). Whether the history changed: then an import
    /// resolves its rows again through the history they made before
    /// [`ActionStore::import_actions`].
    async fn date_by_splits(&self, splits: &[CorporateAction]) -> StoreResult<bool>;

    /// Gives each stored split and consolidation whose ISIN changed on its
    /// ex-date the ISIN the identity history says took over as its
    /// `new_isin`, where it names another (contract 13), announcing each
    /// as changed, in a transaction of its own; how many. A history derived
    /// again can move a successor without moving the action: NSE's daily
    /// files showed VERTOZ's INE188Y01023 between the lists' INE188Y01015
    /// and INE188Y01031, so its split of 2024-07-05 leads to 01023.
    async fn follow_successors(&self) -> StoreResult<u64>;

    /// The actions of `isins` passing `filter`, by ex-date descending,
    /// then id.
    async fn actions_of(&self, isins: &[Isin], filter: &ActionFilter) -> StoreResult<Vec<CorporateAction>>;

    /// At most `limit` actions passing `filter`, by ex-date, then id,
    /// after the action whose ex-date and id are `after` (from the start
    /// without one).
    async fn action_page(
        &self,
        filter: &ActionFilter,
        after: Option<(NaiveDate, &ActionId)>,
        limit: usize,
    ) -> StoreResult<Vec<CorporateAction>>;

    /// How many actions are stored.
    async fn action_count(&self) -> StoreResult<u64>;

    /// Every unresolved row stored, by exchange, code, ex-date and text.
    async fn unresolved_actions(&self) -> StoreResult<Vec<UnresolvedAction>>;

    /// Every unresolved row stored with what resolving it again needs
    /// (contract 10.3), by exchange, code, ex-date and text.
    async fn kept_unresolved(&self) -> StoreResult<Vec<KeptUnresolved>>;
}

/// End-of-day prices (contract section 14): NSE's daily bars, as
/// published, written a whole day at a time.
#[async_trait]
pub trait PriceStore: Send + Sync + 'static {
    /// Writes the days handed, in one transaction: every day or none (an
    /// `Err` handed ends the import with that error, nothing written).
    /// Each day handed is merged with what its day holds then (this
    /// import's earlier days included; no bars when it holds none) by
    /// `merge(handed, held)`, and the day is replaced whole by what `merge`
    /// returns (its date is the handed day's), unless that is exactly what
    /// it holds (nothing written: `unchanged`). A day made empty is
    /// removed. Concurrent imports run one after the other.
    async fn import_days(
        &self,
        days: &mut (dyn Iterator<Item = StoreResult<DayBars>> + Send),
        merge: &mut (dyn FnMut(DayBars, DayBars) -> DayBars + Send),
    ) -> StoreResult<PriceImport>;

    /// [`PriceStore::import_days`] of the steps of a price import, in one
    /// transaction: each [`PriceStep::Day`] as `import_days` writes it;
    /// each [`PriceStep::Unresolved`] replacing the rows its day kept; a
    /// [`PriceStep::Daily`] folded into the identity history, which is
    /// derived again (contract 14.1), then `identity` called with the
    /// history as it now is (`None`: unchanged) and the stored
    /// symbol-keyed rows of the symbols it returns resolved again
    /// ([`PriceStore::rebind_symbols`]).
    async fn import_prices(
        &self,
        steps: &mut (dyn Iterator<Item = StoreResult<crate::PriceStep>> + Send),
        merge: &mut (dyn FnMut(DayBars, DayBars) -> DayBars + Send),
        identity: &mut (dyn FnMut(Option<crate::IdentityNow>) -> Vec<crate::SymbolPeriods> + Send),
    ) -> StoreResult<PriceImport>;

    /// Resolves again, in one transaction, the stored symbol-keyed bars
    /// and kept rows of each symbol given through its periods (contract
    /// 10.3: after an import moved them): a bar now of another ISIN moves,
    /// a kept row now resolved becomes a bar, each day changed is
    /// announced (`prices.published`) and the `prices` generation moves.
    async fn rebind_symbols(&self, symbols: &[crate::SymbolPeriods]) -> StoreResult<crate::Rebound>;

    /// Replaces the day of `day` whole by its bars, in one transaction;
    /// nothing is written when it holds exactly these bars.
    async fn replace_day(&self, day: &DayBars) -> StoreResult<PriceImport> {
        self.import_days(&mut std::iter::once(Ok(day.clone())), &mut |handed, _held| handed).await
    }

    /// What the day `date` holds, with the symbols, by ISIN then series
    /// (no bars when it holds none).
    async fn day_bars(&self, date: NaiveDate) -> StoreResult<DayBars>;

    /// The bars of `isins` from `from` to `to` (both inclusive), by day,
    /// then ISIN, then series.
    async fn bars_of(
        &self,
        isins: &[Isin],
        from: NaiveDate,
        to: NaiveDate,
    ) -> StoreResult<Vec<mds_domain::prices::Bar>>;

    /// At most `limit` bars of the market on `date` (only of `series` if
    /// given), by ISIN then series, after the bar of `after` (from the
    /// first without one): a keyset page.
    async fn market_page(
        &self,
        date: NaiveDate,
        series: Option<mds_domain::prices::Series>,
        after: Option<(&Isin, mds_domain::prices::Series)>,
        limit: usize,
    ) -> StoreResult<Vec<mds_domain::prices::Bar>>;

    /// The days held, oldest first, each with how many bars it holds.
    async fn price_days(&self) -> StoreResult<Vec<PriceDay>>;
}

/// News articles, and the news index snapshots built from them.
#[async_trait]
pub trait NewsStore: Send + Sync + 'static {
    /// Inserts or replaces articles by slug, all in one transaction.
    async fn upsert_articles(&self, rows: &[Article]) -> StoreResult<UpsertSummary>;

    /// Inserts or replaces articles by slug handed over a chunk at a time
    /// (an import holds one chunk, not the file), all in one transaction:
    /// every chunk or none. A chunk that is an `Err` (the file turned out
    /// bad half-way) ends the upsert with that error and nothing written.
    async fn upsert_article_chunks(
        &self,
        chunks: &mut (dyn Iterator<Item = StoreResult<Vec<Article>>> + Send),
    ) -> StoreResult<UpsertSummary>;

    /// One article by slug.
    async fn article(&self, slug: &Slug) -> StoreResult<Option<Article>>;

    /// One page of the news list: at most `limit` articles (without their
    /// body) that pass `filter`, in list order (`published_at` descending,
    /// then `slug`; undated articles last, by `slug`), after the article
    /// whose key is `after` (from the start without one), read in one
    /// consistent snapshot. Ask for one more than a page holds to learn
    /// whether another follows. The cost does not grow with the position.
    async fn news_page(
        &self,
        filter: &NewsFilter,
        after: Option<&NewsKey>,
        limit: usize,
    ) -> StoreResult<Vec<ArticleSummary>>;

    /// The searchable text (headline, sub-headline, excerpt, body) of at
    /// most `limit` articles in list order after the article whose key is
    /// `after` (from the start without one): what the node's search index
    /// is built from, a batch at a time, beside the news index.
    async fn news_texts(&self, after: Option<&NewsKey>, limit: usize) -> StoreResult<Vec<ArticleText>>;

    /// How many articles there are.
    async fn article_count(&self) -> StoreResult<u64>;

    /// Saves `bytes` as the news index snapshot of news generation
    /// `generation`, replacing every other news index snapshot (never a
    /// catalog snapshot), all or nothing; as
    /// [`CatalogStore::save_catalog_snapshot`] otherwise.
    async fn save_news_snapshot(&self, generation: i64, bytes: &[u8]) -> StoreResult<()>;

    /// The news index snapshot saved for `generation`, if any; as
    /// [`CatalogStore::catalog_snapshot`] otherwise.
    async fn news_snapshot(&self, generation: i64) -> StoreResult<Option<Vec<u8>>>;
}

/// Who may call: tiers, accounts, keys, and the snapshot of them a serving
/// node authenticates with.
#[async_trait]
pub trait AccessStore: Send + Sync + 'static {
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

    /// Stores a key as given (a new one: `revoked_at` `None`). `NotFound` if
    /// the account or tier does not exist; `Conflict` if the prefix is taken
    /// (the caller makes a new key).
    async fn create_key(&self, key: &KeyRecord) -> StoreResult<KeyRecord>;

    /// Revokes a key by prefix. `NotFound` if there is no such key. Revoking a
    /// revoked key changes nothing and returns it as it is.
    async fn revoke_key(&self, prefix: &KeyPrefix, now: DateTime<Utc>) -> StoreResult<KeyRecord>;

    /// Rolls the key `old` (as Stripe's key roll): stores the new key
    /// (`new`: its prefix and hash) on the old one's account, tier and
    /// environment, and makes the old one expire at `old_expires_at` (or
    /// sooner if it already expired sooner), in one transaction, logged for
    /// both keys. `NotFound` if there is no such key; `Conflict` if it is
    /// revoked or expired (at `now`), if the new key is of another
    /// environment, or its prefix is taken (the caller makes a new key).
    async fn roll_key(
        &self,
        old: &KeyPrefix,
        new: (&KeyPrefix, KeyHash),
        now: DateTime<Utc>,
        old_expires_at: DateTime<Utc>,
    ) -> StoreResult<RolledKey>;

    /// Keys, revoked ones included, optionally of one account (`NotFound` if
    /// that account does not exist), ordered by creation then prefix.
    async fn keys(&self, account: Option<&AccountName>) -> StoreResult<Vec<KeyRecord>>;

    /// At most `limit` tiers by name, those after the tier named `after`
    /// (from the first without): a page of the admin list.
    async fn tiers_after(&self, after: Option<&TierName>, limit: usize) -> StoreResult<Vec<Tier>>;

    /// At most `limit` accounts by name, those after the account named
    /// `after` (from the first without): a page of the admin list.
    async fn accounts_after(&self, after: Option<&AccountName>, limit: usize) -> StoreResult<Vec<Account>>;

    /// At most `limit` keys, revoked ones included, optionally of one
    /// account (`NotFound` for an unknown one), in the order of
    /// [`keys`](Self::keys) (`created_at`, then prefix), those after the
    /// key at `after` (its `created_at` and prefix; from the first
    /// without): a page of the admin list, read by keyset.
    async fn keys_after(
        &self,
        account: Option<&AccountName>,
        after: Option<(DateTime<Utc>, &KeyPrefix)>,
        limit: usize,
    ) -> StoreResult<Vec<KeyRecord>>;

    /// Tiers and accounts, whole, in one read transaction, with the `auth`
    /// generation they were read at.
    async fn auth_directory(&self) -> StoreResult<AuthDirectory>;

    /// The active (not revoked) keys among `prefixes` with their account's
    /// entitlement and plan tier, in one read transaction (indexed by
    /// prefix), with the `auth` generation they were read at. Prefixes of
    /// no key, or of a revoked one, are simply not in the answer.
    async fn key_lookup(&self, prefixes: &[&str]) -> StoreResult<KeyLookup>;

    /// What changed in keys, tiers and accounts after the `auth` generation
    /// `since`, from the change log (each change logs itself in its own
    /// transaction); not `complete` when the log no longer reaches back to
    /// `since`.
    async fn auth_changes(&self, since: i64) -> StoreResult<AuthChanges>;

    /// Deletes the change log up to generation `upto` (changes prune it
    /// themselves, keeping `AUTH_CHANGES_KEPT` generations); returns how
    /// many entries went. A node behind what is left re-reads what it
    /// holds.
    async fn prune_auth_changes(&self, upto: i64) -> StoreResult<u64>;
}

/// Usage counts, and the quota history they are measured against.
#[async_trait]
pub trait UsageStore: Send + Sync + 'static {
    /// Adds a batch of usage to the daily ledger and, summed per key and
    /// month, to the monthly counts, in one transaction, unless a batch with
    /// the same id was applied before; says whether it was applied now and
    /// as of which `usage` generation the store has it. Deltas for unknown
    /// keys are `NotFound` and nothing is applied.
    async fn apply_usage_batch(&self, batch: &UsageBatch) -> StoreResult<AppliedBatch>;

    /// [`UsageStore::apply_usage_batch`], saying only whether the batch was
    /// applied now.
    async fn apply_usage(&self, batch: &UsageBatch) -> StoreResult<bool> {
        Ok(self.apply_usage_batch(batch).await?.fresh)
    }

    /// A key's stored request count for `month` and the `usage` generation
    /// it is as of, read together: every batch applied as of a generation
    /// at most this one is in the count, none after it. `NotFound` if there
    /// is no such key.
    async fn usage_as_of(&self, key: &KeyPrefix, month: BillingMonth) -> StoreResult<(u64, i64)>;

    /// The `usage` generation the usage batch `id` was applied at, if the
    /// store knows it: `None` when it was not applied, is older than the
    /// store keeps batch ids, or was applied before the store recorded
    /// generations (migration 14). A node whose attempt to apply it failed
    /// asks this to know whether a count read as of a generation holds it.
    async fn usage_batch_applied(&self, id: &str) -> StoreResult<Option<i64>>;

    /// A key's stored request counts for the months `from..=to` that have
    /// any, oldest first.
    async fn usage(
        &self,
        key: &KeyPrefix,
        from: BillingMonth,
        to: BillingMonth,
    ) -> StoreResult<Vec<(BillingMonth, u64)>>;

    /// A key's daily ledger for the days `from..=to` (UTC): its entries
    /// (day, route, requests, `304`s), by day then route; `[]` when there
    /// are none or `from > to`. A month's entries add up to its count in
    /// [`UsageStore::usage`]. `NotFound` if there is no such key.
    async fn usage_days(&self, key: &KeyPrefix, from: NaiveDate, to: NaiveDate) -> StoreResult<Vec<DailyUsage>>;

    /// The history of the key's quota: its plan tier's and the evaluation
    /// tier's quota changes and its account's entitlement changes.
    /// `NotFound` if there is no such key (revoked keys have history).
    async fn quota_history(&self, key: &KeyPrefix) -> StoreResult<QuotaHistory>;
}

/// Admin tokens, the audit log, and the changes of [`AccessStore`] made by
/// an [`Actor`]: each such change writes its audit entry (actor, action,
/// target, the record before and after) in its own transaction, so a change
/// is never without its entry nor an entry without its change.
#[async_trait]
pub trait AdminStore: Send + Sync + 'static {
    /// [`AccessStore::set_tier`], audited (`tier.create` or `tier.update`).
    async fn audited_set_tier(&self, tier: &Tier, actor: &Actor, now: DateTime<Utc>) -> StoreResult<bool>;

    /// [`AccessStore::create_account`], audited (`account.create`).
    async fn audited_create_account(
        &self,
        name: &AccountName,
        actor: &Actor,
        now: DateTime<Utc>,
    ) -> StoreResult<Account>;

    /// [`AccessStore::set_account_entitled`], audited (`account.update`).
    async fn audited_set_account_entitled(
        &self,
        name: &AccountName,
        entitled: bool,
        actor: &Actor,
        now: DateTime<Utc>,
    ) -> StoreResult<Account>;

    /// [`AccessStore::create_key`], audited (`key.create`), at the key's
    /// `created_at`.
    async fn audited_create_key(&self, key: &KeyRecord, actor: &Actor) -> StoreResult<KeyRecord>;

    /// [`AccessStore::revoke_key`], audited (`key.revoke`) when it revokes;
    /// also whether it did (false: revoked before, nothing written).
    async fn audited_revoke_key(
        &self,
        prefix: &KeyPrefix,
        actor: &Actor,
        now: DateTime<Utc>,
    ) -> StoreResult<(KeyRecord, bool)>;

    /// [`AccessStore::roll_key`], audited (`key.roll`) in its transaction.
    async fn audited_roll_key(
        &self,
        old: &KeyPrefix,
        new: (&KeyPrefix, KeyHash),
        actor: &Actor,
        now: DateTime<Utc>,
        old_expires_at: DateTime<Utc>,
    ) -> StoreResult<RolledKey>;

    /// One key by prefix, revoked or not.
    async fn key(&self, prefix: &KeyPrefix) -> StoreResult<Option<KeyRecord>>;

    /// Stores a new admin token, audited (`admin_token.create`).
    /// `Conflict` if a token not revoked has its name.
    async fn create_admin_token(&self, token: &AdminTokenRecord, actor: &Actor) -> StoreResult<AdminTokenRecord>;

    /// Revokes the admin token of that name that is not revoked, audited
    /// (`admin_token.revoke`). `NotFound` if there is none.
    async fn revoke_admin_token(
        &self,
        name: &AdminTokenName,
        actor: &Actor,
        now: DateTime<Utc>,
    ) -> StoreResult<AdminTokenRecord>;

    /// Every admin token, revoked ones included, oldest first.
    async fn admin_tokens(&self) -> StoreResult<Vec<AdminTokenRecord>>;

    /// The admin token (not revoked) with this prefix, if any.
    async fn admin_token(&self, prefix: &str) -> StoreResult<Option<AdminTokenRecord>>;

    /// At most `limit` audit entries, newest first, older than the entry
    /// `before` (from the newest without one).
    async fn audit_log(&self, before: Option<i64>, limit: usize) -> StoreResult<Vec<AuditEntry>>;

    /// Claims the idempotency key named `key` for a request whose
    /// fingerprint is `fingerprint`, at `now`; claims older than
    /// [`crate::IDEMPOTENCY_TTL`] are forgotten first. Of concurrent claims
    /// of one key (on any node), exactly one is `Claimed`. A claim of the
    /// same request left without an answer for
    /// [`crate::IDEMPOTENCY_ABANDONED`] is taken over (`Claimed`).
    async fn idempotency_claim(
        &self,
        key: &str,
        fingerprint: &str,
        now: DateTime<Utc>,
    ) -> StoreResult<IdempotencyClaim>;

    /// Records the answer of the request that claimed `key`.
    async fn idempotency_complete(&self, key: &str, status: u16, body: &str) -> StoreResult<()>;

    /// Forgets the claim of `key` while it has no answer (its request
    /// failed), so a retry runs afresh.
    async fn idempotency_release(&self, key: &str) -> StoreResult<()>;
}

/// The event log (contract section 11.1). Its events are appended by the
/// writes that make them (an upsert of companies or articles, an identity
/// import), in their transactions; ids increase in commit order.
#[async_trait]
pub trait EventStore: Send + Sync + 'static {
    /// At most `limit` events of the log after `after` (`EventId(0)`: from
    /// the start) that pass `filter`, oldest first, with the latest id
    /// issued and the highest id retention removed, in one read.
    async fn event_page(
        &self,
        after: mds_domain::EventId,
        filter: &mds_domain::EventFilter,
        limit: usize,
    ) -> StoreResult<EventLogPage>;

    /// At most `limit` events of the log after `after`, oldest first,
    /// unfiltered: what a node feeds its streams from.
    async fn events_after(&self, after: mds_domain::EventId, limit: usize)
    -> StoreResult<Vec<mds_domain::StoredEvent>>;

    /// Removes the events created before `before` (retention); how many.
    async fn prune_events(&self, before: DateTime<Utc>) -> StoreResult<u64>;

    /// Records the stream of `lease` if its key holds fewer than
    /// `lease.max` streams whose lease runs past `lease.now` (across nodes);
    /// whether it did.
    async fn open_stream(&self, lease: &crate::StreamLease) -> StoreResult<bool>;

    /// Extends the leases of `node`'s streams to `until`; how many.
    async fn renew_streams(&self, node: &str, until: DateTime<Utc>) -> StoreResult<u64>;

    /// Forgets the stream `id` (closed).
    async fn close_stream(&self, id: &str) -> StoreResult<()>;
}

/// Webhook endpoints and their delivery (contract section 11.2). An
/// endpoint's deliveries are a cursor over the event log (see
/// [`crate::webhooks`]); a node claims the endpoints with a delivery due,
/// each under a lease, and records an attempt only while it holds it.
#[async_trait]
pub trait WebhookStore: Send + Sync + 'static {
    /// Creates an endpoint whose cursor starts at the latest event (only
    /// later events are sent). `NotFound` for an unknown account,
    /// `Conflict` when the account already has `max` endpoints.
    async fn create_webhook(&self, new: &NewWebhook, max: usize) -> StoreResult<WebhookEndpoint>;

    /// The endpoints of `account` (every account's: `None`), oldest first.
    async fn webhooks(&self, account: Option<&AccountName>) -> StoreResult<Vec<WebhookEndpoint>>;

    /// The endpoint `id`.
    async fn webhook(&self, id: &str) -> StoreResult<Option<WebhookEndpoint>>;

    /// Applies `patch` to the endpoint `id` at `now`.
    async fn update_webhook(
        &self,
        id: &str,
        patch: &WebhookPatch,
        now: DateTime<Utc>,
    ) -> StoreResult<Option<WebhookEndpoint>>;

    /// Deletes the endpoint `id` with its attempts and pings; whether it
    /// existed.
    async fn delete_webhook(&self, id: &str) -> StoreResult<bool>;

    /// Makes `secret` the signing secret of `id`, the current one signing
    /// beside it until `old_until`.
    async fn rotate_webhook_secret(
        &self,
        id: &str,
        secret: &str,
        old_until: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> StoreResult<Option<WebhookEndpoint>>;

    /// Sets the cursor of `id` back to `since` if it is behind it (what
    /// matched after it is sent again, in order), ending the attempt in
    /// flight and any lease.
    async fn replay_webhook(&self, id: &str, since: mds_domain::EventId) -> StoreResult<Option<WebhookEndpoint>>;

    /// Appends a `ping` event for the endpoint `id` only (not in the log);
    /// its id, or `None` for no such endpoint.
    async fn ping_webhook(&self, id: &str, now: DateTime<Utc>) -> StoreResult<Option<mds_domain::EventId>>;

    /// The latest `limit` attempts of `id`, newest first.
    async fn webhook_attempts(&self, id: &str, limit: usize) -> StoreResult<Vec<WebhookAttempt>>;

    /// Disables `id` for `reason` at `now`, audited (`webhook.disable`) as
    /// `actor`'s.
    async fn audited_disable_webhook(
        &self,
        id: &str,
        reason: &str,
        actor: &Actor,
        now: DateTime<Utc>,
    ) -> StoreResult<Option<WebhookEndpoint>>;

    /// Claims up to `limit` enabled endpoints with a delivery due at `now`
    /// and no live lease, for `owner` until `lease_until`: each with its
    /// run of up to `run` events, the one in flight first. Endpoints whose
    /// next events their filter refuses have their cursor moved past those
    /// on the way.
    async fn claim_webhook_deliveries(
        &self,
        owner: &str,
        now: DateTime<Utc>,
        lease_until: DateTime<Utc>,
        limit: usize,
        run: usize,
    ) -> StoreResult<Vec<WebhookDelivery>>;

    /// Records the attempts of a claimed run at `endpoint`, in order, and
    /// applies each one's outcome, in one transaction, while `owner` holds
    /// the endpoint's lease and each attempt's event is still in flight
    /// when its turn comes (the first that is not ends the run); then
    /// releases the lease. Whether the first was applied.
    async fn finish_webhook_deliveries(
        &self,
        owner: &str,
        endpoint: &str,
        attempts: &[(WebhookAttempt, DeliveryOutcome)],
    ) -> StoreResult<bool>;

    /// How many enabled endpoints have a delivery pending (an event after
    /// their cursor, or a retry scheduled).
    async fn webhooks_pending(&self) -> StoreResult<u64>;
}
