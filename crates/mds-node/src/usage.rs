//! The usage reports of a key: `GET /v1/usage` (its requests this billing
//! month and in up to twelve months before it since the key was created,
//! each with the quota in force for it) and `GET /v1/usage/daily` (one
//! month, day by day and route by route).
//!
//! Both read the ledger as this node knows it: the store's counts plus
//! what this node has counted and not flushed yet, taken together with no
//! flush landing in between ([`mds_limits::Meter::read_with_unflushed`]).
//! The store keeps a month's count as the sum of its days, so the days of
//! `/v1/usage/daily` add up exactly to the month of `/v1/usage`, on every
//! node, before and after a flush.
//!
//! With limits shared through Redis, admission decides on Redis's live
//! counter, but the reports still read the ledger: Redis's counter cannot
//! say which day or route a request was on, and it may run ahead of what
//! was counted, on the safe side by design (a `304` whose give-back did not
//! reach Redis, a script that timed out here but ran there, a counter
//! reseeded while a flush was landing). What the reports may lag is the
//! last flush interval (1 s) of the other nodes' traffic.
//!
//! `/v1/usage` does not read the store on every request: it keeps the
//! store's figures per key ([`crate::usage_cache`]) until they may have
//! moved (this node flushed, the store's `usage` or `auth` generation
//! moved, or the key's daily report read the store since). Other nodes'
//! traffic then reaches it after their flush interval plus this node's
//! reload interval (250 ms by default).

use std::collections::HashMap;
use std::sync::Arc;

use mds_domain::daily::{DailyPeriod, V1UsageDaily};
use mds_domain::usage::{BillingMonth, HISTORY_MONTHS, V1Usage, V1UsageWindow};
use mds_store::StoreResult;

use crate::error::ReadError;
use crate::keys::KeyContext;
use crate::node::Node;
use crate::usage_cache::Kept;

impl Node {
    /// The usage record of the key `ctx` (`GET /v1/usage`).
    pub async fn usage_report(&self, ctx: &KeyContext) -> StoreResult<V1Usage> {
        let month = BillingMonth::of(self.config().clock.now());
        let created = BillingMonth::of(ctx.created_at);
        let months: Vec<BillingMonth> = std::iter::successors(Some(month.prev()), |m| Some(m.prev()))
            .take_while(|m| *m >= created)
            .take(HISTORY_MONTHS)
            .collect();
        let span = (months.last().copied().unwrap_or(month), month);
        let meter = self.limiter().meter();
        let read = async {
            // Under the meter's gate: the flush count cannot move meanwhile.
            let start = match self.usage_kept().get(&ctx.prefix, span, meter.flushes()) {
                Ok(kept) => return Ok(kept),
                Err(start) => start,
            };
            let counts = self.store().usage(&ctx.prefix, span.0, span.1).await?;
            let quotas = match months.is_empty() {
                true => None,
                false => Some(self.store().quota_history(&ctx.prefix).await?),
            };
            let kept = Arc::new(Kept { months: counts, quotas });
            self.usage_kept().put(start, &ctx.prefix, span, kept.clone());
            StoreResult::Ok(kept)
        };
        let (stored, unflushed) = meter.read_with_unflushed(&ctx.prefix, read).await;
        let stored = stored?;
        let mut counts: HashMap<BillingMonth, u64> = stored.months.iter().copied().collect();
        for e in unflushed {
            *counts.entry(BillingMonth::of_day(e.day)).or_default() += e.requests;
        }
        let requests = |m: BillingMonth| counts.get(&m).copied().unwrap_or(0);
        let current = V1UsageWindow::new(month, requests(month), ctx.tier.monthly_quota);
        let history = match &stored.quotas {
            Some(quotas) => {
                months.into_iter().map(|m| V1UsageWindow::new(m, requests(m), quotas.quota_for(m))).collect()
            }
            None => Vec::new(),
        };
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

    /// The daily report of the key `ctx` for `month` (`GET
    /// /v1/usage/daily`; `None`: the current month, by the node's clock),
    /// every route of `routes` (the data routes) in every day; a month
    /// outside the reported window is refused ([`DailyPeriod::at`]).
    pub async fn usage_daily_of_month(
        &self,
        ctx: &KeyContext,
        month: Option<BillingMonth>,
        routes: &[&str],
    ) -> Result<V1UsageDaily, ReadError> {
        let period = DailyPeriod::at(month, self.config().clock.now())?;
        Ok(self.usage_daily(ctx, &period, routes).await?)
    }

    /// The daily report of the key `ctx` for `period`, every route of `routes` (the data routes) in every
    /// day. The quota is the one in force now for the current month, the
    /// one the month closed under for a past month, as in
    /// [`Node::usage_report`].
    pub async fn usage_daily(
        &self,
        ctx: &KeyContext,
        period: &DailyPeriod,
        routes: &[&str],
    ) -> StoreResult<V1UsageDaily> {
        let read = self.store().usage_days(&ctx.prefix, period.first(), period.last);
        let (stored, unflushed) = self.limiter().meter().read_with_unflushed(&ctx.prefix, read).await;
        let stored = stored?;
        // `/v1/usage` reads the store next, never reporting less than this.
        self.usage_kept().forget(&ctx.prefix);
        let quota = if period.current {
            ctx.tier.monthly_quota
        } else {
            self.store().quota_history(&ctx.prefix).await?.quota_for(period.month)
        };
        Ok(V1UsageDaily::assemble(
            ctx.prefix.as_str().to_owned(),
            period,
            quota,
            routes,
            stored.iter().chain(&unflushed),
        ))
    }
}
