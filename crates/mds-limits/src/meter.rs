//! [`Meter`]: how many requests each key has made each month, as this node
//! knows it, and what it still owes the store's daily ledger.
//!
//! Each key has one [`KeyState`] behind its own small lock, holding its
//! per-minute state, its monthly counts and its pending ledger entries, so a
//! request takes that lock once to be admitted and once to be settled, and
//! keys never contend with each other. A key's count for a month starts
//! from what the store had when this node first saw the key that month
//! (`base`), plus what this node admitted since (`admitted`). Quota
//! admission reserves one request under the key's lock, so concurrent
//! requests on one node never over-admit.
//!
//! A settled request goes into the key's `pending` entries, one per day
//! (UTC) and route template: a counted request adds to `requests`, a `304`
//! to `not_modified` (its reservation given back), a `5xx` nowhere. There
//! are seldom more than a few (one day, a few routes), so finding one is a
//! short scan. [`Meter::flush`] moves pending entries into an outbox batch
//! with a fresh id (`<node>:<seq>`) and applies it; the store adds the
//! entries to its daily ledger and their sums to the monthly counts in one
//! transaction. A batch that fails stays in the outbox and is retried with
//! the same id, so a retried batch is counted once. While a batch waits, new
//! counts keep aggregating in `pending` (one entry per key, day and route),
//! so the memory a store outage costs is bounded by the active keys and
//! routes.
//!
//! Usage reads take what the store has plus what this node has not
//! flushed yet ([`Meter::read_with_unflushed`]) under a gate that no flush
//! crosses: a batch is either in the store or still in this node's outbox,
//! never in both or neither, so the figures add up exactly.

use std::borrow::Cow;
use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, RwLock};

use chrono::NaiveDate;
use mds_domain::KeyPrefix;
use mds_domain::daily::DailyUsage;
use mds_domain::usage::BillingMonth;
use mds_store::{StoreResult, UsageBatch, UsageDelta, UsageStore};

use crate::mirror::{Open, Outbox};
use crate::spill::Spill;

/// One key's count for one month.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct MonthCount {
    pub(crate) month: BillingMonth,
    /// The store's count when this node first saw the key that month.
    pub(crate) base: u64,
    /// Reserved or counted on this node since then.
    pub(crate) admitted: u64,
}

/// What a key did on one day on one route, not yet handed to a batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DayCount {
    /// The day (UTC) of admission.
    pub(crate) day: NaiveDate,
    /// The route template.
    pub(crate) route: &'static str,
    /// Counted requests.
    pub(crate) requests: u64,
    /// `304`s.
    pub(crate) not_modified: u64,
}

/// What a node knows of one key.
#[derive(Debug, Default)]
pub(crate) struct KeyInner {
    /// GCRA theoretical arrival time, ns since the epoch.
    pub(crate) tat_ns: Option<i64>,
    /// Counts of the months seen (usually one, two around a month's end).
    pub(crate) months: Vec<MonthCount>,
    /// Settled requests not yet handed to a batch, by day and route.
    pub(crate) pending: Vec<DayCount>,
    /// The last [`FLUSH_LOG`] batches that wrote counted requests of the
    /// key: the store's `usage` generation as of which it has them, the
    /// month, how many.
    pub(crate) flushed: Vec<(i64, BillingMonth, u64)>,
    /// Reservations not settled yet (requests being answered): counted
    /// soon, not yet pending.
    pub(crate) in_flight: u64,
}

/// How many of a key's recent flushes it remembers (one a second when
/// busy): what a Redis counter seeded before them lacks
/// ([`Meter::not_in_store_as_of`]).
const FLUSH_LOG: usize = 16;

impl KeyInner {
    pub(crate) fn month(&mut self, month: BillingMonth) -> Option<&mut MonthCount> {
        self.months.iter_mut().find(|m| m.month == month)
    }

