//! [`Limiter`]: the per-minute limit and the monthly quota, checked together
//! for each request, and the [`Decision`] the HTTP layer reports.

use std::sync::Arc;

use chrono::NaiveDate;
use mds_domain::KeyPrefix;
use mds_domain::usage::BillingMonth;
use mds_store::{StoreResult, UsageStore};

use crate::clock::Clock;
use crate::gcra;
use crate::meter::{self, KeyState, Meter, Outcome, Reservation};

/// The limits of a key's enforced tier.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Requests per rolling minute.
    pub rate_limit_per_minute: u32,
    /// Requests per calendar month.
    pub monthly_quota: u64,
}

/// Where a caller stands against one policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PolicyState {
    /// The policy's quota (`q`).
    pub limit: u64,
    /// What is left (`r`).
    pub remaining: u64,
    /// Seconds until the policy's allowance is full again (`t`).
    pub reset_secs: u64,
}

impl PolicyState {
    /// Remaining as a fraction of the limit (0 = spent), to find the policy
    /// closest to its limit.
    pub fn headroom(&self) -> f64 {
        if self.limit == 0 { 0.0 } else { self.remaining as f64 / self.limit as f64 }
    }
}

/// What an admitted request takes from its key's monthly quota.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Charge {
    /// Nothing: it takes from the per-minute limit only (a usage read).
    Free,
    /// One request, reserved on admission and settled by the decision's
    /// [`QuotaHold`]; recorded in the daily ledger under this route template.
    Counted(&'static str),
}

/// One request put to a limiter: whose it is, the limits of its key's
/// enforced tier, and what it takes from the monthly quota.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ask<'a> {
    /// The key the request came with.
    pub key: &'a KeyPrefix,
    /// Its enforced tier's limits.
    pub limits: Limits,
    /// What it takes from the quota if admitted.
    pub charge: Charge,
}

/// A hold on one request of a key's monthly quota, to settle once the
/// response is known (counted, or released), with the day
/// (UTC) and route its request is recorded under. Dropped unsettled (the
/// request was cancelled or timed out), it counts: the request was
/// admitted.
///
/// A hold of a [`SharedLimiter`](crate::SharedLimiter) also gives a
/// released request back to the lease it came from (or to what the node
/// next tells Redis), so settling never waits on the network.
#[derive(Debug)]
pub struct QuotaHold {
    pub(crate) state: Arc<KeyState>,
    pub(crate) month: BillingMonth,
    pub(crate) day: NaiveDate,
    pub(crate) route: &'static str,
    pub(crate) settled: bool,
    pub(crate) release: Option<crate::shared::Release>,
}

impl QuotaHold {
    /// A reservation of `state` in `month`, admitted on `day` (UTC), for
    /// `route`.
    pub(crate) fn new(
        state: Arc<KeyState>,
        month: BillingMonth,
        day: NaiveDate,
        route: &'static str,
        release: Option<crate::shared::Release>,
    ) -> Self {
        QuotaHold { state, month, day, route, settled: false, release }
    }

    /// Settles with how the request was answered: counted (owed to the
    /// store), a `304` or a `5xx` (given back; a `304` is recorded as one).
    pub fn settle(mut self, outcome: Outcome) {
        self.state.settle(self.month, self.day, self.route, outcome);
        self.settled = true;
        if outcome != Outcome::Counted {
            if let Some(r) = self.release.take() {
                r.apply();
            }
        }
    }
}

impl Drop for QuotaHold {
    fn drop(&mut self) {
        if !self.settled {
            self.state.settle(self.month, self.day, self.route, Outcome::Counted);
        }
    }
}

/// A limit a key is held to, as the rate-limit headers and `429` bodies
/// name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// Requests per rolling minute.
    Minute,
    /// Requests per billing month (the quota).
    Month,
}

impl Policy {
    /// Its name on the wire (`minute`, `month`).
    pub fn as_str(self) -> &'static str {
        match self {
            Policy::Minute => "minute",
            Policy::Month => "month",
        }
    }
}

/// The outcome of admission.
#[derive(Debug)]
pub struct Decision {
    /// The per-minute policy.
    pub minute: PolicyState,
    /// The monthly policy.
    pub month: PolicyState,
    /// Violated policies; empty when admitted.
    pub violated: Vec<Policy>,
    /// When refused: seconds until a retry can succeed.
    pub retry_after_secs: u64,
    /// When admitted and the request counts against the quota: its reservation.
    pub hold: Option<QuotaHold>,
}

impl Decision {
    /// Whether the request may go ahead.
    pub fn admitted(&self) -> bool {
        self.violated.is_empty()
    }
}

