//! Deciding a request without Redis: from the key's held lease, or by a
//! standing refusal ([`Blocked`]) until the tokens it waits for can have
//! come.

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use mds_domain::usage::BillingMonth;

use super::SharedLimiter;
use super::state::{KeyLease, Release};
use super::stats::Count;
use crate::lease::Held;
use crate::limiter::{Ask, Charge, Decision, Limits, MinuteStanding, Policy, QuotaHold};
use crate::meter;

/// Refused until a time, without asking Redis again before it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Blocked {
    /// Until when it stands (the limiter's monotonic clock).
    pub(super) until: Duration,
    /// When Redis's minute allows one more (its `retry`), and is full.
    pub(super) retry_at: Duration,
    pub(super) reset_at: Duration,
    /// What it was decided for: a request of another month or under other
    /// limits asks Redis.
    pub(super) month: BillingMonth,
    pub(super) limits: Limits,
    /// Which limits refuse: the minute, the month (a usage read is refused
    /// only for the minute).
    pub(super) minute: bool,
    pub(super) month_spent: bool,
    /// What the headers report meanwhile.
    pub(super) minute_remaining: u64,
    pub(super) counter: u64,
}

impl SharedLimiter {
    /// The decision the key's lease (or its standing refusal) gives without
    /// Redis, if it gives one.
    pub(super) fn admit_from_lease(&self, lease: &Arc<KeyLease>, ask: Ask<'_>) -> Option<Decision> {
        let Ask { limits, charge, .. } = ask;
        let counts = charge != Charge::Free;
        let clock = self.local.clock();
        let (now, mono) = (clock.now(), clock.elapsed());
        let month = BillingMonth::of(now);
        let mut s = lease.lock();
        let size = s.size;
        let standing = s.blocked.filter(|b| b.until > mono);
        if let Some(h) = s.held.as_mut() {
            if h.month == month && h.limits == limits && h.live(mono) {
                if h.take(counts) {
                    // Metered before the lease's lock is let go: a request
                    // taken from the lease is then never missing from what
                    // the node counts as not in the store.
                    let h = *h;
                    return Some(self.admitted(ask, lease, &h, now, mono));
                }
                // Spent, and Redis had nothing left: refused here, without
                // asking Redis, until a lease of this size has refilled (at
                // most [`SharedLimiter::minute_wait`]).
                if let Some((retry_at, ready_at)) = h.refill(size) {
                    let until = ready_at.min(mono + self.minute_wait());
                    if mono < retry_at.max(until) && standing.is_none() {
                        let h = *h;
                        s.blocked = Some(Blocked {
                            until,
                            retry_at,
                            reset_at: h.taken_at + Duration::from_micros(u64::try_from(h.reset_us).unwrap_or(0)),
                            month,
                            limits,
                            minute: true,
                            month_spent: false,
                            minute_remaining: 0,
                            counter: h.month_used(),
                        });
                    }
                }
            }
        }
        let b = s.blocked?;
        if mono >= b.until || b.month != month || b.limits != limits || !(b.minute || (counts && b.month_spent)) {
            return None;
        }
        drop(s);
        Some(self.refused(&b, limits, counts, now, mono))
    }

    /// An admitted request from lease `h` (already taken from it).
    pub(super) fn admitted(
        &self,
        ask: Ask<'_>,
        lease: &Arc<KeyLease>,
        h: &Held,
        now: DateTime<Utc>,
        mono: Duration,
    ) -> Decision {
        let Ask { key, limits, charge } = ask;
        self.counters.bump(Count::RedisAdmitted);
        let used = h.month_used();
        let state = self.local.meter().key_state(key);
        meter::record_shared(&mut state.lock(), h.month, used, charge != Charge::Free);
        let hold = match charge {
            Charge::Counted(route) => {
                let release = Release { lease: lease.clone(), seq: Some(h.seq), month: h.month };
                Some(QuotaHold::new(state, h.month, now.date_naive(), route, Some(release)))
            }
            Charge::Free => None,
        };
        let minute = MinuteStanding { remaining: h.minute_remaining(), reset_ns: h.reset_ns(mono), retry_ns: 0 };
        Decision::assemble(limits, BillingMonth::seconds_until_next(now), minute, used, Vec::new(), hold)
    }

    /// A refused request, standing refusal `b`.
    pub(super) fn refused(
        &self,
        b: &Blocked,
        limits: Limits,
        counts: bool,
        now: DateTime<Utc>,
        mono: Duration,
    ) -> Decision {
        let mut violated = Vec::new();
        if b.minute {
            violated.push(Policy::Minute);
            self.counters.bump(Count::RedisRefusedMinute);
        }
        if counts && b.month_spent {
            violated.push(Policy::Month);
            if !b.minute {
                self.counters.bump(Count::RedisRefusedMonth);
            }
        }
        let ns = |at: Duration| i64::try_from(at.saturating_sub(mono).as_nanos()).unwrap_or(i64::MAX);
        let minute = MinuteStanding {
            remaining: b.minute_remaining,
            reset_ns: ns(b.reset_at),
            retry_ns: ns(b.retry_at.max(b.until)),
        };
        Decision::assemble(limits, BillingMonth::seconds_until_next(now), minute, b.counter, violated, None)
    }
}
