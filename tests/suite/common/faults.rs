//! A fault injector around a real store (the chaos proxy of crates.io, in
//! process): every call goes to the real store unless a fault is switched
//! on, in which case it fails as an unreachable, broken or slow store would.

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, NaiveDate, Utc};
use mds_domain::actions::{ActionId, CorporateAction};
use mds_domain::news::NewsKey;
use mds_domain::news_search::ArticleText;
use mds_domain::snapshot::{NameChange, Series, SymbolChange};
use mds_domain::usage::{BillingMonth, QuotaHistory};
use mds_domain::{
    Account, AccountName, Actor, AdminTokenName, Article, ArticleSummary, AuditEntry, Company, EventFilter, EventId,
    IdentityEvent, Isin, KeyHash, KeyPrefix, NewsFilter, Slug, StoredEvent, Tier, TierName,
};
use mds_store::{
    AccessStore, AdminStore, AdminTokenRecord, AppliedBatch, AuthChanges, AuthDirectory, CatalogStore, Cause,
    DailyUsage, EventLogPage, EventStore, Generations, IdempotencyClaim, IdentityImport, IdentityStore, KeyLookup,
    KeyRecord, MetaStore, NewsStore, RolledKey, SnapshotImport, Store, StoreError, StoreResult, StoredCompany,
    UpsertSummary, UsageBatch, UsageStore,
};
use mds_store::{ActionFilter, ActionImport, ActionStore, UnresolvedAction};
use mds_store::{DayBars, PriceDay, PriceImport, PriceStore};
use mds_store::{
    DeliveryOutcome, NewWebhook, StreamLease, WebhookAttempt, WebhookDelivery, WebhookEndpoint, WebhookPatch,
    WebhookStore,
};

/// Which fault is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Fault {
    /// Calls go through.
    None = 0,
    /// Calls fail as if the database could not be reached.
    Unreachable = 1,
    /// Calls fail with a database error (a bug, say a corrupt row).
    Broken = 2,
    /// Calls take 2 s, then go through.
    Slow = 3,
    /// Calls panic (a bug in the store's code).
    Panic = 4,
}

/// The fault injector.
pub struct Faulty {
    inner: Arc<dyn Store>,
    fault: AtomicU8,
}

impl Faulty {
    /// Wraps a store, no fault on.
    pub fn new(inner: Arc<dyn Store>) -> Arc<Self> {
        Arc::new(Faulty { inner, fault: AtomicU8::new(0) })
    }

    /// Switches a fault on (or off with [`Fault::None`]).
    pub fn set(&self, f: Fault) {
        self.fault.store(f as u8, Ordering::SeqCst);
    }

    async fn gate(&self) -> StoreResult<()> {
        match self.fault.load(Ordering::SeqCst) {
            1 => Err(StoreError::Unavailable(Cause::new(std::io::Error::new(
                std::io::ErrorKind::ConnectionRefused,
                "injected: connection refused",
            )))),
            2 => Err(StoreError::Database(Cause::new("injected: corrupt row in table secrets"))),
            3 => {
                tokio::time::sleep(Duration::from_secs(2)).await;
                Ok(())
            }
            4 => panic!("injected: a bug in the store"),
            _ => Ok(()),
        }
    }
}

/// Implements a role for [`Faulty`]: each method passes the gate, then asks
/// the real store.
macro_rules! gated {
    ($role:ident { $(fn $name:ident($($arg:ident: $ty:ty),*) -> $ret:ty;)* }) => {
        #[async_trait]
        impl $role for Faulty {
            $(
                async fn $name(&self, $($arg: $ty),*) -> StoreResult<$ret> {
                    self.gate().await?;
                    self.inner.$name($($arg),*).await
                }
            )*
        }
    };
}

gated!(MetaStore {
    fn migrate() -> ();
    fn schema() -> mds_store::SchemaState;
    fn ping() -> ();
    fn generations() -> Generations;
    fn cursor_secret() -> Vec<u8>;
});

gated!(CatalogStore {
    fn generation_nonces() -> Vec<(i64, i64)>;
    fn upsert_companies(rows: &[Company]) -> UpsertSummary;
    fn upsert_company_chunks(chunks: &mut (dyn Iterator<Item = Vec<Company>> + Send)) -> UpsertSummary;
    fn companies() -> Vec<Company>;
    fn company_count() -> u64;
    fn companies_sorted(each: &mut (dyn FnMut(StoredCompany) + Send)) -> ();
    fn save_catalog_snapshot(generation: i64, bytes: &[u8]) -> ();
    fn catalog_snapshot(generation: i64) -> Option<Vec<u8>>;
});

