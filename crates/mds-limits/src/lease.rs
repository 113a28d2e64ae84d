//! Leases: the share of a key's per-minute tokens and month quota that one
//! node took from Redis and admits from locally, and how big the next one
//! should be. Pure state and arithmetic; the Redis side is in
//! [`crate::shared`].
//!
//! # Sizing (the rules taken from Doorman and Envoy, see docs/deploy.md)
//! - A key starts with leases of one: a key seen for the first time, or a
//!   key with a small limit, is limited exactly as if every request asked
//!   Redis.
//! - A lease spent before its TTL doubles what the next asks for (slow
//!   start, as Doorman's clients ask for more capacity when they use all
//!   they have); a refusal keeps it, so a key held at its limit asks for
//!   ever larger batches and, refused meanwhile, waits for them to refill.
//! - A lease that lived its TTL sizes the next one to what was spent in it,
//!   plus a quarter (the demand observed over one TTL, with headroom).
//! - Never more than [`max_lease`]: two TTLs' worth of the key's rate per
//!   node (`2 × limit × TTL / 60 s / nodes`), so one node cannot hoard a
//!   key's minute. Below one, the lease is one.
//! - Redis grants at most a fair share of what is left
//!   (`max(1, available / nodes)`) of both the minute and the month, so
//!   near exhaustion leases shrink to one and the last requests are shared
//!   exactly.
//!
//! # What a lease costs in exactness
//! The month quota stays exact: month tokens are reserved when leased. A
//! lease's per-minute tokens are taken from the GCRA when it begins; spent
//! later, after the key's allowance refilled meanwhile, they come on top of
//! it, so in a rolling minute a key may pass its limit by what its nodes
//! held in leases (at most `2 × limit × TTL / 60 s`), and never on leases
//! of one.

use std::time::Duration;

use mds_domain::usage::BillingMonth;

use crate::limiter::Limits;

/// Tokens of one kind a lease was granted, and how many of them it spent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Tokens {
    /// Granted.
    pub(crate) granted: u64,
    /// Spent.
    pub(crate) used: u64,
}

impl Tokens {
    /// `granted` tokens, none spent.
    pub(crate) fn new(granted: u64) -> Self {
        Tokens { granted, used: 0 }
    }

    /// Those not spent.
    pub(crate) fn left(&self) -> u64 {
        self.granted.saturating_sub(self.used)
    }

    /// Whether every one granted is spent.
    pub(crate) fn spent_out(&self) -> bool {
        self.used >= self.granted
    }
}

/// A lease this node holds for one key, as Redis granted it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Held {
    /// The attempt that took it.
    pub(crate) seq: u64,
    /// The month whose quota it took from.
    pub(crate) month: BillingMonth,
    /// The limits it was taken under (a tier change ends it).
    pub(crate) limits: Limits,
    /// Per-minute tokens.
    pub(crate) min: Tokens,
    /// Month tokens (quota).
    pub(crate) mon: Tokens,
    /// When it was taken and when it ends (the node's monotonic clock).
    pub(crate) taken_at: Duration,
    pub(crate) ends_at: Duration,
    /// Per-minute tokens left in Redis after the grant.
    pub(crate) redis_remaining: u64,
    /// Microseconds, at the grant, until the minute's allowance was full.
    pub(crate) reset_us: i64,
    /// The month's counter after the grant (spent plus reserved).
    pub(crate) counter: u64,
}

impl Held {
    /// Whether it still admits at `now`.
    pub(crate) fn live(&self, now: Duration) -> bool {
        now < self.ends_at
    }

    /// Takes one request (`counts`: also a month token); `false` when the
    /// lease lacks a token it needs.
    pub(crate) fn take(&mut self, counts: bool) -> bool {
        if self.min.spent_out() || (counts && self.mon.spent_out()) {
            return false;
        }
        self.min.used += 1;
        if counts {
            self.mon.used += 1;
        }
        true
    }

    /// Per-minute requests left to this node's view: Redis's plus the
    /// lease's unspent tokens.
    pub(crate) fn minute_remaining(&self) -> u64 {
        self.redis_remaining + self.min.left()
    }

    /// Requests of the month spent, to this node's view: the counter less
    /// the lease's unspent reservation.
    pub(crate) fn month_used(&self) -> u64 {
        self.counter.saturating_sub(self.mon.left())
    }

