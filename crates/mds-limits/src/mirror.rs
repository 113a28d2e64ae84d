//! The meter's side of the usage mirror: with `--redis`, a node copies the
//! counts it has not flushed into Redis every [`MIRROR_INTERVAL`], so that
//! when it dies and never returns another node can give them to the store
//! (the Redis side is `crate::shared::mirror`).
//!
//! Every tick moves the pending entries of all keys into the *open* batch
//! (the batch the next flush cuts, its id fixed when it opens) and queues
//! them as a [`Segment`] (a sequence number, the batch id, the deltas) to
//! be added to the mirror; a segment stays queued until Redis has it, and
//! Redis adds a segment once (by its sequence number), so a retried push
//! counts nothing twice. A flush cuts the open batch plus what is pending
//! into the waiting batch under the open batch's id, queues that last part
//! as a segment, pushes it, and only then applies the batch: a batch the
//! store has is whole in the mirror. Once the store has it, the next push
//! drops it from the mirror.
//!
//! What the mirror holds is what a node that takes it over gives the
//! store, under the same batch ids: the store keeps one of two applies of
//! an id, so whether the owner or the taker was first, each count is in
//! the store once. A node that was only stalled and finds its mirror taken
//! ([`Meter::reconcile`]) takes out of its batches what was taken and keeps
//! the rest under new ids; a batch the store says it had before at its
//! first attempt is held ([`Outbox::suspect`]) until then.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::PoisonError;
use std::sync::atomic::Ordering;
use std::time::Duration;

use chrono::NaiveDate;
use mds_domain::KeyPrefix;
use mds_store::{UsageBatch, UsageDelta};

use crate::meter::Meter;

/// How often unflushed counts are mirrored: what a node that dies and
/// never returns can lose (plus the push's round trip).
pub const MIRROR_INTERVAL: Duration = Duration::from_millis(50);

/// A key, day and route: one entry of a batch.
pub type EntryKey = (KeyPrefix, NaiveDate, String);

/// Counts mirrored under one batch id, by entry: requests, `304`s.
pub type Mirrored = HashMap<EntryKey, (u64, u64)>;

/// Counts to add to the mirror, under the batch id they will be flushed in.
#[derive(Debug, Clone)]
pub struct Segment {
    /// Its sequence number (Redis adds each one once).
    pub seq: u64,
    /// The batch its counts belong to.
    pub batch: String,
    /// The counts.
    pub deltas: Vec<UsageDelta>,
}

/// The open batch: counts already queued for the mirror, not yet cut.
#[derive(Debug)]
pub(crate) struct Open {
    batch: UsageBatch,
    index: HashMap<(KeyPrefix, NaiveDate, Cow<'static, str>), usize>,
}

impl Open {
    fn new(id: String) -> Self {
        Open { batch: UsageBatch { id, deltas: Vec::new() }, index: HashMap::new() }
    }

    fn add(&mut self, d: &UsageDelta) {
        let k = (d.key.clone(), d.day, d.route.clone());
        match self.index.get(&k) {
            Some(&i) => {
                self.batch.deltas[i].requests += d.requests;
                self.batch.deltas[i].not_modified += d.not_modified;
            }
            None => {
                self.index.insert(k, self.batch.deltas.len());
                self.batch.deltas.push(d.clone());
            }
        }
    }

