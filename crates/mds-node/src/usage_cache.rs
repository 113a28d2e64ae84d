//! What a node keeps of the store's usage figures for `GET /v1/usage`: per
//! key, its monthly counts and quota history as last read, so that a key
//! polling its usage costs no store read per request.
//!
//! An entry is served only while all of these hold; otherwise the store is
//! read again (and the entry replaced):
//! - the store's `usage` and `auth` generations this node follows are the
//!   ones the entry was read under. Another node's flush bumps `usage`, a
//!   tier or entitlement change `auth`; the reload task sees either within
//!   its interval and every entry goes.
//! - this node has sent no usage batch since ([`Meter::flushes`], compared
//!   under the meter's gate, so that a count is in the entry or in what is
//!   not flushed yet, never in both nor in neither).
//! - no daily report of the key was read since, so that `/v1/usage` never
//!   reports less than a `/v1/usage/daily` answered before it on this node.
//!
//! The report stays exact for this node's own traffic; other nodes'
//! traffic reaches it after their flush interval plus this node's reload
//! interval (1 s + 250 ms by default), where it took their flush interval
//! before.
//!
//! [`Meter::flushes`]: mds_limits::Meter::flushes

use std::sync::Arc;

use mds_domain::KeyPrefix;
use mds_domain::usage::{BillingMonth, QuotaHistory};

use crate::followed::{self, Followed};

/// The most keys kept; when full, all go (a key that polls is read again
/// once).
const MAX_KEYS: usize = 65_536;

/// What the store had for one key.
#[derive(Debug)]
pub struct Kept {
    /// The counts of the months asked for that have any, oldest first.
    pub months: Vec<(BillingMonth, u64)>,
    /// The key's quota history, when it was needed (a key with history
    /// months).
    pub quotas: Option<QuotaHistory>,
}

/// What was read for a key: under which of this node's flush count, for
/// which months.
#[derive(Debug, Clone)]
struct Entry {
    flushes: u64,
    months: (BillingMonth, BillingMonth),
    kept: Arc<Kept>,
}

/// The usage figures a node keeps ([`crate::usage_cache`]), for the
/// store's `(usage, auth)` generations.
#[derive(Debug)]
pub struct UsageCache {
    entries: Followed<(i64, i64), KeyPrefix, Entry>,
}

impl Default for UsageCache {
    fn default() -> Self {
        UsageCache { entries: Followed::new(MAX_KEYS) }
    }
}

/// Where a read of the store began (the map's epoch, this node's flush
/// count), for [`UsageCache::put`].
#[derive(Debug)]
pub struct ReadStart {
    epoch: followed::Epoch,
    flushes: u64,
}

impl UsageCache {
    /// Follows the store's `usage` and `auth` generations; when either
    /// moved, every entry goes.
    pub fn follow(&self, usage: i64, auth: i64) {
        self.entries.follow((usage, auth));
    }

    /// What is kept of `key` for the months `months` (oldest, newest) while
    /// this node has sent `flushes` batches, or where a store read begins,
    /// to [`UsageCache::put`] afterwards.
    pub fn get(
        &self,
        key: &KeyPrefix,
        months: (BillingMonth, BillingMonth),
        flushes: u64,
    ) -> Result<Arc<Kept>, ReadStart> {
        match self.entries.get(key) {
            Some(e) if e.flushes == flushes && e.months == months => Ok(e.kept),
            _ => Err(ReadStart { epoch: self.entries.epoch(), flushes }),
        }
    }

    /// Keeps what a read begun at `start` found, unless the generations
    /// moved or the key was forgotten since it began, or no generation was
    /// followed yet.
    pub fn put(&self, start: ReadStart, key: &KeyPrefix, months: (BillingMonth, BillingMonth), kept: Arc<Kept>) {
        if self.entries.following() {
            self.entries.put(start.epoch, key.clone(), Entry { flushes: start.flushes, months, kept }, 1);
        }
    }

    /// Drops what is kept of `key` (the store was read for it since).
    pub fn forget(&self, key: &KeyPrefix) {
        self.entries.forget(key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> KeyPrefix {
        KeyPrefix::parse("mds_live_a1B2c3D4").unwrap()
    }

    const NOV: (BillingMonth, BillingMonth) =
        (BillingMonth { year: 2026, month: 11 }, BillingMonth { year: 2026, month: 11 });

    fn kept(n: u64) -> Arc<Kept> {
        Arc::new(Kept { months: vec![(NOV.0, n)], quotas: None })
    }

    fn months_of(c: &UsageCache, flushes: u64) -> Option<u64> {
        c.get(&key(), NOV, flushes).ok().map(|k| k.months[0].1)
    }

    #[test]
    fn an_entry_serves_until_a_generation_or_a_flush_moves() {
        let c = UsageCache::default();
        // Nothing is kept before the generations are known.
        let t = c.get(&key(), NOV, 0).unwrap_err();
        c.put(t, &key(), NOV, kept(1));
        assert_eq!(months_of(&c, 0), None);

        c.follow(5, 7);
        let t = c.get(&key(), NOV, 0).unwrap_err();
        c.put(t, &key(), NOV, kept(2));
        assert_eq!(months_of(&c, 0), Some(2));
        c.follow(5, 7);
        assert_eq!(months_of(&c, 0), Some(2), "the same generations keep it");
        assert_eq!(months_of(&c, 1), None, "a flush of this node since");
        let other = (BillingMonth { year: 2026, month: 10 }, NOV.1);
        assert!(c.get(&key(), other, 0).is_err(), "other months");
        c.follow(6, 7);
        assert_eq!(months_of(&c, 0), None, "another node's flush");
        let t = c.get(&key(), NOV, 0).unwrap_err();
        c.put(t, &key(), NOV, kept(3));
        c.follow(6, 8);
        assert_eq!(months_of(&c, 0), None, "a tier or entitlement change");
    }

    #[test]
    fn a_read_begun_before_a_change_keeps_nothing() {
        let c = UsageCache::default();
        c.follow(1, 1);
        let t = c.get(&key(), NOV, 0).unwrap_err();
        c.follow(2, 1);
        c.put(t, &key(), NOV, kept(1));
        assert_eq!(months_of(&c, 0), None, "read under generation 1, now 2");

        let t = c.get(&key(), NOV, 0).unwrap_err();
        c.forget(&key());
        c.put(t, &key(), NOV, kept(1));
        assert_eq!(months_of(&c, 0), None, "forgotten while it was read");
        let t = c.get(&key(), NOV, 0).unwrap_err();
        c.put(t, &key(), NOV, kept(4));
        assert_eq!(months_of(&c, 0), Some(4));
        c.forget(&key());
        assert_eq!(months_of(&c, 0), None);
    }
}