    /// The pending entry of `day` and `route`, made if missing.
    fn pending_entry(&mut self, day: NaiveDate, route: &'static str) -> &mut DayCount {
        match self.pending.iter().position(|e| e.day == day && e.route == route) {
            Some(i) => &mut self.pending[i],
            None => {
                self.pending.push(DayCount { day, route, requests: 0, not_modified: 0 });
                self.pending.last_mut().expect("just pushed")
            }
        }
    }
}

/// A key's state behind its own lock, and the spill its settled requests
/// are appended to, if the node keeps one.
#[derive(Debug, Default)]
pub struct KeyState {
    inner: Mutex<KeyInner>,
    spill: Option<(Arc<Spill>, KeyPrefix)>,
}

impl KeyState {
    /// Locks the state. Nothing under this lock can leave it half-updated,
    /// so a poisoned lock (a panic elsewhere) is still safe to use.
    pub(crate) fn lock(&self) -> MutexGuard<'_, KeyInner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Settles a reservation ([`settle`]) and appends what it recorded to
    /// the spill, if any, before the response leaves.
    pub(crate) fn settle(&self, month: BillingMonth, day: NaiveDate, route: &'static str, outcome: Outcome) {
        let Some((spill, key)) = &self.spill else {
            return settle(&mut self.lock(), month, day, route, outcome);
        };
        // The spill's shared lock before the key's, as a cut takes them.
        let file = spill.share();
        settle(&mut self.lock(), month, day, route, outcome);
        if outcome != Outcome::Released {
            spill.request(&file, key, day, route, outcome == Outcome::NotModified);
        }
    }
}

/// How an admitted request that reserved a request of the quota was
/// answered, which decides what it costs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Counted against the quota (any answer but a `304` or a `5xx`).
    Counted,
    /// A `304 Not Modified`: not counted (the reservation is given back),
    /// recorded in the ledger as a `304`.
    NotModified,
    /// A `5xx`: not counted, not recorded (the reservation is given back).
    Released,
}

