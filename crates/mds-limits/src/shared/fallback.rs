//! While Redis is away: the node's own [`Limiter`](crate::Limiter) decides,
//! with its share of the per-minute limit, and what it admits is added to
//! the running total the next script tells Redis.

use std::sync::Arc;

use mds_store::{StoreResult, UsageStore};

use super::SharedLimiter;
use super::state::{KeyLease, Release};
use super::stats::Count;
use crate::limiter::{Ask, Decision, Limits};

impl SharedLimiter {
    /// The node's own decision, with its share of the per-minute limit; a
    /// counted admission is added to the running total Redis is told of
    /// (through the key's `lease` state, which a release also reaches).
    pub(super) async fn fallback(
        &self,
        store: &dyn UsageStore,
        ask: Ask<'_>,
        lease: Arc<KeyLease>,
    ) -> StoreResult<Decision> {
        let limits = Limits {
            rate_limit_per_minute: (ask.limits.rate_limit_per_minute / self.config.nodes).max(1),
            monthly_quota: ask.limits.monthly_quota,
        };
        let mut d = self.local.admit(store, Ask { limits, ..ask }).await?;
        if d.admitted() {
            self.counters.bump(Count::LocalAdmitted);
            if let Some(t) = d.hold.as_mut() {
                let mut s = lease.lock();
                if s.adj_month != Some(t.month) {
                    (s.adj, s.adj_acked, s.adj_month) = (0, 0, Some(t.month));
                }
                s.adj += 1;
                t.release = Some(Release { lease: lease.clone(), seq: None, month: t.month });
            }
        } else {
            self.counters.bump(Count::LocalRefused);
        }
        Ok(d)
    }
}
