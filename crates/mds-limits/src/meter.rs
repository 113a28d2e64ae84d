//! [`Meter`]: how many requests each key has made each month, as this node
//! knows it, and the counts it still owes the store.
//!
//! Each key has one [`KeyState`] behind its own small lock, holding its
//! per-minute state and its monthly counts, so a request takes that lock
//! once to be admitted and once to be settled, and keys never contend with
//! each other. A key's count for a month starts from what the store had when
//! this node first saw the key that month (`base`), plus what this node
//! admitted since (`admitted`). Quota admission reserves one request under
//! the key's lock, so concurrent requests on one node never over-admit.
//!
//! Counted requests also go into the month's `pending`. [`Meter::flush`]
//! moves pending counts into an outbox batch with a fresh id
//! (`<node>:<seq>`) and applies it; a batch that fails stays in the outbox
//! and is retried with the same id, so a retried batch is counted once.
//! While a batch waits, new counts keep aggregating in `pending` (one per key
//! and month), so the memory a store outage costs is bounded by the number
//! of active keys.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, RwLock};

use mds_domain::KeyPrefix;
use mds_domain::usage::BillingMonth;
use mds_store::{StoreResult, UsageBatch, UsageDelta, UsageStore};

/// One key's count for one month.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct MonthCount {
    pub(crate) month: BillingMonth,
    /// The store's count when this node first saw the key that month.
    pub(crate) base: u64,
    /// Reserved or counted on this node since then.
    pub(crate) admitted: u64,
    /// Counted and not yet handed to a batch.
    pub(crate) pending: u64,
}

/// What a node knows of one key.
#[derive(Debug, Default)]
pub(crate) struct KeyInner {
    /// GCRA theoretical arrival time, ns since the epoch.
    pub(crate) tat_ns: Option<i64>,
    /// Counts of the months seen (usually one, two around a month's end).
    pub(crate) months: Vec<MonthCount>,
}

impl KeyInner {
    pub(crate) fn month(&mut self, month: BillingMonth) -> Option<&mut MonthCount> {
        self.months.iter_mut().find(|m| m.month == month)
    }
}

/// A key's state behind its own lock.
#[derive(Debug, Default)]
pub struct KeyState(Mutex<KeyInner>);

impl KeyState {
    /// Locks the state. Nothing under this lock can leave it half-updated,
    /// so a poisoned lock (a panic elsewhere) is still safe to use.
    pub(crate) fn lock(&self) -> MutexGuard<'_, KeyInner> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Usage counts of this node.
#[derive(Debug)]
pub struct Meter {
    node: String,
    seq: AtomicU64,
    keys: RwLock<HashMap<KeyPrefix, Arc<KeyState>>>,
    outbox: Mutex<Option<UsageBatch>>,
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
        Meter {
            node: format!("{:016x}", rand::random::<u64>()),
            seq: AtomicU64::new(0),
            keys: RwLock::new(HashMap::new()),
            outbox: Mutex::new(None),
        }
    }

    /// The state of `key`, made on first use.
    pub fn key_state(&self, key: &KeyPrefix) -> Arc<KeyState> {
        if let Some(s) = self.keys.read().unwrap_or_else(PoisonError::into_inner).get(key) {
            return s.clone();
        }
        self.keys.write().unwrap_or_else(PoisonError::into_inner).entry(key.clone()).or_default().clone()
    }

    fn existing(&self, key: &KeyPrefix) -> Option<Arc<KeyState>> {
        self.keys.read().unwrap_or_else(PoisonError::into_inner).get(key).cloned()
    }

    /// Loads the store's count for a key and month if this node lacks it.
    pub async fn ensure_seeded(&self, store: &dyn UsageStore, key: &KeyPrefix, month: BillingMonth) -> StoreResult<()> {
        let state = self.key_state(key);
        if state.lock().month(month).is_some() {
            return Ok(());
        }
        let stored: u64 = store.usage(key, month, month).await?.iter().map(|(_, n)| n).sum();
        seed_state(&state, month, stored);
        Ok(())
    }

    /// The key's count for the month as this node knows it.
    pub fn used(&self, key: &KeyPrefix, month: BillingMonth) -> Option<u64> {
        self.existing(key)?.lock().month(month).map(|c| c.base + c.admitted)
    }

    /// Counts for the key this node has not yet written to the store, by month.
    pub fn unflushed(&self, key: &KeyPrefix) -> HashMap<BillingMonth, u64> {
        let mut out: HashMap<BillingMonth, u64> = HashMap::new();
        if let Some(s) = self.existing(key) {
            for c in s.lock().months.iter().filter(|c| c.pending > 0) {
                *out.entry(c.month).or_default() += c.pending;
            }
        }
        for d in self.outbox.lock().unwrap_or_else(PoisonError::into_inner).iter().flat_map(|b| &b.deltas) {
            if &d.key == key {
                *out.entry(d.month).or_default() += d.requests;
            }
        }
        out
    }

