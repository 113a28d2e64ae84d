//! The Redis side of the usage mirror ([`crate::mirror`]): pushing a
//! node's unflushed counts every tick, flushing with the batch's last
//! counts pushed first, taking over the mirror of a node that stopped
//! pushing (giving its counts to the store under its batch ids), and a
//! restarted node taking its own mirror back.
//!
//! A node's mirror is `{ns}:mirror:{<mirror id>}` (`MIRROR_LUA` says what
//! it holds); the ids of live mirrors are in the set `{ns}:mirrors`, which
//! every node's sweep reads. A mirror not pushed for [`STALE`] (as Redis
//! sees it, a look adding at most [`LOOK_CAP`], so a stopped Redis makes
//! no mirror look stale) is taken over by the first node that looks: it
//! gives the store the taken counts under their batch ids (a batch the
//! owner wrote too is kept once), marks the mirror done, and makes the
//! owner's lease records on those keys reclaimable at once, so the next
//! script seeds the key's counter again from the ledger, which now holds
//! the taken counts.

use std::collections::HashMap;
use std::sync::PoisonError;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use mds_domain::KeyPrefix;
use mds_domain::usage::BillingMonth;
use mds_store::{StoreResult, UsageStore};
use redis::aio::ConnectionManager;
use redis::{RedisError, Value};

use super::SharedLimiter;
use super::config::SharedConfig;
use super::scripts::{FORGET_LUA, TAKE_LUA};
use super::stats::Count;
use crate::mirror::{Mirrored, Push, batches_of};

/// How long a mirror must go unpushed before another node takes it over:
/// ten ticks.
pub const STALE: Duration = Duration::from_millis(500);

/// The most one look at a mirror adds to how long it has gone unpushed.
pub const LOOK_CAP: Duration = Duration::from_millis(250);

/// How long a dead node's lease record waits for its mirror to be taken
/// over before it is reclaimed all the same (`lease.lua`): a mirror is
/// taken [`STALE`] after its last push, so this is only reached when none
/// was pushed (the node died within a tick of its first lease) or no node
/// could take it (the store down). Till then the dead node's leases stay
/// in the counter: the key may be refused early, never admitted past its
/// quota.
pub const AWAIT_TAKEOVER: Duration = Duration::from_secs(10);

/// After how long a takeover its taker did not mark done may be taken
/// again (the taker died in between; the store keeps one copy of each
/// batch).
const RETAKE: Duration = Duration::from_secs(10);

/// How long a mirror, and a taken one, are kept in Redis.
const MIRROR_TTL: Duration = Duration::from_secs(24 * 3600);

/// What was taken from a mirror, by batch id.
pub type Taken = HashMap<String, Mirrored>;

/// What a restarted node found of its own earlier mirror.
#[derive(Debug)]
pub enum OwnMirror {
    /// Nothing, or taken back now by this node, with what it held.
    Back(Taken),
    /// Taken before by another node, which gave the store (or will) what
    /// it held.
    TakenBy(Taken),
}

/// The mirror key of the mirror `id`.
fn mirror_key(namespace: &str, id: &str) -> String {
    format!("{namespace}:mirror:{{{id}}}")
}

/// Reads `field, value, …` of a mirror into counts by batch id; fields
/// not understood are skipped.
fn parse(values: &[Value]) -> Taken {
    let text = |v: &Value| -> Option<String> {
        match v {
            Value::BulkString(b) => String::from_utf8(b.clone()).ok(),
            Value::SimpleString(s) => Some(s.clone()),
            _ => None,
        }
    };
    let mut out = Taken::new();
    for pair in values.chunks(2) {
        let [f, v] = pair else { continue };
        let (Some(f), Some(v)) = (text(f), text(v)) else { continue };
        let parts: Vec<&str> = f.split('\t').collect();
        let [batch, key, day, route] = parts[..] else { continue };
        let (Ok(key), Ok(day)) = (KeyPrefix::parse(key), day.parse()) else { continue };
        let Some((r, n)) = v.split_once(' ') else { continue };
        let (Ok(r), Ok(n)) = (r.parse::<u64>(), n.parse::<u64>()) else { continue };
        let e = out.entry(batch.to_owned()).or_default().entry((key, day, route.to_owned())).or_default();
        e.0 += r;
        e.1 += n;
    }
    out
}

fn int(v: Option<&Value>) -> i64 {
    match v {
        Some(Value::Int(i)) => *i,
        _ => i64::MIN,
    }
}