    /// When this lease's minute tokens are spent and Redis had none left
    /// when it was granted: when Redis will have one token again, and when
    /// it will have `size` (the next lease), on the node's monotonic clock,
    /// reckoned from the grant's answer as the GCRA refills (one token per
    /// `60 s / limit`). `None` while the lease has tokens or Redis had some.
    pub(crate) fn refill(&self, size: u64) -> Option<(Duration, Duration)> {
        if !self.min.spent_out() || self.redis_remaining > 0 {
            return None;
        }
        let per_token = 60_000_000 / i64::from(self.limits.rate_limit_per_minute.max(1));
        let after = |tokens: i64| {
            let us = tokens.saturating_mul(per_token) + self.reset_us - 60_000_000;
            self.taken_at + Duration::from_micros(u64::try_from(us).unwrap_or(0))
        };
        Some((after(1), after(i64::try_from(size.max(1)).unwrap_or(i64::MAX))))
    }

    /// Nanoseconds until the minute's allowance is full, at `now`.
    pub(crate) fn reset_ns(&self, now: Duration) -> i64 {
        let gone = i64::try_from(now.saturating_sub(self.taken_at).as_micros()).unwrap_or(i64::MAX);
        (self.reset_us - gone).max(0).saturating_mul(1000)
    }
}

/// The most a node takes in one lease for a key with `limits`, shared by
/// `nodes`, leases lasting `ttl`.
pub(crate) fn max_lease(limits: Limits, nodes: u32, ttl: Duration) -> u64 {
    let per_ttl = u128::from(limits.rate_limit_per_minute) * 2 * ttl.as_millis() / 60_000 / u128::from(nodes.max(1));
    u64::try_from(per_ttl).unwrap_or(u64::MAX).max(1)
}

/// The size of the next lease after `ended`, asked for as `wanted`, which
/// was spent out (`spent_early`: twice what was asked, even if less was
/// granted, so a key held at its limit asks for batches) or ended with
/// tokens left (what it spent, and a quarter); at most `cap`.
pub(crate) fn next_size(ended: &Held, wanted: u64, spent_early: bool, cap: u64) -> u64 {
    let size = if spent_early {
        wanted.max(1).saturating_mul(2)
    } else {
        let spent = ended.min.used;
        spent + spent / 4
    };
    size.clamp(1, cap.max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn held(granted: u64, used: u64) -> Held {
        Held {
            seq: 1,
            month: BillingMonth { year: 2026, month: 11 },
            limits: Limits { rate_limit_per_minute: 600, monthly_quota: 1_000 },
            min: Tokens { granted, used },
            mon: Tokens { granted, used },
            taken_at: Duration::ZERO,
            ends_at: Duration::from_secs(1),
            redis_remaining: 100,
            reset_us: 5_000_000,
            counter: 500,
        }
    }

    #[test]
    fn small_limits_get_leases_of_one() {
        let ttl = Duration::from_secs(1);
        let small = Limits { rate_limit_per_minute: 5, monthly_quota: 100 };
        assert_eq!(max_lease(small, 1, ttl), 1);
        let big = Limits { rate_limit_per_minute: 600, monthly_quota: 100 };
        assert_eq!(max_lease(big, 1, ttl), 20);
        assert_eq!(max_lease(big, 3, ttl), 6);
        assert_eq!(max_lease(big, 100, ttl), 1);
    }

    #[test]
    fn a_lease_spent_early_doubles_one_that_lived_shrinks_to_its_use() {
        assert_eq!(next_size(&held(4, 4), 4, true, 100), 8);
        assert_eq!(next_size(&held(64, 64), 64, true, 100), 100);
        assert_eq!(next_size(&held(1, 1), 8, true, 100), 16, "less granted than asked: ask for more");
        assert_eq!(next_size(&held(40, 8), 40, false, 100), 10);
        assert_eq!(next_size(&held(40, 0), 40, false, 100), 1);
    }

    #[test]
    fn a_spent_lease_knows_when_redis_has_tokens_again() {
        // 600/min: a token every 100 ms; after the grant the minute was
        // 59.95 s from full (none left), so one token is back 50 ms after
        // it, five 450 ms after.
        let mut h = held(2, 2);
        h.redis_remaining = 0;
        h.reset_us = 59_950_000;
        let at = |ms| Duration::from_millis(ms);
        assert_eq!(h.refill(5), Some((at(50), at(450))));
        h.redis_remaining = 1;
        assert_eq!(h.refill(5), None, "Redis had tokens left");
        h.redis_remaining = 0;
        h.min.used = 1;
        assert_eq!(h.refill(5), None, "the lease has tokens left");
    }

    #[test]
    fn a_lease_admits_what_it_holds_and_reports_the_rest() {
        let mut h = held(2, 0);
        assert!(h.take(true));
        assert_eq!((h.minute_remaining(), h.month_used()), (101, 499));
        assert!(h.take(false));
        assert!(!h.take(false), "no minute token left");
        assert_eq!(h.reset_ns(Duration::from_secs(2)), 3_000_000_000);
        let mut h = held(2, 0);
        h.mon.granted = 0;
        assert!(!h.take(true), "no month token");
        assert!(h.take(false), "a free request needs none");
    }
}
