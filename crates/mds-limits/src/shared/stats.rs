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
}

/// The counters a [`SharedLimiter`] bumps as it decides.
#[derive(Debug, Default)]
pub(super) struct Counters {
    pub(super) redis_admitted: AtomicU64,
    pub(super) redis_refused_minute: AtomicU64,
    pub(super) redis_refused_month: AtomicU64,
    pub(super) local_admitted: AtomicU64,
    pub(super) local_refused: AtomicU64,
    pub(super) lease_calls: AtomicU64,
    pub(super) redis_errors: AtomicU64,
    pub(super) seeds: AtomicU64,
    pub(super) fallbacks: AtomicU64,
    pub(super) reclaimed: AtomicU64,
}

/// Adds one to `c`.
pub(super) fn bump(c: &AtomicU64) {
    c.fetch_add(1, Ordering::Relaxed);
}

impl SharedLimiter {
    /// Counts since start and the mode.
    pub fn stats(&self) -> SharedStats {
        let c = &self.counters;
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        SharedStats {
            degraded: self.is_degraded(),
            redis_admitted: get(&c.redis_admitted),
            redis_refused_minute: get(&c.redis_refused_minute),
            redis_refused_month: get(&c.redis_refused_month),
            local_admitted: get(&c.local_admitted),
            local_refused: get(&c.local_refused),
            lease_calls: get(&c.lease_calls),
            redis_errors: get(&c.redis_errors),
            seeds: get(&c.seeds),
            fallbacks: get(&c.fallbacks),
            reclaimed: get(&c.reclaimed),
        }
    }
}