/// The requests and `304`s in `taken`.
fn totals(taken: &Taken) -> (u64, u64) {
    taken.values().flat_map(|m| m.values()).fold((0, 0), |(r, n), (a, b)| (r + a, n + b))
}

impl SharedLimiter {
    /// Whether this node mirrors its unflushed counts.
    pub fn mirrors(&self) -> bool {
        self.config.mirror
    }

    /// The set of live mirrors' ids.
    fn mirrors_key(&self) -> String {
        format!("{}:mirrors", self.config.namespace)
    }

    /// One mirror tick: pending counts into the open batch, then pushed.
    /// An error is logged by the caller's tick (the next tick sends the
    /// segments again).
    pub async fn mirror_tick(&self) -> Result<(), RedisError> {
        let push = self.local.meter().mirror_tick();
        self.push(push).await
    }

    /// Pushes `push` to this node's mirror; when the mirror was taken
    /// over (this node was stalled), takes the taken counts out of its
    /// batches ([`crate::Meter::reconcile`]) and starts a new mirror. A
    /// failure is counted (`mds_usage_mirror_push_failures_total`).
    pub(super) async fn push(&self, push: Push) -> Result<(), RedisError> {
        let pushed = self.push_once(push).await;
        if pushed.is_err() {
            self.counters.bump(Count::MirrorPushFailures);
        }
        pushed
    }

    /// [`Self::push`], once.
    async fn push_once(&self, push: Push) -> Result<(), RedisError> {
        let meter = self.local.meter();
        let id = meter.mirror_id();
        let mut conn = self.connection().await?;
        let mut inv = self.mirror_script.key(mirror_key(&self.config.namespace, &id));
        inv.arg(self.now_us()).arg(MIRROR_TTL.as_secs()).arg(&self.node_id).arg(push.dropped.len());
        for d in &push.dropped {
            inv.arg(d);
        }
        for s in &push.segments {
            inv.arg(s.seq).arg(s.deltas.len());
            for d in &s.deltas {
                inv.arg(format!("{}\t{}\t{}\t{}", s.batch, d.key.as_str(), d.day, d.route))
                    .arg(d.requests)
                    .arg(d.not_modified);
            }
        }
        let answer: Vec<Value> = match self.timed("EVALSHA", inv.invoke_async(&mut conn)).await {
            Ok(a) => a,
            Err(e) => {
                self.mirror_failing.store(true, Ordering::Relaxed);
                return Err(e);
            }
        };
        self.mirror_failing.store(false, Ordering::Relaxed);
        match int(answer.first()) {
            1 => {
                meter.pushed(&push);
                // Listed again once a second (a Redis restarted empty lost
                // the list), and at once under a new id.
                let indexed = self.mirror_indexed.lock().unwrap_or_else(PoisonError::into_inner).clone();
                if indexed.is_none_or(|(at, was)| was != id || at.elapsed() >= Duration::from_secs(1)) {
                    let mut sadd = redis::cmd("SADD");
                    sadd.arg(self.mirrors_key()).arg(&id);
                    self.timed("SADD", sadd.query_async::<i64>(&mut conn)).await?;
                    *self.mirror_indexed.lock().unwrap_or_else(PoisonError::into_inner) = Some((Instant::now(), id));
                }
                Ok(())
            }
            -1 => {
                let taken = parse(&answer[1..]);
                let (r, n) = totals(&taken);
                let out = meter.reconcile(&taken);
                tracing::warn!(
                    mirror = %id,
                    requests = r,
                    not_modified = n,
                    taken_out = out,
                    "another node took this node's usage mirror over (this node stopped pushing it); what it took is out of this node's batches, the rest kept under new ids"
                );
                Ok(())
            }
            _ => Err(RedisError::from((redis::ErrorKind::TypeError, "unexpected answer of the mirror script"))),
        }
    }

    /// The node's flush with a mirror: a held batch is explained first
    /// (by a push, which finds the mirror taken or not), and each batch's
    /// last counts are pushed before the batch is applied, unless Redis is
    /// away (the limiter degraded, or the last push failed): the store is
    /// the ledger, and a flush does not wait for Redis.
    pub async fn flush(&self, store: &dyn UsageStore) -> StoreResult<u64> {
        let meter = self.local.meter();
        if !self.config.mirror {
            return meter.flush(store).await;
        }
        if meter.is_suspect() {
            match self.push(meter.to_push()).await {
                Ok(()) => meter.clear_suspect(),
                Err(e) => tracing::debug!(error = %e, "cannot ask Redis about a batch the store had before"),
            }
        }
        meter
            .flush_with(store, || async {
                if self.is_degraded() || self.mirror_failing.load(Ordering::Relaxed) {
                    return;
                }
                if let Err(e) = self.push(meter.to_push()).await {
                    tracing::debug!(error = %e, "cannot mirror a batch's last counts before writing it");
                }
            })
            .await
    }

