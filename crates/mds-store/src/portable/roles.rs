//! The role traits of [`crate::roles`] implemented for the backend's store
//! (`super::Backend`, which holds its `pool`), each method one call to the
//! portable module that does it.
//!
//! Compiled once per backend (see `portable/mod.rs`).

use chrono::{DateTime, NaiveDate, Utc};
use mds_domain::calls;
use mds_domain::news::NewsKey;
use mds_domain::news_search::ArticleText;
use mds_domain::snapshot::{NameChange, Series, SymbolChange};
use mds_domain::usage::{BillingMonth, QuotaHistory};
use mds_domain::{
    Account, AccountName, Actor, AdminTokenName, Article, ArticleSummary, AuditEntry, Company, EventFilter, EventId,
    IdentityEvent, Isin, KeyHash, KeyPrefix, NewsFilter, Slug, StoredEvent, Tier, TierName,
};

use super::{
    Backend, access, actions, admin, auth, begin_write, catalog, db, dialect, events, idempotency, identity, meta,
    migrate, news, prices, snapshot, usage, webhooks,
};
use crate::rows::SnapshotKind;
use crate::{
    AccessStore, AdminStore, AdminTokenRecord, AppliedBatch, AuthChanges, AuthDirectory, CatalogStore, DailyUsage,
    EventLogPage, EventStore, Generations, IdempotencyClaim, IdentityImport, IdentityStore, KeyLookup, KeyRecord,
    MetaStore, NewsStore, RolledKey, SnapshotImport, StoreResult, StoredCompany, UpsertSummary, UsageBatch, UsageStore,
};
use crate::{
    ActionFilter, ActionImport, ActionMove, ActionStore, ActionsMoved, KeptUnresolved, ResolvedRow, UnresolvedAction,
};
use crate::{DayBars, PriceDay, PriceImport, PriceStore};
use crate::{
    DeliveryOutcome, NewWebhook, StreamLease, WebhookAttempt, WebhookDelivery, WebhookEndpoint, WebhookPatch,
    WebhookStore,
};
use mds_domain::actions::{ActionId, CorporateAction};
use mds_domain::prices::{Bar, Series as PriceSeries};

/// Implements a role trait for `Backend`, one line a method:
/// `name(arguments) -> T => function [extra arguments];` makes
/// `async fn name(&self, arguments) -> StoreResult<T>` that returns
/// `function(&self.pool, arguments, extra arguments).await`; a line ending
/// `, clock;` also gives `function` the store's clock, last, as `&dyn
/// Clock` (what dates the rows and events it writes). The methods after
/// `in_write` run `function(&mut tx, arguments)` in a write transaction of
/// their own, committed when it succeeds. Each call is noted for the
/// trace of the request that made it ([`calls::record`]).
macro_rules! delegate {
    ($role:ident {
        $($method:ident($($arg:ident: $ty:ty),*) -> $out:ty => $to:path $([$($extra:expr),*])? $(, $clock:ident)?;)*
    } $(in_write {
        $($w_method:ident($($w_arg:ident: $w_ty:ty),*) -> $w_out:ty => $w_to:path $(, $w_clock:ident)?;)*
    })?) => {
        #[async_trait::async_trait]
        impl $role for Backend {
            $(
                async fn $method(&self, $($arg: $ty),*) -> StoreResult<$out> {
                    let call = $to(&self.pool, $($arg,)* $($($extra,)*)? $(&*self.$clock,)?);
                    calls::record(dialect::SYSTEM, stringify!($method), call).await
                }
            )*
            $($(
                async fn $w_method(&self, $($w_arg: $w_ty),*) -> StoreResult<$w_out> {
                    calls::record(dialect::SYSTEM, stringify!($w_method), async {
                        let mut tx = begin_write(&self.pool).await?;
                        let out = $w_to(&mut tx, $($w_arg,)* $(&*self.$w_clock,)?).await?;
                        tx.commit().await.map_err(db)?;
                        Ok(out)
                    })
                    .await
                }
            )*)?
        }
    };
}

