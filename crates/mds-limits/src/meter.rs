//! [`Meter`]: how many requests each key has made each month, as this node
//! knows it, and the counts it still owes the store.
//!
//! A key's count for a month starts from what the store had when this node
//! first saw the key that month (`base`), plus what this node admitted since
//! (`admitted`). Quota admission reserves one request atomically under the
//! meter's lock, so concurrent requests on one node never over-admit.
//!
//! Counted requests also go into `pending`. [`Meter::flush`] moves pending
//! counts into an outbox batch with a fresh id (`<node>:<seq>`) and applies
//! it; a batch that fails stays in the outbox and is retried with the same
//! id, so a retried batch is counted once. While a batch waits, new counts
//! keep aggregating in `pending` (one entry per key and month), so the
//! memory a store outage costs is bounded by the number of active keys.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use mds_domain::KeyPrefix;
use mds_domain::usage::BillingMonth;
use mds_store::{Store, StoreResult, UsageBatch, UsageDelta};

type Slot = (KeyPrefix, BillingMonth);

#[derive(Debug, Default, Clone, Copy)]
struct Count {
    /// The store's count when this node first saw the key that month.
    base: u64,
    /// Reserved or counted on this node since then.
    admitted: u64,
}

#[derive(Debug, Default)]
struct Inner {
    counts: HashMap<Slot, Count>,
    pending: HashMap<Slot, u64>,
    outbox: Option<UsageBatch>,
}

/// Usage counts of this node.
#[derive(Debug)]
pub struct Meter {
    node: String,
    seq: AtomicU64,
    inner: Mutex<Inner>,
}

/// The outcome of a quota reservation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reservation {
    /// Reserved; the month's count is now `used`.
    Reserved {
        /// Count including this request.
        used: u64,
    },
    /// The quota is spent; the month's count is `used`.
    Exhausted {
        /// Count so far.
        used: u64,
    },
    /// This node has not loaded the key's count for the month yet.
    Unseeded,
}

impl Default for Meter {
    fn default() -> Self {
        Self::new()
    }
}

impl Meter {
    /// A meter with a random node id (batch ids stay unique across restarts).
    pub fn new() -> Self {
        let node: String = format!("{:016x}", rand::random::<u64>());
        Meter { node, seq: AtomicU64::new(0), inner: Mutex::new(Inner::default()) }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().expect("meter lock is never poisoned: no panics under it")
    }

    /// Whether this node knows the key's count for the month.
    pub fn is_seeded(&self, key: &KeyPrefix, month: BillingMonth) -> bool {
        self.lock().counts.contains_key(&(key.clone(), month))
    }

    /// Records the store's count for a key and month, unless already known.
    pub fn seed(&self, key: &KeyPrefix, month: BillingMonth, stored: u64) {
        self.lock().counts.entry((key.clone(), month)).or_insert(Count { base: stored, admitted: 0 });
    }

    /// Loads the store's count for a key and month if this node lacks it.
    pub async fn ensure_seeded(&self, store: &dyn Store, key: &KeyPrefix, month: BillingMonth) -> StoreResult<()> {
        if self.is_seeded(key, month) {
            return Ok(());
        }
        let stored: u64 = store.usage(key, month, month).await?.iter().map(|(_, n)| n).sum();
        self.seed(key, month, stored);
        Ok(())
    }

    /// Reserves one request of `quota` if it is not spent.
    pub fn reserve(&self, key: &KeyPrefix, month: BillingMonth, quota: u64) -> Reservation {
        let mut inner = self.lock();
        let Some(c) = inner.counts.get_mut(&(key.clone(), month)) else { return Reservation::Unseeded };
        let used = c.base + c.admitted;
        if used >= quota {
            return Reservation::Exhausted { used };
        }
        c.admitted += 1;
        Reservation::Reserved { used: used + 1 }
    }

    /// Settles a reservation: counted (owed to the store) or released.
    pub fn settle(&self, key: &KeyPrefix, month: BillingMonth, counted: bool) {
        let mut inner = self.lock();
        let slot = (key.clone(), month);
        if counted {
            *inner.pending.entry(slot).or_insert(0) += 1;
        } else if let Some(c) = inner.counts.get_mut(&slot) {
            c.admitted = c.admitted.saturating_sub(1);
        }
    }

