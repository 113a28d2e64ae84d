//! [`SharedStats`]: what a [`SharedLimiter`] did since start, and its mode,
//! for a metrics endpoint; the atomic counters behind it.

use std::sync::atomic::{AtomicU64, Ordering};

use super::SharedLimiter;

/// Counts since start, and the mode, for a metrics endpoint.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SharedStats {
    /// Whether decisions are taken locally now (Redis away).
    pub degraded: bool,
    /// Requests admitted from leases.
    pub redis_admitted: u64,
    /// Requests refused for the minute (possibly the month too) with Redis.
    pub redis_refused_minute: u64,
    /// Requests refused for the month only with Redis.
    pub redis_refused_month: u64,
    /// Requests admitted locally (degraded).
    pub local_admitted: u64,
    /// Requests refused locally (degraded).
    pub local_refused: u64,
    /// Lease scripts sent (a lease taken, or given back).
    pub lease_calls: u64,
    /// Redis calls that failed (refused, timed out, bad answer).
    pub redis_errors: u64,
    /// Month counters this node seeded from the store.
    pub seeds: u64,
    /// Times this node fell back to local limiting.
    pub fallbacks: u64,
    /// Lease records of other nodes this node found neither renewed nor
    /// given back within a lease TTL, and reclaimed.
    pub reclaimed: u64,
    /// Counted requests this node gave the store from the usage mirrors of
    /// nodes that stopped pushing them (took over).
    pub taken_over: u64,
    /// Pushes of this node's usage mirror that failed.
    pub mirror_push_failures: u64,
}

/// What a [`SharedLimiter`] counts, one of each [`SharedStats`] field.
#[derive(Debug, Clone, Copy)]
pub(super) enum Count {
    RedisAdmitted,
    RedisRefusedMinute,
    RedisRefusedMonth,
    LocalAdmitted,
    LocalRefused,
    LeaseCalls,
    RedisErrors,
    Seeds,
    Fallbacks,
    Reclaimed,
    TakenOver,
    MirrorPushFailures,
}

/// The counts a [`SharedLimiter`] keeps as it decides, by [`Count`].
#[derive(Debug, Default)]
pub(super) struct Counters([AtomicU64; 12]);

impl Counters {
    /// Adds `n` to `c`.
    pub(super) fn add(&self, c: Count, n: u64) {
        self.0[c as usize].fetch_add(n, Ordering::Relaxed);
    }

    /// Adds one to `c`.
    pub(super) fn bump(&self, c: Count) {
        self.add(c, 1);
    }

    fn get(&self, c: Count) -> u64 {
        self.0[c as usize].load(Ordering::Relaxed)
    }
}

impl SharedLimiter {
    /// Counts since start and the mode.
    pub fn stats(&self) -> SharedStats {
        let c = &self.counters;
        SharedStats {
            degraded: self.is_degraded(),
            redis_admitted: c.get(Count::RedisAdmitted),
            redis_refused_minute: c.get(Count::RedisRefusedMinute),
            redis_refused_month: c.get(Count::RedisRefusedMonth),
            local_admitted: c.get(Count::LocalAdmitted),
            local_refused: c.get(Count::LocalRefused),
            lease_calls: c.get(Count::LeaseCalls),
            redis_errors: c.get(Count::RedisErrors),
            seeds: c.get(Count::Seeds),
            fallbacks: c.get(Count::Fallbacks),
            reclaimed: c.get(Count::Reclaimed),
            taken_over: c.get(Count::TakenOver),
            mirror_push_failures: c.get(Count::MirrorPushFailures),
        }
    }
}