delegate!(MetaStore {
    migrate() -> () => migrate::run, clock;
    schema() -> crate::SchemaState => migrate::state;
    ping() -> () => meta::ping;
    generations() -> Generations => meta::generations;
    cursor_secret() -> Vec<u8> => meta::cursor_secret;
});

delegate!(CatalogStore {
    upsert_companies(rows: &[Company]) -> UpsertSummary => catalog::upsert, clock;
    upsert_company_chunks(chunks: &mut (dyn Iterator<Item = Vec<Company>> + Send)) -> UpsertSummary
        => catalog::upsert_whole_chunks, clock;
    companies() -> Vec<Company> => catalog::companies;
    company_count() -> u64 => catalog::company_count;
    companies_sorted(each: &mut (dyn FnMut(StoredCompany) + Send)) -> () => catalog::companies_sorted;
    generation_nonces() -> Vec<(i64, i64)> => catalog::generation_nonces;
    save_catalog_snapshot(generation: i64, bytes: &[u8]) -> () => snapshot::save [SnapshotKind::Catalog];
    catalog_snapshot(generation: i64) -> Option<Vec<u8>> => snapshot::load [SnapshotKind::Catalog];
});

delegate!(IdentityStore {
    identity_events() -> Vec<(Isin, IdentityEvent)> => identity::events;
    identity_events_each(each: &mut (dyn FnMut(Isin, IdentityEvent) + Send)) -> () => identity::events_each;
    import_snapshots(import: &SnapshotImport) -> IdentityImport => identity::import_snapshots, clock;
    import_nse_changes(symbols: &[SymbolChange], names: &[NameChange]) -> IdentityImport
        => identity::import_changes, clock;
    snapshot_days() -> Vec<(Series, NaiveDate)> => identity::snapshot_days;
});

delegate!(NewsStore {
    upsert_articles(rows: &[Article]) -> UpsertSummary => catalog::upsert, clock;
    upsert_article_chunks(chunks: &mut (dyn Iterator<Item = StoreResult<Vec<Article>>> + Send)) -> UpsertSummary
        => catalog::upsert_chunks, clock;
    article(slug: &Slug) -> Option<Article> => catalog::article;
    news_page(filter: &NewsFilter, after: Option<&NewsKey>, limit: usize) -> Vec<ArticleSummary> => news::news_page;
    news_texts(after: Option<&NewsKey>, limit: usize) -> Vec<ArticleText> => news::news_texts;
    article_count() -> u64 => catalog::article_count;
    save_news_snapshot(generation: i64, bytes: &[u8]) -> () => snapshot::save [SnapshotKind::News];
    news_snapshot(generation: i64) -> Option<Vec<u8>> => snapshot::load [SnapshotKind::News];
});

delegate!(ActionStore {
    import_actions(actions: &[CorporateAction], unresolved: &[KeptUnresolved], resolved: &[ResolvedRow])
        -> ActionImport => actions::import, clock;
    action_rows() -> Vec<ResolvedRow> => actions::rows;
    actions_of(isins: &[Isin], filter: &ActionFilter) -> Vec<CorporateAction> => actions::of;
    action_page(filter: &ActionFilter, after: Option<(NaiveDate, &ActionId)>, limit: usize) -> Vec<CorporateAction>
        => actions::page;
    action_count() -> u64 => actions::count;
    unresolved_actions() -> Vec<UnresolvedAction> => actions::unresolved;
    kept_unresolved() -> Vec<KeptUnresolved> => actions::kept_unresolved;
} in_write {
    date_by_splits(splits: &[CorporateAction]) -> bool => identity::date_by_splits, clock;
    move_actions(moves: &[ActionMove], actions: &[CorporateAction], resolved: &[ResolvedRow]) -> ActionsMoved
        => actions::move_actions, clock;
    follow_successors() -> u64 => actions::follow_successors, clock;
});