/// Usage counts of this node.
#[derive(Debug)]
pub struct Meter {
    node: String,
    seq: AtomicU64,
    pub(crate) keys: RwLock<HashMap<KeyPrefix, Arc<KeyState>>>,
    /// The batch being written, and with a mirror ([`crate::mirror`]) the
    /// counts already mirrored, under one lock.
    pub(crate) outbox: Mutex<Outbox>,
    /// Held (write) while a batch is applied and taken out of the outbox,
    /// (read) while a usage read takes the store's figures and this node's
    /// unflushed ones.
    gate: tokio::sync::RwLock<()>,
    /// Batches the store took, counted under the gate.
    flushes: AtomicU64,
    /// Where settled requests are appended until the store has them.
    spill: Option<Arc<Spill>>,
    /// Whether unflushed counts are mirrored to Redis ([`crate::mirror`]).
    pub(crate) mirroring: std::sync::atomic::AtomicBool,
    /// The last mirror segment's sequence number.
    pub(crate) segments: AtomicU64,
    /// How many times another node took this node's mirror over (the
    /// mirror's id changes each time).
    pub(crate) mirror_epoch: AtomicU64,
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
            outbox: Mutex::new(Outbox::default()),
            gate: tokio::sync::RwLock::new(()),
            flushes: AtomicU64::new(0),
            spill: None,
            mirroring: std::sync::atomic::AtomicBool::new(false),
            segments: AtomicU64::new(0),
            mirror_epoch: AtomicU64::new(0),
        }
    }

    /// A meter that appends its unflushed counts to a spill in `dir`
    /// ([`crate::spill`]), whose `lock` it holds, started empty:
    /// [`crate::spill::recover`] what an earlier run left there first.
    pub fn with_spill(dir: &std::path::Path, lock: crate::spill::SpillLock) -> std::io::Result<Self> {
        let meter = Self::new();
        let spill = Spill::create(dir, &meter.node, lock)?;
        Ok(Meter { spill: Some(Arc::new(spill)), ..meter })
    }

    /// The spill, when the meter keeps one.
    pub fn spill(&self) -> Option<&Arc<Spill>> {
        self.spill.as_ref()
    }

    /// This node's id, the first part of its batch ids.
    pub fn node_id(&self) -> &str {
        &self.node
    }

    /// The id of the next batch (`<node>:<seq>`).
    pub(crate) fn next_id(&self) -> String {
        format!("{}:{}", self.node, self.seq.fetch_add(1, Ordering::Relaxed))
    }

    /// The state of `key`, made on first use.
    pub fn key_state(&self, key: &KeyPrefix) -> Arc<KeyState> {
        if let Some(s) = self.keys.read().unwrap_or_else(PoisonError::into_inner).get(key) {
            return s.clone();
        }
        let spill = || self.spill.as_ref().map(|s| (s.clone(), key.clone()));
        let mut keys = self.keys.write().unwrap_or_else(PoisonError::into_inner);
        keys.entry(key.clone())
            .or_insert_with(|| Arc::new(KeyState { inner: Mutex::default(), spill: spill() }))
            .clone()
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

    /// The ledger entries of `key` this node has not yet written to the
    /// store (pending, and in the batch waiting in the outbox), by day and
    /// route, in no particular order. Read under the outbox's lock, as a
    /// batch is cut, so an entry being cut is seen once.
    pub fn unflushed_days(&self, key: &KeyPrefix) -> Vec<DailyUsage> {
        let outbox = self.outbox.lock().unwrap_or_else(PoisonError::into_inner);
        let mut out: Vec<DailyUsage> = Vec::new();
        let mut add = |day: NaiveDate, route: &str, requests: u64, not_modified: u64| match out
            .iter_mut()
            .find(|e| e.day == day && e.route == route)
        {
            Some(e) => {
                e.requests += requests;
                e.not_modified += not_modified;
            }
            None => out.push(DailyUsage { day, route: route.to_owned(), requests, not_modified }),
        };
        if let Some(s) = self.existing(key) {
            for e in &s.lock().pending {
                add(e.day, e.route, e.requests, e.not_modified);
            }
        }
        for d in outbox.batches().flat_map(|b| &b.deltas).filter(|d| &d.key == key) {
            add(d.day, &d.route, d.requests, d.not_modified);
        }
        out
    }

    /// Counted requests of the key this node has not yet written to the
    /// store, by month.
    pub fn unflushed(&self, key: &KeyPrefix) -> HashMap<BillingMonth, u64> {
        let mut out: HashMap<BillingMonth, u64> = HashMap::new();
        for e in self.unflushed_days(key) {
            *out.entry(BillingMonth::of_day(e.day)).or_default() += e.requests;
        }
        out
    }

    /// Counted requests of `key` in `month` not yet in the store, and the
    /// requests being answered now (counted once answered, unless a `304`
    /// or `5xx`): all this node admitted that the store does not have.
    pub fn not_in_store(&self, key: &KeyPrefix, month: BillingMonth) -> u64 {
        let in_flight = self.existing(key).map_or(0, |s| s.lock().in_flight);
        self.unflushed(key).get(&month).copied().unwrap_or(0) + in_flight
    }

    /// Runs `read` (a read of the store's figures for `key`) and takes this
    /// node's unflushed entries of `key` with no flush landing in between:
    /// every count is then in exactly one of the two.
    pub async fn read_with_unflushed<T>(&self, key: &KeyPrefix, read: impl Future<Output = T>) -> (T, Vec<DailyUsage>) {
        let _no_flush = self.gate.read().await;
        let stored = read.await;
        (stored, self.unflushed_days(key))
    }

    /// How many batches the store has taken from this node (a batch sent
    /// again after a failure counts once it is taken). It does not move
    /// within [`Meter::read_with_unflushed`], so figures read from the store
    /// there, kept with this number, still have every count of this node
    /// that is not in its unflushed part while the number is the same.
    pub fn flushes(&self) -> u64 {
        self.flushes.load(Ordering::Acquire)
    }

    /// Requests counted but not yet in the store.
    pub fn backlog(&self) -> u64 {
        let outbox = self.outbox.lock().unwrap_or_else(PoisonError::into_inner);
        let waiting: u64 = outbox.batches().flat_map(|b| &b.deltas).map(|d| d.requests).sum();
        let keys = self.keys.read().unwrap_or_else(PoisonError::into_inner);
        let pending: u64 = keys.values().map(|s| s.lock().pending.iter().map(|e| e.requests).sum::<u64>()).sum();
        waiting + pending
    }

    /// Whether the store has everything this node recorded (counted
    /// requests and `304`s alike).
    pub fn is_drained(&self) -> bool {
        let outbox = self.outbox.lock().unwrap_or_else(PoisonError::into_inner);
        let keys = self.keys.read().unwrap_or_else(PoisonError::into_inner);
        outbox.batches().next().is_none() && keys.values().all(|s| s.lock().pending.is_empty())
    }

    /// Empties the spill, if any, when the store has everything (a graceful
    /// shutdown leaves nothing to recover).
    pub fn clear_spill(&self) {
        if let Some(spill) = &self.spill {
            spill.clear_if(|| self.is_drained());
        }
    }

    /// The pending entries of every key, taken out.
    pub(crate) fn drain_pending(&self) -> Vec<UsageDelta> {
        let keys = self.keys.read().unwrap_or_else(PoisonError::into_inner);
        let mut deltas = Vec::new();
        for (key, state) in keys.iter() {
            for e in state.lock().pending.drain(..) {
                deltas.push(UsageDelta {
                    key: key.clone(),
                    day: e.day,
                    route: Cow::Borrowed(e.route),
                    requests: e.requests,
                    not_modified: e.not_modified,
                });
            }
        }
        deltas
    }

    /// Moves pending entries into a new batch (only when none waits); with
    /// a mirror, the mirrored counts and the pending ones, under the id
    /// the mirror knows them by. `None` while a batch the store said it
    /// had before is held for the mirror to explain ([`Outbox::suspect`]).
    pub(crate) fn cut_batch(&self) -> Option<UsageBatch> {
        // No request is between its pending entry and its spilled line.
        let mut spilled = self.spill.as_ref().map(|s| (s, s.exclusive()));
        let mut outbox = self.outbox.lock().unwrap_or_else(PoisonError::into_inner);
        if outbox.suspect {
            return None;
        }
        if outbox.waiting.is_none() {
            let batch = match self.mirroring.load(Ordering::Relaxed) {
                true => {
                    self.segment(&mut outbox);
                    outbox.open.take().map(Open::into_batch)
                }
                false => {
                    let deltas = self.drain_pending();
                    (!deltas.is_empty()).then(|| UsageBatch { id: self.next_id(), deltas })
                }
            }?;
            if let Some((spill, file)) = &mut spilled {
                spill.cut(file, &[&batch]);
            }
            outbox.waiting = Some(batch);
            outbox.tried = false;
        }
        outbox.waiting.clone()
    }

    /// Writes what is owed to the store: the waiting batch, if any, then what
    /// is pending now as one new batch. Counts that arrive meanwhile wait for
    /// the next call, so a busy node writes at most two batches a call, not
    /// one after another for as long as requests keep coming. Returns how
    /// many requests were written.
    pub async fn flush(&self, store: &dyn UsageStore) -> StoreResult<u64> {
        self.flush_with(store, || std::future::ready(())).await
    }

    /// [`Meter::flush`], awaiting `before` between cutting each batch and
    /// applying it (a mirror pushes the batch's last counts there, so a
    /// batch the store has is whole in the mirror). With a mirror, a batch
    /// the store says it had before, at its first attempt, was applied by a
    /// node that took this one's mirror over: it is held
    /// ([`Outbox::suspect`]) until the mirror says what was taken.
    pub async fn flush_with<F: Future<Output = ()>>(
        &self,
        store: &dyn UsageStore,
        before: impl Fn() -> F,
    ) -> StoreResult<u64> {
        let mut written = 0;
        for _ in 0..2 {
            let Some(batch) = self.cut_batch() else { break };
            before().await;
            // The push may have found the mirror taken and the batch
            // changed: the next round takes the one now waiting.
            let same = |o: &Outbox| o.waiting.as_ref().is_some_and(|w| w.id == batch.id) && !o.suspect;
            if !same(&self.outbox.lock().unwrap_or_else(PoisonError::into_inner)) {
                continue;
            }
            // No usage read between the store having the batch and the
            // outbox letting it go.
            let _gate = self.gate.write().await;
            // A failure leaves the batch in the outbox, to be retried with its id.
            let applied = match store.apply_usage_batch(&batch).await {
                Ok(a) => a,
                Err(e) => {
                    let mut outbox = self.outbox.lock().unwrap_or_else(PoisonError::into_inner);
                    if outbox.waiting.as_ref().is_some_and(|b| b.id == batch.id) {
                        outbox.tried = true;
                    }
                    return Err(e);
                }
            };
            let mut outbox = self.outbox.lock().unwrap_or_else(PoisonError::into_inner);
            if !applied.fresh && !outbox.tried && self.mirroring.load(Ordering::Relaxed) {
                outbox.suspect = true;
                tracing::warn!(batch = %batch.id, "the store had this node's batch before: another node took its mirror over");
                break;
            }
            self.flushes.fetch_add(1, Ordering::Release);
            written += batch.deltas.iter().map(|d| d.requests).sum::<u64>();
            if outbox.waiting.as_ref().is_some_and(|b| b.id == batch.id) {
                outbox.waiting = None;
                if self.mirroring.load(Ordering::Relaxed) {
                    outbox.flushed.push(batch.id.clone());
                }
            }
            drop(outbox);
            self.log_flush(&batch, applied.generation);
            if let Some(spill) = &self.spill {
                spill.done(&batch.id);
            }
        }
        Ok(written)
    }

    /// Remembers, per key, as of which `usage` generation the store has
    /// `batch`'s counted requests.
    fn log_flush(&self, batch: &UsageBatch, at: i64) {
        let mut sums: HashMap<(&KeyPrefix, BillingMonth), u64> = HashMap::new();
        for d in batch.deltas.iter().filter(|d| d.requests > 0) {
            *sums.entry((&d.key, d.month())).or_default() += d.requests;
        }
        for ((key, month), n) in sums {
            if let Some(state) = self.existing(key) {
                let mut s = state.lock();
                if s.flushed.len() == FLUSH_LOG {
                    s.flushed.remove(0);
                }
                s.flushed.push((at, month, n));
            }
        }
    }

    /// The id of the waiting batch when an attempt to write it failed:
    /// the store may have it (the failure may have been its answer, lost).
    pub fn tried_batch(&self) -> Option<String> {
        let outbox = self.outbox.lock().unwrap_or_else(PoisonError::into_inner);
        outbox.waiting.as_ref().filter(|_| outbox.tried).map(|b| b.id.clone())
    }

    /// Holds flushes off while it is kept: no batch is then between the
    /// store and the outbox, so [`Meter::not_in_store_as_of`] sees each one
    /// exactly once, in the outbox or in the log.
    pub async fn hold_flushes(&self) -> tokio::sync::RwLockReadGuard<'_, ()> {
        self.gate.read().await
    }

    /// Requests of `key` in `month` this node admitted that a count the
    /// store gave as of `usage` generation `generation` (`None`: unknown,
    /// taken as now) does not hold: those being answered, those not yet in
    /// the store, and those the store took after that generation (as far
    /// as the last [`FLUSH_LOG`] flushes of the key go back). Exact while
    /// flushes are held off ([`Meter::hold_flushes`]) and no request of the
    /// key is being admitted.
    ///
    /// `tried` is what the store said of the waiting batch when an attempt
    /// to write it failed ([`Meter::tried_batch`]): its id and the
    /// generation it was applied at, if the store knows it. A batch the
    /// store took as of `generation` is not counted again.
    pub fn not_in_store_as_of(
        &self,
        key: &KeyPrefix,
        month: BillingMonth,
        generation: Option<i64>,
        tried: Option<(&str, Option<i64>)>,
    ) -> u64 {
        let later = |at: i64| generation.is_some_and(|g| at > g);
        // The outbox's lock, then the key's, as a batch is cut: a request
        // is in exactly one of being answered, pending, or the outbox.
        let outbox = self.outbox.lock().unwrap_or_else(PoisonError::into_inner);
        let waiting: u64 = outbox
            .batches()
            .filter(|b| !tried.is_some_and(|(id, at)| id == b.id && at.is_some_and(|at| !later(at))))
            .flat_map(|b| &b.deltas)
            .filter(|d| &d.key == key && d.month() == month)
            .map(|d| d.requests)
            .sum();
        let Some(state) = self.existing(key) else { return waiting };
        let s = state.lock();
        let pending: u64 = s.pending.iter().filter(|e| BillingMonth::of_day(e.day) == month).map(|e| e.requests).sum();
        let after: u64 = s.flushed.iter().filter(|(at, m, _)| later(*at) && *m == month).map(|(_, _, n)| n).sum();
        waiting + s.in_flight + pending + after
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
            .batches()
            .flat_map(|b| &b.deltas)
            .map(|d| (d.key.clone(), d.month()))
            .collect();
        let mut keys = self.keys.write().unwrap_or_else(PoisonError::into_inner);
        keys.retain(|key, state| {
            // Under the map's write lock no one can take a new handle, so
            // the count of handles is exact.
            let held = Arc::strong_count(state) > 1;
            let mut s = state.lock();
            let KeyInner { months, pending, tat_ns, .. } = &mut *s;
            months.retain(|c| {
                c.month >= month
                    || pending.iter().any(|e| BillingMonth::of_day(e.day) == c.month)
                    || in_outbox.contains(&(key.clone(), c.month))
            });
            held || !months.is_empty() || !pending.is_empty() || tat_ns.is_some_and(|t| t > now_ns)
        });
    }
}