    /// At a graceful stop, once the store has everything: drops this
    /// node's mirror, so no node takes it over.
    pub async fn end_mirror(&self) {
        if !self.config.mirror || !self.local.meter().is_drained() {
            return;
        }
        let id = self.local.meter().mirror_id();
        let end = async {
            let mut conn = self.connection().await?;
            let mut pipe = redis::pipe();
            pipe.cmd("DEL").arg(mirror_key(&self.config.namespace, &id)).ignore();
            pipe.cmd("SREM").arg(self.mirrors_key()).arg(&id).ignore();
            self.timed("pipeline", pipe.query_async::<()>(&mut conn)).await
        };
        if let Err(e) = end.await {
            tracing::warn!(error = %e, "cannot drop this node's usage mirror; another node will find it empty");
        }
    }

    /// Takes over the mirrors of nodes that stopped pushing them and gives
    /// their counts to the store (and retries a takeover the store did not
    /// take). Run it from the sweep.
    pub async fn take_over(&self, store: &dyn UsageStore) {
        if !self.config.mirror || self.is_degraded() {
            return;
        }
        let retry: Vec<(String, String, Taken)> =
            std::mem::take(&mut *self.takeovers.lock().unwrap_or_else(PoisonError::into_inner));
        for (id, lease, taken) in retry {
            self.give_taken(store, id, lease, taken).await;
        }
        let Ok(mut conn) = self.connection().await else { return };
        let mut members = redis::cmd("SMEMBERS");
        members.arg(self.mirrors_key());
        let Ok(ids) = self.timed("SMEMBERS", members.query_async::<Vec<String>>(&mut conn)).await else { return };
        let own = self.local.meter().mirror_id();
        for id in ids.into_iter().filter(|id| *id != own) {
            match self.take(&mut conn, &id, 0, &self.node_id).await {
                Ok(Some((1, lease, taken))) => self.give_taken(store, id, lease, taken).await,
                Ok(Some((3, _, _))) => {
                    let mut srem = redis::cmd("SREM");
                    srem.arg(self.mirrors_key()).arg(&id);
                    let _ = self.timed("SREM", srem.query_async::<i64>(&mut conn)).await;
                }
                Ok(_) => {}
                Err(e) => {
                    tracing::debug!(error = %e, "cannot look at another node's usage mirror");
                    return;
                }
            }
        }
    }

    /// Runs the take script on mirror `id`: its status, the owner's lease
    /// id and what it held.
    async fn take(
        &self,
        conn: &mut ConnectionManager,
        id: &str,
        mode: u8,
        taker: &str,
    ) -> Result<Option<(i64, String, Taken)>, RedisError> {
        take_with(conn, &self.config, &self.take_script, id, mode, taker, self.now_us()).await
    }

    /// Gives the store what was taken from mirror `id` (lease id `lease`),
    /// then marks it done and makes the owner's lease records on those keys
    /// reclaimable; a store failure keeps it for the next sweep.
    async fn give_taken(&self, store: &dyn UsageStore, id: String, lease: String, taken: Taken) {
        let mut generation = i64::MIN;
        for batch in batches_of(&taken) {
            match store.apply_usage_batch(&batch).await {
                Ok(a) => generation = generation.max(a.generation),
                Err(e) => {
                    tracing::warn!(error = %e, mirror = %id, "cannot give the store a taken usage mirror; retried");
                    self.takeovers.lock().unwrap_or_else(PoisonError::into_inner).push((id, lease, taken));
                    return;
                }
            }
        }
        let (r, n) = totals(&taken);
        self.counters.add(Count::TakenOver, r);
        tracing::info!(
            mirror = %id,
            requests = r,
            not_modified = n,
            "took over the usage mirror of a node that stopped pushing it; its unflushed counts are in the store"
        );
        let Ok(mut conn) = self.connection().await else { return };
        let mut pipe = redis::pipe();
        pipe.cmd("HSET").arg(mirror_key(&self.config.namespace, &id)).arg("_done").arg(1).ignore();
        pipe.cmd("SREM").arg(self.mirrors_key()).arg(&id).ignore();
        let mut months: Vec<(KeyPrefix, BillingMonth)> = taken
            .values()
            .flat_map(|m| m.iter())
            .filter(|(_, (r, _))| *r > 0)
            .map(|((key, day, _), _)| (key.clone(), BillingMonth::of_day(*day)))
            .collect();
        months.sort_by(|a, b| (a.0.as_str(), a.1).cmp(&(b.0.as_str(), b.1)));
        months.dedup();
        for (key, month) in months {
            pipe.cmd("EVAL")
                .arg(FORGET_LUA)
                .arg(2)
                .arg(self.usage_key(&key, month))
                .arg(self.lease_key(&key, month))
                .arg(&lease)
                .arg(generation)
                .ignore();
        }
        if let Err(e) = self.timed("pipeline", pipe.query_async::<()>(&mut conn)).await {
            tracing::warn!(error = %e, mirror = %id, "cannot mark a taken usage mirror done");
        }
    }
}

