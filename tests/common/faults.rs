//! A fault injector around a real store (the chaos proxy of crates.io, in
//! process): every call goes to the real store unless a fault is switched
//! on, in which case it fails as an unreachable, broken or slow store would.

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use mds_domain::usage::{BillingMonth, QuotaHistory};
use mds_domain::{Account, AccountName, Article, Company, KeyPrefix, Slug, Tier};
use mds_store::{
    AuthSnapshot, Generations, KeyRecord, NewKey, Store, StoreError, StoreResult, UpsertSummary, UsageBatch,
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
            1 => Err(StoreError::Unavailable(sqlx_io_error())),
            2 => Err(StoreError::Database(sqlx::Error::Protocol("injected: corrupt row in table secrets".into()))),
            3 => {
                tokio::time::sleep(Duration::from_secs(2)).await;
                Ok(())
            }
            4 => panic!("injected: a bug in the store"),
            _ => Ok(()),
        }
    }
}

fn sqlx_io_error() -> sqlx::Error {
    sqlx::Error::Io(std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "injected: connection refused"))
}

#[async_trait]
impl Store for Faulty {
    async fn migrate(&self) -> StoreResult<()> {
        self.gate().await?;
        self.inner.migrate().await
    }
    async fn ping(&self) -> StoreResult<()> {
        self.gate().await?;
        self.inner.ping().await
    }
    async fn generations(&self) -> StoreResult<Generations> {
        self.gate().await?;
        self.inner.generations().await
    }
    async fn cursor_secret(&self) -> StoreResult<Vec<u8>> {
        self.gate().await?;
        self.inner.cursor_secret().await
    }
    async fn upsert_companies(&self, rows: &[Company]) -> StoreResult<UpsertSummary> {
        self.gate().await?;
        self.inner.upsert_companies(rows).await
    }
    async fn companies(&self) -> StoreResult<Vec<Company>> {
        self.gate().await?;
        self.inner.companies().await
    }
    async fn company_count(&self) -> StoreResult<u64> {
        self.gate().await?;
        self.inner.company_count().await
    }
    async fn companies_sorted(&self, each: &mut (dyn FnMut(Company) + Send)) -> StoreResult<()> {
        self.gate().await?;
        self.inner.companies_sorted(each).await
    }
    async fn save_catalog_snapshot(&self, generation: i64, bytes: &[u8]) -> StoreResult<()> {
        self.gate().await?;
        self.inner.save_catalog_snapshot(generation, bytes).await
    }
    async fn catalog_snapshot(&self, generation: i64) -> StoreResult<Option<Vec<u8>>> {
        self.gate().await?;
        self.inner.catalog_snapshot(generation).await
    }
    async fn upsert_articles(&self, rows: &[Article]) -> StoreResult<UpsertSummary> {
        self.gate().await?;
        self.inner.upsert_articles(rows).await
    }
    async fn article(&self, slug: &Slug) -> StoreResult<Option<Article>> {
        self.gate().await?;
        self.inner.article(slug).await
    }
    async fn article_count(&self) -> StoreResult<u64> {
        self.gate().await?;
        self.inner.article_count().await
    }
    async fn tiers(&self) -> StoreResult<Vec<Tier>> {
        self.gate().await?;
        self.inner.tiers().await
    }
    async fn set_tier(&self, tier: &Tier, now: DateTime<Utc>) -> StoreResult<bool> {
        self.gate().await?;
        self.inner.set_tier(tier, now).await
    }
    async fn create_account(&self, name: &AccountName, now: DateTime<Utc>) -> StoreResult<Account> {
        self.gate().await?;
        self.inner.create_account(name, now).await
    }
    async fn set_account_entitled(
        &self,
        name: &AccountName,
        entitled: bool,
        now: DateTime<Utc>,
    ) -> StoreResult<Account> {
        self.gate().await?;
        self.inner.set_account_entitled(name, entitled, now).await
    }
    async fn accounts(&self) -> StoreResult<Vec<Account>> {
        self.gate().await?;
        self.inner.accounts().await
    }
    async fn create_key(&self, key: &NewKey) -> StoreResult<KeyRecord> {
        self.gate().await?;
        self.inner.create_key(key).await
    }
    async fn revoke_key(&self, prefix: &KeyPrefix, now: DateTime<Utc>) -> StoreResult<KeyRecord> {
        self.gate().await?;
        self.inner.revoke_key(prefix, now).await
    }
    async fn keys(&self, account: Option<&AccountName>) -> StoreResult<Vec<KeyRecord>> {
        self.gate().await?;
        self.inner.keys(account).await
    }
    async fn auth_snapshot(&self) -> StoreResult<AuthSnapshot> {
        self.gate().await?;
        self.inner.auth_snapshot().await
    }
    async fn apply_usage(&self, batch: &UsageBatch) -> StoreResult<bool> {
        self.gate().await?;
        self.inner.apply_usage(batch).await
    }
    async fn usage(
        &self,
        key: &KeyPrefix,
        from: BillingMonth,
        to: BillingMonth,
    ) -> StoreResult<Vec<(BillingMonth, u64)>> {
        self.gate().await?;
        self.inner.usage(key, from, to).await
    }
    async fn quota_history(&self, key: &KeyPrefix) -> StoreResult<QuotaHistory> {
        self.gate().await?;
        self.inner.quota_history(key).await
    }
}