fn seed_state(state: &KeyState, month: BillingMonth, stored: u64) {
    let mut s = state.lock();
    if s.month(month).is_none() {
        s.months.push(MonthCount { month, base: stored, admitted: 0 });
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
    s.in_flight += 1;
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
    s.in_flight += mine;
    match s.month(month) {
        Some(c) => {
            c.admitted += mine;
            c.base = c.base.max(used.saturating_sub(c.admitted));
        }
        None => s.months.push(MonthCount { month, base: used.saturating_sub(mine), admitted: mine }),
    }
}

/// Settles a reservation made in `month` on `day` for `route`, under the
/// key's lock: counted, a `304`, or released.
pub(crate) fn settle(s: &mut KeyInner, month: BillingMonth, day: NaiveDate, route: &'static str, outcome: Outcome) {
    s.in_flight = s.in_flight.saturating_sub(1);
    if outcome != Outcome::Counted {
        if let Some(c) = s.month(month) {
            c.admitted = c.admitted.saturating_sub(1);
        }
    }
    match outcome {
        Outcome::Counted => s.pending_entry(day, route).requests += 1,
        Outcome::NotModified => s.pending_entry(day, route).not_modified += 1,
        Outcome::Released => {}
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

        fn settle(&self, key: &KeyPrefix, month: BillingMonth, outcome: Outcome) {
            self.key_state(key).settle(month, month.first_day(), ROUTE, outcome);
        }

        fn is_seeded(&self, key: &KeyPrefix, month: BillingMonth) -> bool {
            self.used(key, month).is_some()
        }
    }

    fn key() -> KeyPrefix {
        KeyPrefix::parse("mds_live_abc").unwrap()
    }

    const NOV: BillingMonth = BillingMonth { year: 2026, month: 11 };
    const ROUTE: &str = "/v1/companies";

    fn day(s: &str) -> NaiveDate {
        s.parse().unwrap()
    }

    #[test]
    fn reservations_stop_at_the_quota_and_releases_give_back() {
        let m = Meter::new();
        assert_eq!(m.reserve(&key(), NOV, 3), Reservation::Unseeded);
        m.seed(&key(), NOV, 1);
        assert_eq!(m.reserve(&key(), NOV, 3), Reservation::Reserved { used: 2 });
        assert_eq!(m.reserve(&key(), NOV, 3), Reservation::Reserved { used: 3 });
        assert_eq!(m.reserve(&key(), NOV, 3), Reservation::Exhausted { used: 3 });
        m.settle(&key(), NOV, Outcome::Released);
        assert_eq!(m.used(&key(), NOV), Some(2));
        m.settle(&key(), NOV, Outcome::Counted);
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
        settle(&mut admitting.lock(), NOV, NOV.first_day(), ROUTE, Outcome::Counted);
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
        never_deadlocks(Meter::new());
    }

    #[test]
    fn spilling_backlog_flush_and_new_keys_together_never_deadlock() {
        let dir = tempfile::tempdir().unwrap();
        never_deadlocks(Meter::with_spill(dir.path(), crate::spill::lock(dir.path()).unwrap()).unwrap());
    }

    /// Counts, cuts, reads and forgets on `m` from six threads for 1.5 s.
    fn never_deadlocks(m: Meter) {
        let m = Arc::new(m);
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
                                m.outbox.lock().unwrap().waiting = None;
                            }
                        }
                        _ => {
                            let k = KeyPrefix::parse(&format!("mds_live_{:03}", i % 1000)).unwrap();
                            let s = m.key_state(&k);
                            seed_state(&s, NOV, 0);
                            reserve(&mut s.lock(), NOV, u64::MAX);
                            s.settle(NOV, NOV.first_day(), ROUTE, Outcome::Counted);
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
        m.settle(&key(), oct, Outcome::Counted);
        m.forget_before(NOV, 0);
        assert!(m.is_seeded(&key(), oct), "pending counts keep the month");
        assert!(!m.is_seeded(&key(), NOV.prev().prev()));
        assert_eq!(m.unflushed(&key()).get(&oct), Some(&1));
    }

    /// Settled requests land in their day's and route's entry: counted in
    /// `requests`, a `304` in `not_modified` (its reservation given back),
    /// a `5xx` nowhere; a batch carries them as they are, and the month's
    /// unflushed count is the sum of its days.
    #[test]
    fn settling_records_the_day_the_route_and_the_outcome() {
        let m = Meter::new();
        m.seed(&key(), NOV, 10);
        let s = m.key_state(&key());
        let (d3, d4) = (day("2026-11-03"), day("2026-11-04"));
        for (d, route, outcome) in [
            (d3, "/v1/companies", Outcome::Counted),
            (d3, "/v1/companies", Outcome::Counted),
            (d3, "/v1/news/{slug}", Outcome::Counted),
            (d3, "/v1/companies", Outcome::NotModified),
            (d3, "/v1/companies", Outcome::Released),
            (d4, "/v1/companies", Outcome::NotModified),
        ] {
            assert!(matches!(reserve(&mut s.lock(), NOV, 100), Reservation::Reserved { .. }));
            settle(&mut s.lock(), NOV, d, route, outcome);
        }
        assert_eq!(m.used(&key(), NOV), Some(13), "10 stored, 3 counted; the 304s and the 5xx given back");
        assert_eq!(m.backlog(), 3);
        let mut days = m.unflushed_days(&key());
        days.sort_by(|a, b| (a.day, &a.route).cmp(&(b.day, &b.route)));
        let entry = |day, route: &str, requests, not_modified| DailyUsage {
            day,
            route: route.to_owned(),
            requests,
            not_modified,
        };
        let want = vec![
            entry(d3, "/v1/companies", 2, 1),
            entry(d3, "/v1/news/{slug}", 1, 0),
            entry(d4, "/v1/companies", 0, 1),
        ];
        assert_eq!(days, want);
        assert_eq!(m.unflushed(&key()), HashMap::from([(NOV, 3)]));
        // Cut into a batch, the entries are still unflushed (in the outbox),
        // once each.
        let batch = m.cut_batch().unwrap();
        assert_eq!(batch.deltas.len(), 3);
        assert!(batch.deltas.iter().all(|d| d.key == key()));
        let mut after = m.unflushed_days(&key());
        after.sort_by(|a, b| (a.day, &a.route).cmp(&(b.day, &b.route)));
        assert_eq!(after, want);
        assert!(!m.is_drained());
        m.outbox.lock().unwrap().waiting = None;
        assert!(m.is_drained());
        assert_eq!(m.unflushed_days(&key()), vec![]);
    }

    /// A key whose only unflushed entries are `304`s is not drained (the
    /// final flush must still write them), though its backlog of counted
    /// requests is zero.
    #[test]
    fn not_modified_alone_is_still_owed_to_the_store() {
        let m = Meter::new();
        m.seed(&key(), NOV, 0);
        m.reserve(&key(), NOV, 10);
        m.settle(&key(), NOV, Outcome::NotModified);
        assert_eq!(m.backlog(), 0);
        assert!(!m.is_drained());
    }

    #[test]
    fn a_spill_gives_back_what_the_store_may_lack_and_skips_torn_lines() {
        use std::io::Write;

        use crate::spill::recover;
        let dir = tempfile::tempdir().unwrap();
        let m = Meter::with_spill(dir.path(), crate::spill::lock(dir.path()).unwrap()).unwrap();
        let node = m.node.clone();
        m.seed(&key(), NOV, 0);
        let count = |n: usize, outcome: Outcome| {
            for _ in 0..n {
                m.reserve(&key(), NOV, u64::MAX);
                m.settle(&key(), NOV, outcome);
            }
        };
        let sums = |batches: Vec<UsageBatch>| -> Vec<(String, u64, u64)> {
            batches
                .iter()
                .map(|b| {
                    let r = b.deltas.iter().map(|d| d.requests).sum();
                    (b.id.clone(), r, b.deltas.iter().map(|d| d.not_modified).sum())
                })
                .collect()
        };
        count(3, Outcome::Counted);
        count(1, Outcome::NotModified);
        count(1, Outcome::Released);
        let tail = format!("{node}:spill");
        assert_eq!(sums(recover(dir.path()).unwrap()), [(tail.clone(), 3, 1)]);

        // Cut: the batch under its own id, what came after under the tail's.
        let batch = m.cut_batch().unwrap();
        count(2, Outcome::Counted);
        assert_eq!(sums(recover(dir.path()).unwrap()), [(batch.id.clone(), 3, 1), (tail.clone(), 2, 0)]);

        // Once the store has the batch, only the tail is owed.
        m.spill().unwrap().done(&batch.id);
        assert_eq!(sums(recover(dir.path()).unwrap()), [(tail.clone(), 2, 0)]);

        // A line not understood and a torn last line are skipped.
        let mut f = std::fs::OpenOptions::new().append(true).open(dir.path().join("usage.spill")).unwrap();
        f.write_all(b"+\tnot a key\t2026-11-01\t/v1/x\t1\t0\n+\tmds_live_abc\t2026-11").unwrap();
        assert_eq!(sums(recover(dir.path()).unwrap()), [(tail, 2, 0)]);

        // Drained, the spill holds nothing to recover.
        m.outbox.lock().unwrap().waiting = None;
        m.key_state(&key()).lock().pending.clear();
        m.clear_spill();
        assert!(recover(dir.path()).unwrap().is_empty());
    }
}