delegate!(PriceStore {
    import_days(
        days: &mut (dyn Iterator<Item = StoreResult<DayBars>> + Send),
        merge: &mut (dyn FnMut(DayBars, DayBars) -> DayBars + Send)
    ) -> PriceImport => prices::import, clock;
    import_prices(
        steps: &mut (dyn Iterator<Item = StoreResult<crate::PriceStep>> + Send),
        merge: &mut (dyn FnMut(DayBars, DayBars) -> DayBars + Send),
        identity: &mut (dyn FnMut(Option<crate::IdentityNow>) -> Vec<crate::SymbolPeriods> + Send)
    ) -> PriceImport => prices::import_prices, clock;
    rebind_symbols(symbols: &[crate::SymbolPeriods]) -> crate::Rebound => prices::rebind_symbols, clock;
    day_bars(date: NaiveDate) -> DayBars => prices::day_bars;
    bars_of(isins: &[Isin], from: NaiveDate, to: NaiveDate) -> Vec<Bar> => prices::bars_of;
    market_page(date: NaiveDate, series: Option<PriceSeries>, after: Option<(&Isin, PriceSeries)>, limit: usize)
        -> Vec<Bar>
        => prices::market_page;
    price_days() -> Vec<PriceDay> => prices::days;
});

delegate!(AccessStore {
    tiers() -> Vec<Tier> => access::tiers;
    accounts() -> Vec<Account> => access::accounts;
    revoke_key(prefix: &KeyPrefix, now: DateTime<Utc>) -> KeyRecord => access::revoke_key;
    keys(account: Option<&AccountName>) -> Vec<KeyRecord> => access::keys;
    tiers_after(after: Option<&TierName>, limit: usize) -> Vec<Tier> => access::tiers_after;
    accounts_after(after: Option<&AccountName>, limit: usize) -> Vec<Account> => access::accounts_after;
    keys_after(account: Option<&AccountName>, after: Option<(DateTime<Utc>, &KeyPrefix)>, limit: usize)
        -> Vec<KeyRecord> => access::keys_after;
    auth_directory() -> AuthDirectory => auth::directory;
    key_lookup(prefixes: &[&str]) -> KeyLookup => auth::lookup;
    auth_changes(since: i64) -> AuthChanges => auth::changes;
    prune_auth_changes(upto: i64) -> u64 => auth::prune_log;
} in_write {
    set_tier(tier: &Tier, now: DateTime<Utc>) -> bool => access::set_tier_on;
    create_account(name: &AccountName, now: DateTime<Utc>) -> Account => access::create_account_on;
    set_account_entitled(name: &AccountName, entitled: bool, now: DateTime<Utc>) -> Account
        => access::set_account_entitled_on;
    create_key(key: &KeyRecord) -> KeyRecord => access::create_key_on;
    roll_key(old: &KeyPrefix, new: (&KeyPrefix, KeyHash), now: DateTime<Utc>, old_expires_at: DateTime<Utc>)
        -> RolledKey => access::roll_key_on;
});

delegate!(UsageStore {
    apply_usage_batch(batch: &UsageBatch) -> AppliedBatch => usage::apply_usage, clock;
    usage_as_of(key: &KeyPrefix, month: BillingMonth) -> (u64, i64) => usage::usage_as_of;
    usage_batch_applied(id: &str) -> Option<i64> => usage::usage_batch_applied;
    usage(key: &KeyPrefix, from: BillingMonth, to: BillingMonth) -> Vec<(BillingMonth, u64)> => usage::usage;
    usage_days(key: &KeyPrefix, from: NaiveDate, to: NaiveDate) -> Vec<DailyUsage> => usage::usage_days;
    quota_history(key: &KeyPrefix) -> QuotaHistory => usage::quota_history;
});

