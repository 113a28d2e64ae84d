//! [`Limiter`]: the per-minute limit and the monthly quota, checked together
//! for each request, and the [`Decision`] the HTTP layer reports.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use mds_domain::KeyPrefix;
use mds_domain::usage::BillingMonth;
use mds_store::{Store, StoreResult};

use crate::clock::Clock;
use crate::gcra;
use crate::meter::{Meter, Reservation};

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

/// A quota reservation to settle once the response is known. Dropped
/// unsettled (the request was cancelled or timed out), it counts: the
/// request was admitted.
#[derive(Debug)]
pub struct Ticket {
    meter: Arc<Meter>,
    key: KeyPrefix,
    month: BillingMonth,
    settled: bool,
}

impl Ticket {
    /// Settles: `counted` (owed to the store) or released (a `304`).
    pub fn settle(mut self, counted: bool) {
        self.meter.settle(&self.key, self.month, counted);
        self.settled = true;
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        if !self.settled {
            self.meter.settle(&self.key, self.month, true);
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
    /// Violated policies (`minute`, `month`); empty when admitted.
    pub violated: Vec<&'static str>,
    /// When refused: seconds until a retry can succeed.
    pub retry_after_secs: u64,
    /// When admitted and the request counts against the quota: its reservation.
    pub ticket: Option<Ticket>,
}

impl Decision {
    /// Whether the request may go ahead.
    pub fn admitted(&self) -> bool {
        self.violated.is_empty()
    }
}

/// The limiter of one node.
#[derive(Debug)]
pub struct Limiter {
    tats: Mutex<HashMap<KeyPrefix, i64>>,
    meter: Arc<Meter>,
    clock: Arc<dyn Clock>,
}

impl Limiter {
    /// A limiter counting into `meter`, reading time from `clock`.
    pub fn new(meter: Arc<Meter>, clock: Arc<dyn Clock>) -> Self {
        Limiter { tats: Mutex::new(HashMap::new()), meter, clock }
    }

    /// The meter.
    pub fn meter(&self) -> &Arc<Meter> {
        &self.meter
    }

    /// The clock.
    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    /// Admits one request of `key` or says why not. Every admitted request
    /// takes from the per-minute limit; with `counts`, it also reserves one
    /// request of the month's quota. A refused request takes nothing. The
    /// only store access is a read of the key's count, once per key and
    /// month on this node.
    pub async fn admit(
        &self,
        store: &dyn Store,
        key: &KeyPrefix,
        limits: Limits,
        counts: bool,
    ) -> StoreResult<Decision> {
        let now = self.clock.now();
        let month = BillingMonth::of(now);
        self.meter.ensure_seeded(store, key, month).await?;
        let now_ms = now.timestamp_millis();
        let until_next_month = BillingMonth::seconds_until_next(now);
        let mut tats = self.tats.lock().expect("never poisoned: no panics under it");
        let g = gcra::check(tats.get(key).copied(), now_ms, limits.rate_limit_per_minute);
        let used = self.meter.used(key, month).unwrap_or(0);
        let mut violated = Vec::new();
        if !g.allowed {
            violated.push("minute");
        }
        if counts && used >= limits.monthly_quota {
            violated.push("month");
        }
        let mut used_after = used;
        let mut ticket = None;
        if violated.is_empty() && counts {
            match self.meter.reserve(key, month, limits.monthly_quota) {
                Reservation::Reserved { used } => {
                    used_after = used;
                    ticket = Some(Ticket { meter: self.meter.clone(), key: key.clone(), month, settled: false });
                }
                Reservation::Exhausted { .. } => violated.push("month"),
                Reservation::Unseeded => unreachable!("seeded above; entries are only forgotten for past months"),
            }
        }
        if violated.is_empty() {
            tats.insert(key.clone(), g.new_tat_ms);
        }
        drop(tats);
        let retry_after_secs = violated
            .iter()
            .map(|p| if *p == "minute" { (g.retry_after_ms as u64).div_ceil(1000).max(1) } else { until_next_month })
            .max()
            .unwrap_or(0);
        Ok(Decision {
            minute: PolicyState {
                limit: limits.rate_limit_per_minute as u64,
                remaining: g.remaining as u64,
                reset_secs: (g.reset_ms.max(0) as u64).div_ceil(1000),
            },
            month: PolicyState {
                limit: limits.monthly_quota,
                remaining: limits.monthly_quota.saturating_sub(used_after),
                reset_secs: until_next_month,
            },
            violated,
            retry_after_secs,
            ticket,
        })
    }

    /// Drops per-minute state of keys whose allowance is full again (it is
    /// the same as having none) and meter counts of past months that are
    /// settled in the store.
    pub fn prune(&self) {
        let now = self.clock.now();
        let now_ms = now.timestamp_millis();
        self.tats.lock().expect("never poisoned").retain(|_, tat| *tat > now_ms);
        self.meter.forget_before(BillingMonth::of(now).prev());
    }
}
