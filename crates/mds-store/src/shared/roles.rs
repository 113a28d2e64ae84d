//! The role traits of [`crate::roles`] implemented for the backend's store
//! (`super::Backend`, which holds its `pool`), each method one call to the
//! shared module that does it.
//!
//! Compiled once per backend (see `shared/mod.rs`).

use async_trait::async_trait;
use chrono::{DateTime, NaiveDate, Utc};
use mds_domain::news::NewsKey;
use mds_domain::usage::{BillingMonth, QuotaHistory};
use mds_domain::{
    Account, AccountName, Actor, AdminTokenName, Article, ArticleSummary, AuditEntry, Company, KeyHash, KeyPrefix,
    NewsFilter, Slug, Tier, TierName,
};

use super::{Backend, access, admin, auth, catalog, idempotency, meta, migrate, news, snapshot, usage};
use crate::{
    AccessStore, AdminStore, AdminTokenRecord, AuthChanges, AuthDirectory, CatalogStore, DailyUsage, Generations,
    IdempotencyClaim, KeyLookup, KeyRecord, MetaStore, NewKey, NewsStore, RolledKey, StoreResult, StoredCompany,
    UpsertSummary, UsageBatch, UsageStore,
};

#[async_trait]
impl MetaStore for Backend {
    async fn migrate(&self) -> StoreResult<()> {
        migrate::run(&self.pool).await
    }

    async fn ping(&self) -> StoreResult<()> {
        meta::ping(&self.pool).await
    }

    async fn generations(&self) -> StoreResult<Generations> {
        meta::generations(&self.pool).await
    }

    async fn cursor_secret(&self) -> StoreResult<Vec<u8>> {
        meta::cursor_secret(&self.pool).await
    }
}

#[async_trait]
impl CatalogStore for Backend {
    async fn upsert_companies(&self, rows: &[Company]) -> StoreResult<UpsertSummary> {
        catalog::upsert(&self.pool, rows).await
    }

    async fn upsert_company_chunks(
        &self,
        chunks: &mut (dyn Iterator<Item = Vec<Company>> + Send),
    ) -> StoreResult<UpsertSummary> {
        catalog::upsert_chunks(&self.pool, chunks).await
    }

    async fn companies(&self) -> StoreResult<Vec<Company>> {
        catalog::companies(&self.pool).await
    }

    async fn company_count(&self) -> StoreResult<u64> {
        catalog::company_count(&self.pool).await
    }

    async fn companies_sorted(&self, each: &mut (dyn FnMut(StoredCompany) + Send)) -> StoreResult<()> {
        catalog::companies_sorted(&self.pool, each).await
    }

    async fn generation_nonces(&self) -> StoreResult<Vec<(i64, i64)>> {
        catalog::generation_nonces(&self.pool).await
    }

    async fn save_catalog_snapshot(&self, generation: i64, bytes: &[u8]) -> StoreResult<()> {
        snapshot::save(&self.pool, generation, bytes).await
    }

    async fn catalog_snapshot(&self, generation: i64) -> StoreResult<Option<Vec<u8>>> {
        snapshot::load(&self.pool, generation).await
    }
}

#[async_trait]
impl NewsStore for Backend {
    async fn upsert_articles(&self, rows: &[Article]) -> StoreResult<UpsertSummary> {
        catalog::upsert(&self.pool, rows).await
    }

    async fn article(&self, slug: &Slug) -> StoreResult<Option<Article>> {
        catalog::article(&self.pool, slug).await
    }

    async fn news_page(
        &self,
        filter: &NewsFilter,
        after: Option<&NewsKey>,
        limit: usize,
    ) -> StoreResult<Vec<ArticleSummary>> {
        news::news_page(&self.pool, filter, after, limit).await
    }

    async fn article_count(&self) -> StoreResult<u64> {
        catalog::article_count(&self.pool).await
    }
}

#[async_trait]
impl AccessStore for Backend {
    async fn tiers(&self) -> StoreResult<Vec<Tier>> {
        access::tiers(&self.pool).await
    }

    async fn set_tier(&self, tier: &Tier, now: DateTime<Utc>) -> StoreResult<bool> {
        access::set_tier(&self.pool, tier, now).await
    }

    async fn create_account(&self, name: &AccountName, now: DateTime<Utc>) -> StoreResult<Account> {
        access::create_account(&self.pool, name, now).await
    }

    async fn set_account_entitled(
        &self,
        name: &AccountName,
        entitled: bool,
        now: DateTime<Utc>,
    ) -> StoreResult<Account> {
        access::set_account_entitled(&self.pool, name, entitled, now).await
    }

    async fn accounts(&self) -> StoreResult<Vec<Account>> {
        access::accounts(&self.pool).await
    }

    async fn create_key(&self, key: &NewKey) -> StoreResult<KeyRecord> {
        access::create_key(&self.pool, key).await
    }

    async fn revoke_key(&self, prefix: &KeyPrefix, now: DateTime<Utc>) -> StoreResult<KeyRecord> {
        access::revoke_key(&self.pool, prefix, now).await
    }

    async fn roll_key(
        &self,
        old: &KeyPrefix,
        new: (&KeyPrefix, KeyHash),
        now: DateTime<Utc>,
        old_expires_at: DateTime<Utc>,
    ) -> StoreResult<RolledKey> {
        access::roll_key(&self.pool, old, new, now, old_expires_at).await
    }

    async fn keys(&self, account: Option<&AccountName>) -> StoreResult<Vec<KeyRecord>> {
        access::keys(&self.pool, account).await
    }