    /// The key's count for the month as this node knows it (seeded or not).
    pub fn used(&self, key: &KeyPrefix, month: BillingMonth) -> Option<u64> {
        self.lock().counts.get(&(key.clone(), month)).map(|c| c.base + c.admitted)
    }

    /// Counts for the key this node has not yet written to the store, by month.
    pub fn unflushed(&self, key: &KeyPrefix) -> HashMap<BillingMonth, u64> {
        let inner = self.lock();
        let mut out: HashMap<BillingMonth, u64> = HashMap::new();
        for ((k, m), n) in &inner.pending {
            if k == key {
                *out.entry(*m).or_default() += n;
            }
        }
        for d in inner.outbox.iter().flat_map(|b| &b.deltas) {
            if &d.key == key {
                *out.entry(d.month).or_default() += d.requests;
            }
        }
        out
    }

    /// Requests counted but not yet in the store.
    pub fn backlog(&self) -> u64 {
        let inner = self.lock();
        inner.pending.values().sum::<u64>()
            + inner.outbox.iter().flat_map(|b| &b.deltas).map(|d| d.requests).sum::<u64>()
    }

    /// Writes what is owed to the store: the waiting batch first, then the
    /// pending counts as a new batch. Returns how many requests were written.
    pub async fn flush(&self, store: &dyn Store) -> StoreResult<u64> {
        let mut written = 0;
        loop {
            let batch = {
                let mut inner = self.lock();
                if inner.outbox.is_none() {
                    if inner.pending.is_empty() {
                        return Ok(written);
                    }
                    let deltas = inner
                        .pending
                        .drain()
                        .map(|((key, month), requests)| UsageDelta { key, month, requests })
                        .collect();
                    let id = format!("{}:{}", self.node, self.seq.fetch_add(1, Ordering::Relaxed));
                    inner.outbox = Some(UsageBatch { id, deltas });
                }
                inner.outbox.clone().expect("just set")
            };
            // A failure leaves the batch in the outbox, to be retried with its id.
            store.apply_usage(&batch).await?;
            written += batch.deltas.iter().map(|d| d.requests).sum::<u64>();
            let mut inner = self.lock();
            if inner.outbox.as_ref().is_some_and(|b| b.id == batch.id) {
                inner.outbox = None;
            }
        }
    }

    /// Forgets counts of months before `month` that hold nothing unflushed
    /// (they are settled in the store; a late request re-seeds them).
    pub fn forget_before(&self, month: BillingMonth) {
        let mut inner = self.lock();
        let Inner { counts, pending, outbox } = &mut *inner;
        counts.retain(|(k, m), _| {
            *m >= month
                || pending.contains_key(&(k.clone(), *m))
                || outbox.iter().flat_map(|b| &b.deltas).any(|d| &d.key == k && d.month == *m)
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> KeyPrefix {
        KeyPrefix::parse("mds_live_abc").unwrap()
    }

    const NOV: BillingMonth = BillingMonth { year: 2026, month: 11 };

    #[test]
    fn reservations_stop_at_the_quota_and_releases_give_back() {
        let m = Meter::new();
        assert_eq!(m.reserve(&key(), NOV, 3), Reservation::Unseeded);
        m.seed(&key(), NOV, 1);
        assert_eq!(m.reserve(&key(), NOV, 3), Reservation::Reserved { used: 2 });
        assert_eq!(m.reserve(&key(), NOV, 3), Reservation::Reserved { used: 3 });
        assert_eq!(m.reserve(&key(), NOV, 3), Reservation::Exhausted { used: 3 });
        m.settle(&key(), NOV, false);
        assert_eq!(m.used(&key(), NOV), Some(2));
        m.settle(&key(), NOV, true);
        assert_eq!(m.backlog(), 1);
        // Seeding again does not reset what is known.
        m.seed(&key(), NOV, 0);
        assert_eq!(m.used(&key(), NOV), Some(2));
    }

    #[test]
    fn forgetting_keeps_unflushed_months() {
        let m = Meter::new();
        let oct = NOV.prev();
        m.seed(&key(), oct, 5);
        m.seed(&key(), NOV.prev().prev(), 5);
        m.reserve(&key(), oct, 10);
        m.settle(&key(), oct, true);
        m.forget_before(NOV);
        assert!(m.is_seeded(&key(), oct), "pending counts keep the month");
        assert!(!m.is_seeded(&key(), NOV.prev().prev()));
        assert_eq!(m.unflushed(&key()).get(&oct), Some(&1));
    }
}