    pub(crate) fn into_batch(self) -> UsageBatch {
        self.batch
    }
}

/// The batches a meter has not written yet, beyond its keys' pending
/// entries, under one lock.
#[derive(Debug, Default)]
pub(crate) struct Outbox {
    /// The batch being written or waiting to be written again.
    pub(crate) waiting: Option<UsageBatch>,
    /// Whether an attempt to write it failed (so the store may have it
    /// from this node).
    pub(crate) tried: bool,
    /// The store had the waiting batch at its first attempt: another node
    /// wrote it from this node's mirror. Held until [`Meter::reconcile`].
    pub(crate) suspect: bool,
    /// With a mirror: mirrored counts not yet cut.
    pub(crate) open: Option<Open>,
    /// Segments Redis does not have yet, oldest first.
    pub(crate) unpushed: Vec<Segment>,
    /// Ids of batches the store took that the mirror still holds.
    pub(crate) flushed: Vec<String>,
}

impl Outbox {
    /// The waiting batch, then the open one.
    pub(crate) fn batches(&self) -> impl Iterator<Item = &UsageBatch> {
        self.waiting.iter().chain(self.open.iter().map(|o| &o.batch))
    }
}

/// What a push sends: the segments Redis may lack and the batch ids to
/// drop from the mirror.
#[derive(Debug, Clone, Default)]
pub struct Push {
    /// Segments, oldest first.
    pub segments: Vec<Segment>,
    /// Batches the store has.
    pub dropped: Vec<String>,
}

/// Subtracts `taken` from `deltas`, entry by entry, at most down to zero;
/// drops entries left empty.
fn subtract(deltas: Vec<UsageDelta>, taken: Option<&Mirrored>) -> Vec<UsageDelta> {
    let Some(taken) = taken else { return deltas };
    deltas
        .into_iter()
        .filter_map(|mut d| {
            if let Some((r, n)) = taken.get(&(d.key.clone(), d.day, d.route.to_string())) {
                d.requests = d.requests.saturating_sub(*r);
                d.not_modified = d.not_modified.saturating_sub(*n);
            }
            (d.requests > 0 || d.not_modified > 0).then_some(d)
        })
        .collect()
}

/// Subtracts `taken` from `batch`, the rest under `id` (`None` when
/// nothing is left).
fn remainder(batch: UsageBatch, taken: &HashMap<String, Mirrored>, id: impl FnOnce() -> String) -> Option<UsageBatch> {
    match taken.get(&batch.id) {
        None => Some(batch),
        Some(t) => {
            let deltas = subtract(batch.deltas, Some(t));
            (!deltas.is_empty()).then(|| UsageBatch { id: id(), deltas })
        }
    }
}

impl Meter {
    /// Mirrors from now on: pending counts go through the open batch.
    pub fn start_mirroring(&self) {
        self.mirroring.store(true, Ordering::Relaxed);
    }

    /// The id of this node's mirror in Redis: its node id, with the number
    /// of takeovers it found after it.
    pub fn mirror_id(&self) -> String {
        match self.mirror_epoch.load(Ordering::Relaxed) {
            0 => self.node_id().to_owned(),
            e => format!("{}.{e}", self.node_id()),
        }
    }

    /// Moves pending entries into the open batch and queues them as a
    /// segment (under the outbox's lock, as a cut).
    pub(crate) fn segment(&self, outbox: &mut Outbox) {
        let deltas = self.drain_pending();
        if deltas.is_empty() {
            return;
        }
        let open = outbox.open.get_or_insert_with(|| Open::new(self.next_id()));
        for d in &deltas {
            open.add(d);
        }
        let seq = self.segments.fetch_add(1, Ordering::Relaxed) + 1;
        outbox.unpushed.push(Segment { seq, batch: open.batch.id.clone(), deltas });
    }

    /// A mirror tick: moves pending entries into the open batch, and says
    /// what to push (empty when Redis has everything).
    pub fn mirror_tick(&self) -> Push {
        let mut outbox = self.outbox.lock().unwrap_or_else(PoisonError::into_inner);
        self.segment(&mut outbox);
        Push { segments: outbox.unpushed.clone(), dropped: outbox.flushed.clone() }
    }

    /// What to push now, without moving pending entries (after a cut).
    pub fn to_push(&self) -> Push {
        let outbox = self.outbox.lock().unwrap_or_else(PoisonError::into_inner);
        Push { segments: outbox.unpushed.clone(), dropped: outbox.flushed.clone() }
    }

    /// Redis has `push`: its segments leave the queue and its dropped ids
    /// are forgotten.
    pub fn pushed(&self, push: &Push) {
        let mut outbox = self.outbox.lock().unwrap_or_else(PoisonError::into_inner);
        let upto = push.segments.last().map_or(0, |s| s.seq);
        outbox.unpushed.retain(|s| s.seq > upto);
        outbox.flushed.retain(|id| !push.dropped.contains(id));
    }

    /// Whether a batch is held for the mirror to explain.
    pub fn is_suspect(&self) -> bool {
        self.outbox.lock().unwrap_or_else(PoisonError::into_inner).suspect
    }

