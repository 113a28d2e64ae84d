//! The usage report of `GET /v1/usage`: the calling key's requests this
//! billing month (the live count: Redis with shared limits, else this
//! node's meter seeded from the store) and in up to twelve months before it
//! since the key was created (the store's counts plus what this node has
//! not flushed yet), each with the quota in force for it.

use std::collections::HashMap;

use mds_domain::usage::{BillingMonth, HISTORY_MONTHS, V1Usage, V1UsageWindow};
use mds_store::StoreResult;

use crate::keys::KeyContext;
use crate::node::Node;

impl Node {
    /// The usage record of the key `ctx`.
    pub async fn usage_report(&self, ctx: &KeyContext) -> StoreResult<V1Usage> {
        let meter = self.limiter.meter();
        let month = BillingMonth::of(self.config.clock.now());
        // With limits shared through Redis, its counter is the live truth
        // across nodes; this node's own view is the fallback.
        let live = match &self.shared {
            Some(shared) => shared.shared_used(&ctx.prefix, month).await,
            None => None,
        };
        let used = match live {
            Some(n) => n,
            None => {
                meter.ensure_seeded(&*self.store, &ctx.prefix, month).await?;
                meter.used(&ctx.prefix, month).unwrap_or(0)
            }
        };
        let current = V1UsageWindow::new(month, used, ctx.tier.monthly_quota);

        let created = BillingMonth::of(ctx.created_at);
        let months: Vec<BillingMonth> = std::iter::successors(Some(month.prev()), |m| Some(m.prev()))
            .take_while(|m| *m >= created)
            .take(HISTORY_MONTHS)
            .collect();
        let mut history = Vec::with_capacity(months.len());
        if let (Some(&newest), Some(&oldest)) = (months.first(), months.last()) {
            let stored: HashMap<BillingMonth, u64> =
                self.store.usage(&ctx.prefix, oldest, newest).await?.into_iter().collect();
            let unflushed = meter.unflushed(&ctx.prefix);
            let quotas = self.store.quota_history(&ctx.prefix).await?;
            for m in months {
                let requests = stored.get(&m).copied().unwrap_or(0) + unflushed.get(&m).copied().unwrap_or(0);
                history.push(V1UsageWindow::new(m, requests, quotas.quota_for(m)));
            }
        }
        Ok(V1Usage {
            key_prefix: ctx.prefix.as_str().to_owned(),
            tier: ctx.tier.name.as_str().to_owned(),
            plan_tier: ctx.plan_tier.as_str().to_owned(),
            entitled: ctx.entitled,
            environment: ctx.environment.as_str().to_owned(),
            rate_limit_per_minute: ctx.tier.rate_limit_per_minute,
            current_month: current,
            history,
        })
    }
}