delegate!(AdminStore {
    key(prefix: &KeyPrefix) -> Option<KeyRecord> => admin::key;
    admin_tokens() -> Vec<AdminTokenRecord> => admin::tokens;
    admin_token(prefix: &str) -> Option<AdminTokenRecord> => admin::token_by_prefix;
    audit_log(before: Option<i64>, limit: usize) -> Vec<AuditEntry> => admin::audit_log;
    idempotency_claim(key: &str, fingerprint: &str, now: DateTime<Utc>) -> IdempotencyClaim => idempotency::claim;
    idempotency_complete(key: &str, status: u16, body: &str) -> () => idempotency::complete;
    idempotency_release(key: &str) -> () => idempotency::release;
} in_write {
    audited_set_tier(tier: &Tier, actor: &Actor, now: DateTime<Utc>) -> bool => admin::set_tier;
    audited_create_account(name: &AccountName, actor: &Actor, now: DateTime<Utc>) -> Account
        => admin::create_account;
    audited_set_account_entitled(name: &AccountName, entitled: bool, actor: &Actor, now: DateTime<Utc>) -> Account
        => admin::set_account_entitled;
    audited_create_key(key: &KeyRecord, actor: &Actor) -> KeyRecord => admin::create_key;
    audited_revoke_key(prefix: &KeyPrefix, actor: &Actor, now: DateTime<Utc>) -> (KeyRecord, bool)
        => admin::revoke_key;
    audited_roll_key(
        old: &KeyPrefix,
        new: (&KeyPrefix, KeyHash),
        actor: &Actor,
        now: DateTime<Utc>,
        old_expires_at: DateTime<Utc>
    ) -> RolledKey => admin::roll_key;
    create_admin_token(token: &AdminTokenRecord, actor: &Actor) -> AdminTokenRecord => admin::create_token;
    revoke_admin_token(name: &AdminTokenName, actor: &Actor, now: DateTime<Utc>) -> AdminTokenRecord
        => admin::revoke_token;
});

delegate!(EventStore {
    event_page(after: EventId, filter: &EventFilter, limit: usize) -> EventLogPage => events::page;
    events_after(after: EventId, limit: usize) -> Vec<StoredEvent> => events::after;
    prune_events(before: DateTime<Utc>) -> u64 => events::prune;
    renew_streams(node: &str, until: DateTime<Utc>) -> u64 => events::renew_streams;
    close_stream(id: &str) -> () => events::close_stream;
} in_write {
    open_stream(lease: &StreamLease) -> bool => events::open_stream;
});

delegate!(WebhookStore {
    webhooks(account: Option<&AccountName>) -> Vec<WebhookEndpoint> => webhooks::list;
    webhook(id: &str) -> Option<WebhookEndpoint> => webhooks::get;
    webhook_attempts(id: &str, limit: usize) -> Vec<WebhookAttempt> => webhooks::attempts;
    claim_webhook_deliveries(owner: &str, now: DateTime<Utc>, lease_until: DateTime<Utc>, limit: usize, run: usize)
        -> Vec<WebhookDelivery> => webhooks::claim;
    webhooks_pending() -> u64 => webhooks::pending;
} in_write {
    create_webhook(new: &NewWebhook, max: usize) -> WebhookEndpoint => webhooks::create;
    update_webhook(id: &str, patch: &WebhookPatch, now: DateTime<Utc>) -> Option<WebhookEndpoint>
        => webhooks::update;
    delete_webhook(id: &str) -> bool => webhooks::delete;
    rotate_webhook_secret(id: &str, secret: &str, old_until: DateTime<Utc>, now: DateTime<Utc>)
        -> Option<WebhookEndpoint> => webhooks::rotate;
    replay_webhook(id: &str, since: EventId) -> Option<WebhookEndpoint> => webhooks::replay;
    ping_webhook(id: &str, now: DateTime<Utc>) -> Option<EventId> => webhooks::ping;
    audited_disable_webhook(id: &str, reason: &str, actor: &Actor, now: DateTime<Utc>) -> Option<WebhookEndpoint>
        => webhooks::disable_audited;
    finish_webhook_deliveries(owner: &str, endpoint: &str, attempts: &[(WebhookAttempt, DeliveryOutcome)]) -> bool
        => webhooks::finish;
});