    /// Another node took this node's mirror over and gave the store
    /// `taken` (counts by batch id): takes them out of the waiting and the
    /// open batch, keeps the rest under new ids, and starts a new mirror
    /// (its id changes; everything unflushed is queued for it again).
    /// Returns the counted requests taken out.
    pub fn reconcile(&self, taken: &HashMap<String, Mirrored>) -> u64 {
        let mut spilled = self.spill().map(|s| (s, s.exclusive()));
        let mut outbox = self.outbox.lock().unwrap_or_else(PoisonError::into_inner);
        let before: u64 = outbox.batches().flat_map(|b| &b.deltas).map(|d| d.requests).sum();
        self.mirror_epoch.fetch_add(1, Ordering::Relaxed);
        if let Some(spill) = self.spill() {
            spill.note_mirror(&self.mirror_id());
        }
        // Held, yet not taken: the store had it from this node after all.
        if outbox.suspect && outbox.waiting.as_ref().is_some_and(|w| !taken.contains_key(&w.id)) {
            outbox.waiting = None;
        }
        if let Some(w) = outbox.waiting.take() {
            let renamed = taken.contains_key(&w.id);
            outbox.waiting = remainder(w, taken, || self.next_id());
            if renamed {
                outbox.tried = false;
            }
        }
        outbox.suspect = false;
        if let Some(o) = outbox.open.take() {
            if let Some(b) = remainder(o.into_batch(), taken, || self.next_id()) {
                let mut open = Open::new(b.id);
                for d in &b.deltas {
                    open.add(d);
                }
                outbox.open = Some(open);
            }
        }
        // The new mirror starts empty: everything unflushed goes to it again.
        outbox.unpushed.clear();
        outbox.flushed.clear();
        let again: Vec<Segment> = outbox
            .batches()
            .map(|b| Segment {
                seq: self.segments.fetch_add(1, Ordering::Relaxed) + 1,
                batch: b.id.clone(),
                deltas: b.deltas.clone(),
            })
            .collect();
        outbox.unpushed = again;
        let after: u64 = outbox.batches().flat_map(|b| &b.deltas).map(|d| d.requests).sum();
        if let Some((spill, file)) = &mut spilled {
            let batches: Vec<&UsageBatch> = outbox.batches().collect();
            spill.cut(file, &batches);
            // What is pending is not in a batch: spilled again as appended.
            for (key, state) in self.keys.read().unwrap_or_else(PoisonError::into_inner).iter() {
                for e in &state.lock().pending {
                    spill.entry(file, key, e.day, e.route, e.requests, e.not_modified);
                }
            }
        }
        before.saturating_sub(after)
    }