gated!(IdentityStore {
    fn identity_events() -> Vec<(Isin, IdentityEvent)>;
    fn identity_events_each(each: &mut (dyn FnMut(Isin, IdentityEvent) + Send)) -> ();
    fn import_snapshots(import: &SnapshotImport) -> IdentityImport;
    fn import_nse_changes(symbols: &[SymbolChange], names: &[NameChange]) -> IdentityImport;
    fn snapshot_days() -> Vec<(Series, NaiveDate)>;
});

gated!(NewsStore {
    fn upsert_articles(rows: &[Article]) -> UpsertSummary;
    fn upsert_article_chunks(chunks: &mut (dyn Iterator<Item = StoreResult<Vec<Article>>> + Send)) -> UpsertSummary;
    fn article(slug: &Slug) -> Option<Article>;
    fn news_page(filter: &NewsFilter, after: Option<&NewsKey>, limit: usize) -> Vec<ArticleSummary>;
    fn news_texts(after: Option<&NewsKey>, limit: usize) -> Vec<ArticleText>;
    fn article_count() -> u64;
    fn save_news_snapshot(generation: i64, bytes: &[u8]) -> ();
    fn news_snapshot(generation: i64) -> Option<Vec<u8>>;
});

gated!(ActionStore {
    fn import_actions(
        actions: &[CorporateAction],
        unresolved: &[mds_store::KeptUnresolved],
        resolved: &[mds_store::ResolvedRow]
    ) -> ActionImport;
    fn action_rows() -> Vec<mds_store::ResolvedRow>;
    fn move_actions(
        moves: &[mds_store::ActionMove],
        actions: &[CorporateAction],
        resolved: &[mds_store::ResolvedRow]
    ) -> mds_store::ActionsMoved;
    fn date_by_splits(splits: &[CorporateAction]) -> bool;
    fn follow_successors() -> u64;
    fn actions_of(isins: &[Isin], filter: &ActionFilter) -> Vec<CorporateAction>;
    fn action_page(filter: &ActionFilter, after: Option<(NaiveDate, &ActionId)>, limit: usize) -> Vec<CorporateAction>;
    fn action_count() -> u64;
    fn unresolved_actions() -> Vec<UnresolvedAction>;
    fn kept_unresolved() -> Vec<mds_store::KeptUnresolved>;
});

gated!(PriceStore {
    fn import_days(
        days: &mut (dyn Iterator<Item = StoreResult<DayBars>> + Send),
        merge: &mut (dyn FnMut(DayBars, DayBars) -> DayBars + Send)
    ) -> PriceImport;
    fn import_prices(
        steps: &mut (dyn Iterator<Item = StoreResult<mds_store::PriceStep>> + Send),
        merge: &mut (dyn FnMut(DayBars, DayBars) -> DayBars + Send),
        identity: &mut (dyn FnMut(Option<mds_store::IdentityNow>) -> Vec<mds_store::SymbolPeriods> + Send)
    ) -> PriceImport;
    fn rebind_symbols(symbols: &[mds_store::SymbolPeriods]) -> mds_store::Rebound;
    fn day_bars(date: NaiveDate) -> DayBars;
    fn bars_of(isins: &[Isin], from: NaiveDate, to: NaiveDate) -> Vec<mds_domain::prices::Bar>;
    fn market_page(
        date: NaiveDate,
        series: Option<mds_domain::prices::Series>,
        after: Option<(&Isin, mds_domain::prices::Series)>,
        limit: usize
    ) -> Vec<mds_domain::prices::Bar>;
    fn price_days() -> Vec<PriceDay>;
});

gated!(AccessStore {
    fn tiers() -> Vec<Tier>;
    fn set_tier(tier: &Tier, now: DateTime<Utc>) -> bool;
    fn create_account(name: &AccountName, now: DateTime<Utc>) -> Account;
    fn set_account_entitled(name: &AccountName, entitled: bool, now: DateTime<Utc>) -> Account;
    fn accounts() -> Vec<Account>;
    fn create_key(key: &KeyRecord) -> KeyRecord;
    fn revoke_key(prefix: &KeyPrefix, now: DateTime<Utc>) -> KeyRecord;
    fn roll_key(old: &KeyPrefix, new: (&KeyPrefix, KeyHash), now: DateTime<Utc>, old_expires_at: DateTime<Utc>) -> RolledKey;
    fn keys(account: Option<&AccountName>) -> Vec<KeyRecord>;
    fn tiers_after(after: Option<&TierName>, limit: usize) -> Vec<Tier>;
    fn accounts_after(after: Option<&AccountName>, limit: usize) -> Vec<Account>;
    fn keys_after(account: Option<&AccountName>, after: Option<(DateTime<Utc>, &KeyPrefix)>, limit: usize) -> Vec<KeyRecord>;
    fn auth_directory() -> AuthDirectory;
    fn key_lookup(prefixes: &[&str]) -> KeyLookup;
    fn auth_changes(since: i64) -> AuthChanges;
    fn prune_auth_changes(upto: i64) -> u64;
});