    /// Requests counted but not yet in the store.
    pub fn backlog(&self) -> u64 {
        let outbox = self.outbox.lock().unwrap_or_else(PoisonError::into_inner);
        let waiting: u64 = outbox.iter().flat_map(|b| &b.deltas).map(|d| d.requests).sum();
        let keys = self.keys.read().unwrap_or_else(PoisonError::into_inner);
        let pending: u64 = keys.values().map(|s| s.lock().months.iter().map(|c| c.pending).sum::<u64>()).sum();
        waiting + pending
    }

    /// Moves pending counts into a new batch (only when none waits).
    fn cut_batch(&self) -> Option<UsageBatch> {
        let mut outbox = self.outbox.lock().unwrap_or_else(PoisonError::into_inner);
        if outbox.is_none() {
            let keys = self.keys.read().unwrap_or_else(PoisonError::into_inner);
            let mut deltas = Vec::new();
            for (key, state) in keys.iter() {
                for c in state.lock().months.iter_mut().filter(|c| c.pending > 0) {
                    deltas.push(UsageDelta { key: key.clone(), month: c.month, requests: c.pending });
                    c.pending = 0;
                }
            }
            if deltas.is_empty() {
                return None;
            }
            let id = format!("{}:{}", self.node, self.seq.fetch_add(1, Ordering::Relaxed));
            *outbox = Some(UsageBatch { id, deltas });
        }
        outbox.clone()
    }

    /// Writes what is owed to the store: the waiting batch, if any, then what
    /// is pending now as one new batch. Counts that arrive meanwhile wait for
    /// the next call, so a busy node writes at most two batches a call, not
    /// one after another for as long as requests keep coming. Returns how
    /// many requests were written.
    pub async fn flush(&self, store: &dyn UsageStore) -> StoreResult<u64> {
        let mut written = 0;
        for _ in 0..2 {
            let Some(batch) = self.cut_batch() else { break };
            // A failure leaves the batch in the outbox, to be retried with its id.
            store.apply_usage(&batch).await?;
            written += batch.deltas.iter().map(|d| d.requests).sum::<u64>();
            let mut outbox = self.outbox.lock().unwrap_or_else(PoisonError::into_inner);
            if outbox.as_ref().is_some_and(|b| b.id == batch.id) {
                *outbox = None;
            }
        }
        Ok(written)
    }

    /// Forgets counts of months before `month` that hold nothing unflushed
    /// (they are settled in the store; a late request re-seeds them), and
    /// keys left with nothing to remember whose allowance is full again
    /// (`now_ns` on the limiter's monotonic clock) and that no one holds: a
    /// request being admitted (waiting for the store's count) or a
    /// reservation not yet settled keeps its key, so its count lands in the
    /// map that flushes read, not in a forgotten copy.
    pub fn forget_before(&self, month: BillingMonth, now_ns: i64) {
        let in_outbox: Vec<(KeyPrefix, BillingMonth)> = self
            .outbox
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .flat_map(|b| &b.deltas)
            .map(|d| (d.key.clone(), d.month))
            .collect();
        let mut keys = self.keys.write().unwrap_or_else(PoisonError::into_inner);
        keys.retain(|key, state| {
            // Under the map's write lock no one can take a new handle, so
            // the count of handles is exact.
            let held = Arc::strong_count(state) > 1;
            let mut s = state.lock();
            s.months.retain(|c| c.month >= month || c.pending > 0 || in_outbox.contains(&(key.clone(), c.month)));
            held || !s.months.is_empty() || s.tat_ns.is_some_and(|t| t > now_ns)
        });
    }
}

fn seed_state(state: &KeyState, month: BillingMonth, stored: u64) {
    let mut s = state.lock();
    if s.month(month).is_none() {
        s.months.push(MonthCount { month, base: stored, admitted: 0, pending: 0 });
    }
}

/// Reserves one request of `quota` in `month`, under the key's lock.
pub(crate) fn reserve(s: &mut KeyInner, month: BillingMonth, quota: u64) -> Reservation {
    let Some(c) = s.month(month) else { return Reservation::Unseeded };
    let used = c.base + c.admitted;
    if used >= quota {
        return Reservation::Exhausted { used };
    }
    c.admitted += 1;
    Reservation::Reserved { used: used + 1 }
}