/// Runs the take script on mirror `id` through `conn`.
async fn take_with(
    conn: &mut ConnectionManager,
    config: &SharedConfig,
    script: &redis::Script,
    id: &str,
    mode: u8,
    taker: &str,
    now_us: i64,
) -> Result<Option<(i64, String, Taken)>, RedisError> {
    let mut inv = script.key(mirror_key(&config.namespace, id));
    inv.arg(now_us)
        .arg(taker)
        .arg(i64::try_from(STALE.as_micros()).unwrap_or(i64::MAX))
        .arg(i64::try_from(LOOK_CAP.as_micros()).unwrap_or(i64::MAX))
        .arg(mode)
        .arg(i64::try_from(RETAKE.as_micros()).unwrap_or(i64::MAX))
        .arg(MIRROR_TTL.as_secs());
    let answer: Vec<Value> = match tokio::time::timeout(config.timeout, inv.invoke_async(conn)).await {
        Ok(r) => r?,
        Err(_) => return Err(RedisError::from((redis::ErrorKind::IoError, "Redis did not answer in time"))),
    };
    let status = int(answer.first());
    if !matches!(status, 1 | 2) {
        return Ok(Some((status, String::new(), Taken::new())));
    }
    let lease = match answer.get(1) {
        Some(Value::BulkString(b)) => String::from_utf8_lossy(b).into_owned(),
        _ => String::new(),
    };
    Ok(Some((status, lease, parse(&answer[2..]))))
}

/// A node restarted on its spill takes its earlier mirror `id` back before
/// serving (so no node takes it over later), or learns what another node
/// took of it. Connects on its own (the node's limiter is not made yet).
pub async fn take_own_mirror(config: &SharedConfig, id: &str, taker: &str) -> Result<OwnMirror, RedisError> {
    let client = redis::Client::open(config.url.as_str())?;
    let mut conn = match tokio::time::timeout(config.timeout, ConnectionManager::new(client)).await {
        Ok(c) => c?,
        Err(_) => return Err(RedisError::from((redis::ErrorKind::IoError, "Redis did not answer in time"))),
    };
    let script = redis::Script::new(TAKE_LUA);
    match take_with(&mut conn, config, &script, id, 1, taker, 0).await? {
        Some((2, _, taken)) => Ok(OwnMirror::TakenBy(taken)),
        Some((1, _, taken)) => Ok(OwnMirror::Back(taken)),
        _ => Ok(OwnMirror::Back(Taken::new())),
    }
}

/// Marks the mirror `id` a restarted node took back as done (the store has
/// its counts through the spill).
pub async fn own_mirror_done(config: &SharedConfig, id: &str) -> Result<(), RedisError> {
    let client = redis::Client::open(config.url.as_str())?;
    let fut = async {
        let mut conn = ConnectionManager::new(client).await?;
        let mut pipe = redis::pipe();
        pipe.cmd("HSET").arg(mirror_key(&config.namespace, id)).arg("_done").arg(1).ignore();
        pipe.cmd("SREM").arg(format!("{}:mirrors", config.namespace)).arg(id).ignore();
        pipe.query_async::<()>(&mut conn).await
    };
    match tokio::time::timeout(config.timeout, fut).await {
        Ok(r) => r,
        Err(_) => Err(RedisError::from((redis::ErrorKind::IoError, "Redis did not answer in time"))),
    }
}
