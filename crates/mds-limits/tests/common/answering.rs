//! [`Answering`]: the real store, with `apply_usage_batch`'s answer late or
//! lost after it committed.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use chrono::NaiveDate;
use mds_domain::KeyPrefix;
use mds_domain::daily::DailyUsage;
use mds_domain::usage::{BillingMonth, QuotaHistory};
use mds_store::prelude::*;
use mds_store::sqlite::SqliteStore;
use mds_store::{AppliedBatch, Cause, StoreError, StoreResult, UsageBatch};

/// The real store, whose `apply_usage_batch` commits, then returns only
/// `delay` later (the moment a batch is in the store and still in the
/// node's outbox, stretched), or, once after [`Answering::lose_next`], an
/// error instead of its answer (a connection reset after the commit).
pub(crate) struct Answering {
    pub(crate) inner: SqliteStore,
    delay: Duration,
    lose: AtomicBool,
}

impl Answering {
    /// Answers `delay` after each commit.
    pub(crate) fn late(inner: SqliteStore, delay: Duration) -> Self {
        Answering { inner, delay, lose: AtomicBool::new(false) }
    }

    /// The next batch applied is answered with an error.
    pub(crate) fn lose_next(&self) {
        self.lose.store(true, Ordering::SeqCst);
    }
}

#[async_trait]
impl UsageStore for Answering {
    async fn apply_usage_batch(&self, batch: &UsageBatch) -> StoreResult<AppliedBatch> {
        let applied = self.inner.apply_usage_batch(batch).await;
        tokio::time::sleep(self.delay).await;
        if applied.is_ok() && self.lose.swap(false, Ordering::SeqCst) {
            return Err(StoreError::Unavailable(Cause::new("the answer was lost after the commit")));
        }
        applied
    }

    async fn usage_as_of(&self, key: &KeyPrefix, month: BillingMonth) -> StoreResult<(u64, i64)> {
        self.inner.usage_as_of(key, month).await
    }

    async fn usage_batch_applied(&self, id: &str) -> StoreResult<Option<i64>> {
        self.inner.usage_batch_applied(id).await
    }

    async fn usage(
        &self,
        key: &KeyPrefix,
        from: BillingMonth,
        to: BillingMonth,
    ) -> StoreResult<Vec<(BillingMonth, u64)>> {
        self.inner.usage(key, from, to).await
    }

    async fn usage_days(&self, key: &KeyPrefix, from: NaiveDate, to: NaiveDate) -> StoreResult<Vec<DailyUsage>> {
        self.inner.usage_days(key, from, to).await
    }

    async fn quota_history(&self, key: &KeyPrefix) -> StoreResult<QuotaHistory> {
        self.inner.quota_history(key).await
    }
}