    /// The waiting batch held as suspect was this node's own after all
    /// (the mirror was not taken): it is in the store; let it go.
    pub fn clear_suspect(&self) {
        let mut outbox = self.outbox.lock().unwrap_or_else(PoisonError::into_inner);
        if outbox.suspect {
            outbox.suspect = false;
            if let Some(b) = outbox.waiting.take() {
                outbox.flushed.push(b.id);
            }
        }
    }
}

/// The deltas of `mirrored` as batches, one per id.
pub fn batches_of(mirrored: &HashMap<String, Mirrored>) -> Vec<UsageBatch> {
    let mut out: Vec<UsageBatch> = mirrored
        .iter()
        .map(|(id, entries)| UsageBatch {
            id: id.clone(),
            deltas: entries
                .iter()
                .filter(|(_, (r, n))| *r > 0 || *n > 0)
                .map(|((key, day, route), (r, n))| UsageDelta {
                    key: key.clone(),
                    day: *day,
                    route: Cow::Owned(route.clone()),
                    requests: *r,
                    not_modified: *n,
                })
                .collect(),
        })
        .filter(|b| !b.deltas.is_empty())
        .collect();
    out.sort_by(|a, b| a.id.cmp(&b.id));
    out
}

/// What a node restarted on its spill gives the store when its earlier
/// mirror was taken over by another node (`taken`): the taken batches
/// under their ids (the taker's copy; the store keeps one), then what the
/// spill holds beyond them: a spilled batch less what was taken of it
/// under `<id>:r`, the spill's tail (its last batch, `<node>:spill`) less
/// what was taken of batches cut after `last_cut` and the excess of the
/// others, under its id. A taken batch at or before `last_cut` that the
/// spill no longer holds was written by the node itself.
pub fn after_takeover(
    spilled: Vec<UsageBatch>,
    taken: &HashMap<String, Mirrored>,
    last_cut: Option<u64>,
) -> Vec<UsageBatch> {
    let mut out = batches_of(taken);
    let (mut cut, mut tail): (Vec<UsageBatch>, Vec<UsageBatch>) =
        spilled.into_iter().partition(|b| !b.id.ends_with(":spill"));
    let mut excess: Mirrored = Mirrored::new();
    for (id, t) in taken {
        match cut.iter_mut().find(|b| &b.id == id) {
            Some(b) => {
                for d in &mut b.deltas {
                    if let Some((r, n)) = t.get(&(d.key.clone(), d.day, d.route.to_string())) {
                        let e = excess.entry((d.key.clone(), d.day, d.route.to_string())).or_default();
                        e.0 += r.saturating_sub(d.requests);
                        e.1 += n.saturating_sub(d.not_modified);
                        d.requests = d.requests.saturating_sub(*r);
                        d.not_modified = d.not_modified.saturating_sub(*n);
                    }
                }
                b.id = format!("{id}:r");
                b.deltas.retain(|d| d.requests > 0 || d.not_modified > 0);
            }
            None if crate::spill::seq_of(id).is_some_and(|s| last_cut.is_none_or(|c| s > c)) => {
                for (k, (r, n)) in t {
                    let e = excess.entry(k.clone()).or_default();
                    e.0 += r;
                    e.1 += n;
                }
            }
            None => {}
        }
    }
    for b in &mut tail {
        b.deltas = subtract(std::mem::take(&mut b.deltas), Some(&excess));
    }
    out.extend(cut.into_iter().chain(tail).filter(|b| !b.deltas.is_empty()));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> KeyPrefix {
        KeyPrefix::parse("mds_live_abc").unwrap()
    }

    fn day() -> NaiveDate {
        "2026-11-03".parse().unwrap()
    }

    const ROUTE: &str = "/v1/companies";

    fn batch(id: &str, requests: u64) -> UsageBatch {
        UsageBatch { id: id.to_owned(), deltas: vec![UsageDelta::counted(key(), day(), ROUTE, requests)] }
    }

    fn taken(entries: &[(&str, u64)]) -> HashMap<String, Mirrored> {
        entries
            .iter()
            .map(|(id, r)| (id.to_string(), Mirrored::from([((key(), day(), ROUTE.to_owned()), (*r, 0))])))
            .collect()
    }

    fn sums(batches: &[UsageBatch]) -> Vec<(String, u64)> {
        batches.iter().map(|b| (b.id.clone(), b.deltas.iter().map(|d| d.requests).sum())).collect()
    }

    /// A spill whose batch `n:4` (7 requests) was taken but for its last
    /// 2, whose tail (9) holds the open batch `n:5` of which 6 were taken,
    /// and a batch `n:3` the node wrote itself (taken too, the mirror not
    /// yet told): the taker's copies, then only what it lacks.
    #[test]
    fn a_restart_after_a_takeover_gives_only_what_was_not_taken() {
        let spilled = vec![batch("n:4", 7), batch("n:spill", 9)];
        let t = taken(&[("n:3", 4), ("n:4", 5), ("n:5", 6)]);
        let out = after_takeover(spilled, &t, Some(4));
        assert_eq!(
            sums(&out),
            [("n:3", 4), ("n:4", 5), ("n:5", 6), ("n:4:r", 2), ("n:spill", 3)].map(|(i, r)| (i.to_owned(), r))
        );
    }

    /// Ticks move pending counts into the open batch as segments under its
    /// id; the cut takes the open batch whole; a reconcile takes out what
    /// was taken and keeps the rest under a new id for a new mirror.
    #[test]
    fn segments_cuts_and_a_reconcile() {
        use crate::meter::Outcome;
        let m = Meter::new();
        m.start_mirroring();
        let nov = mds_domain::usage::BillingMonth::of_day(day());
        let count = |n: u64| {
            let s = m.key_state(&key());
            for _ in 0..n {
                crate::meter::record_shared(&mut s.lock(), nov, 0, true);
                s.settle(nov, day(), ROUTE, Outcome::Counted);
            }
        };
        count(3);
        let p1 = m.mirror_tick();
        count(2);
        let p2 = m.mirror_tick();
        assert_eq!(p2.segments.len(), 2, "nothing acked yet: both segments");
        assert_eq!(p1.segments[0].batch, p2.segments[1].batch, "one open batch");
        m.pushed(&p2);
        assert!(m.to_push().segments.is_empty());
        count(1);
        let cut = m.cut_batch().unwrap();
        assert_eq!((cut.id.as_str(), sums(std::slice::from_ref(&cut))[0].1), (p1.segments[0].batch.as_str(), 6));
        assert_eq!(m.to_push().segments.len(), 1, "the cut's last count is queued");

        let old = m.mirror_id();
        m.outbox.lock().unwrap().suspect = true;
        let out = m.reconcile(&taken(&[(&cut.id, 5)]));
        assert_eq!(out, 5);
        assert_ne!(m.mirror_id(), old);
        let w = m.cut_batch().unwrap();
        assert_ne!(w.id, cut.id);
        assert_eq!(sums(std::slice::from_ref(&w))[0].1, 1);
        let again = m.to_push();
        assert_eq!((again.segments.len(), again.segments[0].batch.as_str()), (1, w.id.as_str()));
    }
}