gated!(UsageStore {
    fn apply_usage_batch(batch: &UsageBatch) -> AppliedBatch;
    fn usage_as_of(key: &KeyPrefix, month: BillingMonth) -> (u64, i64);
    fn usage_batch_applied(id: &str) -> Option<i64>;
    fn usage(key: &KeyPrefix, from: BillingMonth, to: BillingMonth) -> Vec<(BillingMonth, u64)>;
    fn usage_days(key: &KeyPrefix, from: NaiveDate, to: NaiveDate) -> Vec<DailyUsage>;
    fn quota_history(key: &KeyPrefix) -> QuotaHistory;
});

gated!(AdminStore {
    fn audited_set_tier(tier: &Tier, actor: &Actor, now: DateTime<Utc>) -> bool;
    fn audited_create_account(name: &AccountName, actor: &Actor, now: DateTime<Utc>) -> Account;
    fn audited_set_account_entitled(name: &AccountName, entitled: bool, actor: &Actor, now: DateTime<Utc>) -> Account;
    fn audited_create_key(key: &KeyRecord, actor: &Actor) -> KeyRecord;
    fn audited_revoke_key(prefix: &KeyPrefix, actor: &Actor, now: DateTime<Utc>) -> (KeyRecord, bool);
    fn audited_roll_key(old: &KeyPrefix, new: (&KeyPrefix, KeyHash), actor: &Actor, now: DateTime<Utc>, old_expires_at: DateTime<Utc>) -> RolledKey;
    fn key(prefix: &KeyPrefix) -> Option<KeyRecord>;
    fn create_admin_token(token: &AdminTokenRecord, actor: &Actor) -> AdminTokenRecord;
    fn revoke_admin_token(name: &AdminTokenName, actor: &Actor, now: DateTime<Utc>) -> AdminTokenRecord;
    fn admin_tokens() -> Vec<AdminTokenRecord>;
    fn admin_token(prefix: &str) -> Option<AdminTokenRecord>;
    fn audit_log(before: Option<i64>, limit: usize) -> Vec<AuditEntry>;
    fn idempotency_claim(key: &str, fingerprint: &str, now: DateTime<Utc>) -> IdempotencyClaim;
    fn idempotency_complete(key: &str, status: u16, body: &str) -> ();
    fn idempotency_release(key: &str) -> ();
});

gated!(EventStore {
    fn event_page(after: EventId, filter: &EventFilter, limit: usize) -> EventLogPage;
    fn events_after(after: EventId, limit: usize) -> Vec<StoredEvent>;
    fn prune_events(before: DateTime<Utc>) -> u64;
    fn open_stream(lease: &StreamLease) -> bool;
    fn renew_streams(node: &str, until: DateTime<Utc>) -> u64;
    fn close_stream(id: &str) -> ();
});

gated!(WebhookStore {
    fn create_webhook(new: &NewWebhook, max: usize) -> WebhookEndpoint;
    fn webhooks(account: Option<&AccountName>) -> Vec<WebhookEndpoint>;
    fn webhook(id: &str) -> Option<WebhookEndpoint>;
    fn update_webhook(id: &str, patch: &WebhookPatch, now: DateTime<Utc>) -> Option<WebhookEndpoint>;
    fn delete_webhook(id: &str) -> bool;
    fn rotate_webhook_secret(id: &str, secret: &str, old_until: DateTime<Utc>, now: DateTime<Utc>) -> Option<WebhookEndpoint>;
    fn replay_webhook(id: &str, since: EventId) -> Option<WebhookEndpoint>;
    fn ping_webhook(id: &str, now: DateTime<Utc>) -> Option<EventId>;
    fn webhook_attempts(id: &str, limit: usize) -> Vec<WebhookAttempt>;
    fn audited_disable_webhook(id: &str, reason: &str, actor: &Actor, now: DateTime<Utc>) -> Option<WebhookEndpoint>;
    fn claim_webhook_deliveries(owner: &str, now: DateTime<Utc>, lease_until: DateTime<Utc>, limit: usize, run: usize) -> Vec<WebhookDelivery>;
    fn finish_webhook_deliveries(owner: &str, endpoint: &str, attempts: &[(WebhookAttempt, DeliveryOutcome)]) -> bool;
    fn webhooks_pending() -> u64;
});