    async fn tiers_after(&self, after: Option<&TierName>, limit: usize) -> StoreResult<Vec<Tier>> {
        access::tiers_after(&self.pool, after, limit).await
    }

    async fn accounts_after(&self, after: Option<&AccountName>, limit: usize) -> StoreResult<Vec<Account>> {
        access::accounts_after(&self.pool, after, limit).await
    }

    async fn keys_after(
        &self,
        account: Option<&AccountName>,
        after: Option<(DateTime<Utc>, &KeyPrefix)>,
        limit: usize,
    ) -> StoreResult<Vec<KeyRecord>> {
        access::keys_after(&self.pool, account, after, limit).await
    }

    async fn auth_directory(&self) -> StoreResult<AuthDirectory> {
        auth::directory(&self.pool).await
    }

    async fn key_lookup(&self, prefixes: &[&str]) -> StoreResult<KeyLookup> {
        auth::lookup(&self.pool, prefixes).await
    }

    async fn auth_changes(&self, since: i64) -> StoreResult<AuthChanges> {
        auth::changes(&self.pool, since).await
    }

    async fn prune_auth_changes(&self, upto: i64) -> StoreResult<u64> {
        auth::prune_log(&self.pool, upto).await
    }
}

#[async_trait]
impl UsageStore for Backend {
    async fn apply_usage(&self, batch: &UsageBatch) -> StoreResult<bool> {
        usage::apply_usage(&self.pool, batch, Utc::now()).await
    }

    async fn usage(
        &self,
        key: &KeyPrefix,
        from: BillingMonth,
        to: BillingMonth,
    ) -> StoreResult<Vec<(BillingMonth, u64)>> {
        usage::usage(&self.pool, key, from, to).await
    }

    async fn usage_days(&self, key: &KeyPrefix, from: NaiveDate, to: NaiveDate) -> StoreResult<Vec<DailyUsage>> {
        usage::usage_days(&self.pool, key, from, to).await
    }

    async fn quota_history(&self, key: &KeyPrefix) -> StoreResult<QuotaHistory> {
        usage::quota_history(&self.pool, key).await
    }
}

#[async_trait]
impl AdminStore for Backend {
    async fn audited_set_tier(&self, tier: &Tier, actor: &Actor, now: DateTime<Utc>) -> StoreResult<bool> {
        admin::set_tier(&self.pool, tier, actor, now).await
    }

    async fn audited_create_account(
        &self,
        name: &AccountName,
        actor: &Actor,
        now: DateTime<Utc>,
    ) -> StoreResult<Account> {
        admin::create_account(&self.pool, name, actor, now).await
    }

    async fn audited_set_account_entitled(
        &self,
        name: &AccountName,
        entitled: bool,
        actor: &Actor,
        now: DateTime<Utc>,
    ) -> StoreResult<Account> {
        admin::set_account_entitled(&self.pool, name, entitled, actor, now).await
    }

    async fn audited_create_key(&self, key: &NewKey, actor: &Actor) -> StoreResult<KeyRecord> {
        admin::create_key(&self.pool, key, actor).await
    }

    async fn audited_revoke_key(
        &self,
        prefix: &KeyPrefix,
        actor: &Actor,
        now: DateTime<Utc>,
    ) -> StoreResult<(KeyRecord, bool)> {
        admin::revoke_key(&self.pool, prefix, actor, now).await
    }

    async fn audited_roll_key(
        &self,
        old: &KeyPrefix,
        new: (&KeyPrefix, KeyHash),
        actor: &Actor,
        now: DateTime<Utc>,
        old_expires_at: DateTime<Utc>,
    ) -> StoreResult<RolledKey> {
        admin::roll_key(&self.pool, old, new, actor, now, old_expires_at).await
    }

    async fn key(&self, prefix: &KeyPrefix) -> StoreResult<Option<KeyRecord>> {
        admin::key(&self.pool, prefix).await
    }

    async fn create_admin_token(&self, token: &AdminTokenRecord, actor: &Actor) -> StoreResult<AdminTokenRecord> {
        admin::create_token(&self.pool, token, actor).await
    }

    async fn revoke_admin_token(
        &self,
        name: &AdminTokenName,
        actor: &Actor,
        now: DateTime<Utc>,
    ) -> StoreResult<AdminTokenRecord> {
        admin::revoke_token(&self.pool, name, actor, now).await
    }

    async fn admin_tokens(&self) -> StoreResult<Vec<AdminTokenRecord>> {
        admin::tokens(&self.pool).await
    }

    async fn admin_token(&self, prefix: &str) -> StoreResult<Option<AdminTokenRecord>> {
        admin::token_by_prefix(&self.pool, prefix).await
    }

    async fn audit_log(&self, before: Option<i64>, limit: usize) -> StoreResult<Vec<AuditEntry>> {
        admin::audit_log(&self.pool, before, limit).await
    }

    async fn idempotency_claim(
        &self,
        key: &str,
        fingerprint: &str,
        now: DateTime<Utc>,
    ) -> StoreResult<IdempotencyClaim> {
        idempotency::claim(&self.pool, key, fingerprint, now).await
    }

    async fn idempotency_complete(&self, key: &str, status: u16, body: &str) -> StoreResult<()> {
        idempotency::complete(&self.pool, key, status, body).await
    }

    async fn idempotency_release(&self, key: &str) -> StoreResult<()> {
        idempotency::release(&self.pool, key).await
    }
}