/// Where a key stands against its per-minute limit, as a GCRA reports it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct MinuteStanding {
    /// Requests left now.
    pub(crate) remaining: u64,
    /// Nanoseconds until the allowance is full again.
    pub(crate) reset_ns: i64,
    /// When refused: nanoseconds until one request is allowed.
    pub(crate) retry_ns: i64,
}

impl Decision {
    /// The decision for a key standing at `minute` and `used` requests this
    /// month, `until_next_month` seconds before the month ends, with the
    /// `violated` policies: one place for `Retry-After` and both policies,
    /// whichever limiter (local or shared) decided.
    pub(crate) fn assemble(
        limits: Limits,
        until_next_month: u64,
        minute: MinuteStanding,
        used: u64,
        violated: Vec<Policy>,
        hold: Option<QuotaHold>,
    ) -> Decision {
        let retry_after_secs = violated
            .iter()
            .map(|p| match p {
                Policy::Minute => secs_ceil(minute.retry_ns).max(1),
                Policy::Month => until_next_month,
            })
            .max()
            .unwrap_or(0);
        Decision {
            minute: PolicyState {
                limit: u64::from(limits.rate_limit_per_minute),
                remaining: minute.remaining,
                reset_secs: secs_ceil(minute.reset_ns),
            },
            month: PolicyState {
                limit: limits.monthly_quota,
                remaining: limits.monthly_quota.saturating_sub(used),
                reset_secs: until_next_month,
            },
            violated,
            retry_after_secs,
            hold,
        }
    }
}

/// The limiter of one node.
#[derive(Debug)]
pub struct Limiter {
    meter: Arc<Meter>,
    clock: Arc<dyn Clock>,
}

impl Limiter {
    /// A limiter counting into `meter`, reading time from `clock`.
    pub fn new(meter: Arc<Meter>, clock: Arc<dyn Clock>) -> Self {
        Limiter { meter, clock }
    }

    /// The meter.
    pub fn meter(&self) -> &Arc<Meter> {
        &self.meter
    }

    /// The clock.
    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    /// Admits the request `ask` or says why not. Every admitted request
    /// takes from the per-minute limit; a [`Charge::Counted`] one also
    /// reserves one request of the month's quota. A refused request takes
    /// nothing. Both checks happen under the key's one lock; the only store
    /// access is a read of the key's count, once per key and month on this
    /// node.
    pub async fn admit(&self, store: &dyn UsageStore, ask: Ask<'_>) -> StoreResult<Decision> {
        let Ask { key, limits, charge } = ask;
        let now = self.clock.now();
        let month = BillingMonth::of(now);
        let state = self.meter.key_state(key);
        if state.lock().month(month).is_none() {
            self.meter.ensure_seeded(store, key, month).await?;
        }
        let now_ns = mono_nanos(self.clock.elapsed());
        let until_next_month = BillingMonth::seconds_until_next(now);
        let mut violated = Vec::new();
        let mut hold = None;
        let (g, used_after) = {
            let mut s = state.lock();
            let g = gcra::check(s.tat_ns, now_ns, limits.rate_limit_per_minute);
            let used = s.month(month).map_or(0, |c| c.base + c.admitted);
            if !g.allowed {
                violated.push(Policy::Minute);
            }
            if charge != Charge::Free && used >= limits.monthly_quota {
                violated.push(Policy::Month);
            }
            let mut used_after = used;
            if violated.is_empty() {
                if let Charge::Counted(route) = charge {
                    if let Reservation::Reserved { used } = meter::reserve(&mut s, month, limits.monthly_quota) {
                        used_after = used;
                    }
                    hold = Some(QuotaHold::new(state.clone(), month, now.date_naive(), route, None));
                }
                s.tat_ns = Some(g.new_tat_ns);
            }
            (g, used_after)
        };
        let minute = MinuteStanding { remaining: g.remaining as u64, reset_ns: g.reset_ns, retry_ns: g.retry_after_ns };
        Ok(Decision::assemble(limits, until_next_month, minute, used_after, violated, hold))
    }

    /// Forgets what no longer matters: months before last that are settled
    /// in the store, and keys with nothing left whose allowance is full.
    pub fn prune(&self) {
        let now = self.clock.now();
        self.meter.forget_before(BillingMonth::of(now).prev(), mono_nanos(self.clock.elapsed()));
    }
}

/// Nanoseconds of monotonic time (saturating after 292 years).
pub(crate) fn mono_nanos(d: std::time::Duration) -> i64 {
    i64::try_from(d.as_nanos()).unwrap_or(i64::MAX)
}

/// Whole seconds, rounded up, of a non-negative nanosecond span.
pub(crate) fn secs_ceil(ns: i64) -> u64 {
    (ns.max(0) as u64).div_ceil(1_000_000_000)
}