/// Records what the shared (Redis) counter says of a key's month: `used`
/// (including this request when `reserved`). With `reserved`, the request
/// is reserved here too, to be settled like a local reservation (so it is
/// metered and flushed as before). The node's view only ever rises to the
/// shared count, so a fallback to local limiting starts from the latest
/// count this node saw. Makes the month's entry if missing (no store read).
pub(crate) fn record_shared(s: &mut KeyInner, month: BillingMonth, used: u64, reserved: bool) {
    let mine = u64::from(reserved);
    match s.month(month) {
        Some(c) => {
            c.admitted += mine;
            c.base = c.base.max(used.saturating_sub(c.admitted));
        }
        None => s.months.push(MonthCount { month, base: used.saturating_sub(mine), admitted: mine, pending: 0 }),
    }
}

/// Settles a reservation in `month`, under the key's lock.
pub(crate) fn settle(s: &mut KeyInner, month: BillingMonth, counted: bool) {
    if let Some(c) = s.month(month) {
        if counted {
            c.pending += 1;
        } else {
            c.admitted = c.admitted.saturating_sub(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Key-level shorthands over the per-key functions, for these tests.
    impl Meter {
        fn seed(&self, key: &KeyPrefix, month: BillingMonth, stored: u64) {
            seed_state(&self.key_state(key), month, stored);
        }

        fn reserve(&self, key: &KeyPrefix, month: BillingMonth, quota: u64) -> Reservation {
            reserve(&mut self.key_state(key).lock(), month, quota)
        }

        fn settle(&self, key: &KeyPrefix, month: BillingMonth, counted: bool) {
            settle(&mut self.key_state(key).lock(), month, counted);
        }

        fn is_seeded(&self, key: &KeyPrefix, month: BillingMonth) -> bool {
            self.used(key, month).is_some()
        }
    }

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
    fn a_key_being_admitted_is_not_forgotten() {
        let m = Meter::new();
        // An admission holds the key's state while it reads the store's
        // count; the prune runs meanwhile.
        let admitting = m.key_state(&key());
        m.forget_before(NOV, i64::MAX);
        seed_state(&admitting, NOV, 0);
        assert_eq!(reserve(&mut admitting.lock(), NOV, 10), Reservation::Reserved { used: 1 });
        settle(&mut admitting.lock(), NOV, true);
        drop(admitting);
        assert_eq!(m.backlog(), 1, "the count is where flushes look");
        assert_eq!(m.cut_batch().map(|b| b.deltas.len()), Some(1));
        // Nothing held, nothing to remember: forgotten.
        let m = Meter::new();
        drop(m.key_state(&key()));
        m.forget_before(NOV, i64::MAX);
        assert!(m.existing(&key()).is_none());
    }

    /// `/metrics` (backlog), flushes (cut_batch) and new keys (the map's
    /// write lock) at once, for a while: with two lock orders this
    /// deadlocked; the test then never ends (and CI's time limit fails it).
    #[test]
    fn backlog_flush_and_new_keys_together_never_deadlock() {
        let m = Arc::new(Meter::new());
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let mut threads = Vec::new();
        for t in 0..6 {
            let (m, stop) = (m.clone(), stop.clone());
            threads.push(std::thread::spawn(move || {
                let mut i = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    match t % 3 {
                        0 => {
                            let _ = m.backlog();
                        }
                        1 => {
                            if m.cut_batch().is_some() {
                                *m.outbox.lock().unwrap() = None;
                            }
                        }
                        _ => {
                            let k = KeyPrefix::parse(&format!("mds_live_{:03}", i % 1000)).unwrap();
                            let s = m.key_state(&k);
                            seed_state(&s, NOV, 0);
                            reserve(&mut s.lock(), NOV, u64::MAX);
                            settle(&mut s.lock(), NOV, true);
                            if i % 7 == 0 {
                                m.forget_before(NOV, i64::MAX);
                            }
                        }
                    }
                    i += 1;
                }
            }));
        }
        let (done_tx, done_rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(1500));
            stop.store(true, Ordering::Relaxed);
            for t in threads {
                t.join().unwrap();
            }
            let _ = done_tx.send(());
        });
        assert!(done_rx.recv_timeout(std::time::Duration::from_secs(20)).is_ok(), "deadlocked");
    }

    #[test]
    fn forgetting_keeps_unflushed_months() {
        let m = Meter::new();
        let oct = NOV.prev();
        m.seed(&key(), oct, 5);
        m.seed(&key(), NOV.prev().prev(), 5);
        m.reserve(&key(), oct, 10);
        m.settle(&key(), oct, true);
        m.forget_before(NOV, 0);
        assert!(m.is_seeded(&key(), oct), "pending counts keep the month");
        assert!(!m.is_seeded(&key(), NOV.prev().prev()));
        assert_eq!(m.unflushed(&key()).get(&oct), Some(&1));
    }
}
