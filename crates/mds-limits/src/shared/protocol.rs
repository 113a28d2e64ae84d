//! The Redis side of leasing: taking a lease for a request, settling the
//! one that ended (what it spent goes to the counter, what it did not use
//! back), carrying requests counted outside leases, and seeding a missing
//! month counter from the store.

use std::sync::Arc;
use std::time::Duration;

use mds_domain::KeyPrefix;
use mds_domain::usage::BillingMonth;
use mds_store::UsageStore;
use redis::aio::ConnectionManager;
use redis::{ErrorKind, RedisError};

use super::decide::Blocked;
use super::scripts::{LEASE_LUA, SEED_LUA};
use super::state::KeyLease;
use super::stats::Count;
use super::{Failure, SharedLimiter};
use crate::lease::{self, Held, Tokens};
use crate::limiter::{Ask, Charge, Decision, Limits};
use crate::meter;

impl SharedLimiter {
    /// Ends the key's lease (if any), gives back what it did not use, and
    /// takes a new one for this request; decides the request from it.
    pub(super) async fn renew(
        &self,
        store: &dyn UsageStore,
        lease: &Arc<KeyLease>,
        ask: Ask<'_>,
    ) -> Result<Decision, Failure> {
        let Ask { key, limits, charge } = ask;
        let counts = charge != Charge::Free;
        let clock = self.local.clock();
        let (now, mono) = (clock.now(), clock.elapsed());
        let month = BillingMonth::of(now);
        let cap = lease::max_lease(limits, self.config.nodes, self.config.lease_ttl);
        {
            let mut s = lease.lock();
            if let Some(h) = s.held.take() {
                // A lease that granted no minute token was a refusal: the
                // size it asked for stands.
                if h.min.granted > 0 {
                    let spent_early = h.min.spent_out() && h.limits == limits;
                    s.size = lease::next_size(&h, s.size, spent_early, cap);
                }
                s.ended = Some(h);
            }
            s.size = s.size.clamp(1, cap);
            s.blocked = None;
            s.limits = Some(limits);
        }
        // A lease of another month is settled on that month's records first.
        let other_month = lease.lock().ended.filter(|h| h.month != month);
        if let Some(h) = other_month {
            self.call(store, key, lease, h.month, h.limits, (0, 0)).await?;
        }
        let size = lease.lock().size;
        // A usage read (free) takes no month tokens: a key polled for its
        // usage holds none of its quota from other nodes.
        let a = self.call(store, key, lease, month, limits, (size, if counts { size } else { 0 })).await?;
        let mut s = lease.lock();
        let mut h = Held {
            seq: s.seq,
            month,
            limits,
            min: Tokens::new(a.granted_min),
            mon: Tokens::new(a.granted_mon),
            taken_at: mono,
            ends_at: mono + self.lease_life(),
            redis_remaining: a.remaining,
            reset_us: a.reset_us,
            counter: a.counter,
        };
        if h.take(counts) {
            s.held = Some(h);
            return Ok(self.admitted(ask, lease, &h, now, mono));
        }
        s.held = Some(h);
        // Refused: stand by the refusal without asking Redis again. For the
        // minute, until the tokens of a lease of this size can have come (a
        // lease of one: until Redis's retry), at most two lease TTLs; for the
        // month, one sweep interval, so tokens another node gives back are
        // found.
        let per_token = 60_000_000 / i64::from(limits.rate_limit_per_minute.max(1));
        let batch = per_token.saturating_mul(i64::try_from(s.size.saturating_sub(1)).unwrap_or(i64::MAX));
        let us = |v: i64| Duration::from_micros(u64::try_from(v).unwrap_or(0));
        let wait = match a.granted_min {
            0 => us(a.retry_us.max(batch)).min(self.minute_wait()),
            _ => self.sweep_interval(),
        };
        let b = Blocked {
            until: mono + wait,
            retry_at: mono + us(a.retry_us),
            reset_at: mono + us(a.reset_us),
            month,
            limits,
            minute: a.granted_min == 0,
            month_spent: a.granted_mon == 0 && a.counter >= limits.monthly_quota,
            minute_remaining: h.minute_remaining(),
            counter: h.month_used(),
        };
        s.blocked = Some(b);
        drop(s);
        let state = self.local.meter().key_state(key);
        meter::record_shared(&mut state.lock(), month, b.counter, false);
        Ok(self.refused(&b, limits, counts, now, mono))
    }

    /// Ends the key's lease if it ended (or `all`, or a running total of
    /// requests counted outside leases must be carried), telling Redis what
    /// it spent, and carries the running total; takes nothing.
    pub(super) async fn settle(
        &self,
        store: &dyn UsageStore,
        key: &KeyPrefix,
        lease: &Arc<KeyLease>,
        all: bool,
    ) -> Result<(), Failure> {
        let Ok(_renewing) = lease.renewing.try_lock() else { return Ok(()) };
        let mono = self.local.clock().elapsed();
        let month = {
            let mut s = lease.lock();
            // Every script settles the lease Redis has on record for this
            // node, so one carrying the running total or touching the
            // record ends the held lease too.
            let carry = s.adj != s.adj_acked;
            let touch = s.told.is_some_and(|(_, n, _)| n > 0);
            if let Some(h) = s.held.filter(|h| all || carry || touch || !h.live(mono)) {
                s.held = None;
                if h.min.granted > 0 {
                    let spent = h.min.spent_out();
                    s.size = lease::next_size(&h, s.size, spent, u64::MAX).min(s.size.max(1));
                }
                s.ended = Some(h);
            }
            match (s.ended, s.adj_month, s.told) {
                (Some(h), _, _) => h.month,
                (None, Some(m), _) if s.adj != s.adj_acked => m,
                // Touches the record (see `SharedLimiter::sweep`).
                (None, _, Some((m, n, _))) if n > 0 => m,
                _ => return Ok(()),
            }
        };
        let Some(limits) = lease.lock().limits else { return Ok(()) };
        self.call(store, key, lease, month, limits, (0, 0)).await.map(|_| ())
    }

    /// Sends one lease script for `month`: settles the ended lease, carries
    /// the running total, takes `want` tokens (per-minute, month). Seeds a
    /// missing counter. On
    /// success the ended lease is forgotten and the answer returned.
    async fn call(
        &self,
        store: &dyn UsageStore,
        key: &KeyPrefix,
        lease: &Arc<KeyLease>,
        month: BillingMonth,
        limits: Limits,
        want: (u64, u64),
    ) -> Result<Answer, Failure> {
        let mut conn = self.connection().await?;
        let keys = [self.gcra_key(key), self.usage_key(key, month), self.lease_key(key, month)];
        let meter = self.local.meter();
        // The counter's seed generation, once Redis says it has no record
        // of this node: what to add is then counted as the script is sent.
        let mut seeded: Option<i64> = None;
        for _ in 0..6 {
            // With no flush between the store and the outbox meanwhile.
            let no_flush = match seeded {
                Some(_) => Some(meter.hold_flushes().await),
                None => None,
            };
            // A batch whose write failed may be in the store all the same
            // (its answer lost): asked, so the seed does not count it twice.
            let tried = match (seeded, meter.tried_batch()) {
                (Some(_), Some(id)) => {
                    let at = store.usage_batch_applied(&id).await?;
                    Some((id, at))
                }
                _ => None,
            };
            let sent_at = self.local.clock().elapsed();
            let (seq, args) = {
                let mut s = lease.lock();
                if s.adj_month != Some(month) {
                    if s.adj != s.adj_acked {
                        tracing::debug!(key = %key.as_str(), "requests counted outside leases last month stay in the ledger only");
                    }
                    (s.adj, s.adj_acked, s.adj_month) = (0, 0, Some(month));
                }
                s.seq += 1;
                let (settle_seq, used_min, used_mon) =
                    s.ended.filter(|h| h.month == month).map_or((0, 0, 0), |h| (h.seq, h.min.used, h.mon.used));
                let now_us = self.now_us();
                // All this node counted that the seed could not see: not in
                // the store yet, or written there after the seed. A lease
                // still held admits no more (Redis no longer reserves what
                // it did not spend); what it spent is counted here.
                let if_new = match seeded {
                    None => -1,
                    Some(generation) => {
                        if let Some(h) = s.held.as_mut() {
                            h.min.granted = h.min.used;
                            h.mon.granted = h.mon.used;
                        }
                        let tried = tried.as_ref().map(|(id, at)| (id.as_str(), *at));
                        let n = meter.not_in_store_as_of(key, month, (generation >= 0).then_some(generation), tried);
                        i64::try_from(n).unwrap_or(i64::MAX)
                    }
                };
                let pending = meter.not_in_store(key, month);
                let args: [i64; 17] = [
                    i64::try_from(s.seq).unwrap_or(i64::MAX),
                    i64::try_from(settle_seq).unwrap_or(i64::MAX),
                    i64::try_from(used_min).unwrap_or(i64::MAX),
                    i64::try_from(used_mon).unwrap_or(i64::MAX),
                    s.adj,
                    if_new,
                    i64::try_from(want.0).unwrap_or(i64::MAX),
                    i64::from(limits.rate_limit_per_minute),
                    i64::try_from(limits.monthly_quota).unwrap_or(i64::MAX),
                    i64::from(self.config.nodes),
                    now_us,
                    i64::try_from(self.config.usage_ttl.as_secs().max(1)).unwrap_or(i64::MAX),
                    i64::try_from(want.1).unwrap_or(i64::MAX),
                    i64::try_from(pending).unwrap_or(i64::MAX),
                    i64::try_from(self.config.lease_ttl.as_micros()).unwrap_or(i64::MAX),
                    seeded.unwrap_or(-1),
                    match self.config.mirror {
                        true => i64::try_from(super::mirror::AWAIT_TAKEOVER.as_micros()).unwrap_or(i64::MAX),
                        false => 0,
                    },
                ];
                (s.seq, args)
            };
            drop(no_flush);
            self.counters.bump(Count::LeaseCalls);
            let a = match self.eval(&mut conn, &keys, &args).await {
                // A connection Redis dropped (restarted, say) is made again
                // at once, and the script sent once more, rather than the
                // node limiting alone until its next probe. Had the first
                // run reached Redis, the record stops the second (-2).
                Err(e) if e.is_connection_dropped() => {
                    conn = self.connection().await?;
                    self.eval(&mut conn, &keys, &args).await?
                }
                r => r?,
            };
            match a.status {
                1 => {
                    let mut s = lease.lock();
                    if s.ended.is_some_and(|h| h.month == month) {
                        s.ended = None;
                    }
                    s.adj_acked = args[4];
                    s.told = Some((month, u64::try_from(args[13]).unwrap_or(0), sent_at));
                    debug_assert_eq!(s.seq, seq);
                    return Ok(a);
                }
                -1 => {
                    if a.extra > 0 {
                        self.counters.add(Count::Reclaimed, u64::try_from(a.extra).unwrap_or(0));
                        tracing::info!(
                            key = %key.as_str(),
                            nodes = a.extra,
                            "reclaimed the leases of nodes that stopped renewing them; the month's counter is seeded again from the ledger"
                        );
                    }
                    self.seed(store, &mut conn, key, month, &keys).await?;
                }
                -3 => {
                    // A counter seeded since this node last wrote to it (or
                    // never written by it).
                    seeded = Some(a.extra);
                    // Back from a stall, this node's mirror may have been
                    // taken over: the store (and so the seed) has what was
                    // taken. A push finds out and takes it out of the
                    // batches before they are counted; a push that succeeds
                    // keeps the mirror from being taken for the stale age.
                    if self.config.mirror {
                        self.push(meter.to_push()).await?;
                    }
                }
                -2 => {
                    // A record at or past this attempt: carry on after it.
                    let mut s = lease.lock();
                    s.seq = s.seq.max(u64::try_from(a.extra).unwrap_or(0));
                }
                _ => break,
            }
        }
        Err(RedisError::from((ErrorKind::ResponseError, "the lease script did not settle")).into())
    }

    /// Seeds a missing month counter with the store's count (another node
    /// may have been first). What each node counted that the store did not
    /// have yet is added by its next script (the `-3` answer).
    async fn seed(
        &self,
        store: &dyn UsageStore,
        conn: &mut ConnectionManager,
        key: &KeyPrefix,
        month: BillingMonth,
        keys: &[String; 3],
    ) -> Result<(), Failure> {
        // The count and the generation it is as of, in one snapshot: each
        // node adds what it has that no batch up to that generation holds.
        let (stored, generation) = store.usage_as_of(key, month).await?;
        let mut seed = redis::cmd("EVAL");
        seed.arg(SEED_LUA)
            .arg(2)
            .arg(&keys[1])
            .arg(&keys[2])
            .arg(stored)
            .arg(self.config.usage_ttl.as_secs().max(1))
            .arg(generation);
        if self.timed("EVAL", seed.query_async::<i64>(conn)).await? == 1 {
            self.counters.bump(Count::Seeds);
        }
        Ok(())
    }

    /// The time the scripts are told (µs since the epoch), or 0 for
    /// Redis's own `TIME`.
    pub(super) fn now_us(&self) -> i64 {
        match self.config.caller_time {
            true => self.local.clock().now().timestamp_micros().max(1),
            false => 0,
        }
    }
}

/// What the lease script answered.
#[derive(Debug, Clone, Copy)]
struct Answer {
    status: i64,
    granted_min: u64,
    granted_mon: u64,
    remaining: u64,
    reset_us: i64,
    retry_us: i64,
    counter: u64,
    /// The records reclaimed (status -1), the record's sequence (status
    /// -2), or the counter's seed generation (status -3, -1 if unknown).
    extra: i64,
}

impl SharedLimiter {
    /// Runs the lease script: `EVALSHA`, or `EVAL` when Redis lacks it.
    async fn eval(
        &self,
        conn: &mut ConnectionManager,
        keys: &[String; 3],
        args: &[i64; 17],
    ) -> Result<Answer, RedisError> {
        let mut evalsha = redis::cmd("EVALSHA");
        evalsha.arg(self.lease_script.get_hash()).arg(3).arg(&keys[..]).arg(&self.node_id).arg(&args[..]);
        let raw: Vec<i64> = match self.timed("EVALSHA", evalsha.query_async(conn)).await {
            Err(e) if e.kind() == ErrorKind::NoScriptError => {
                let mut eval = redis::cmd("EVAL");
                eval.arg(LEASE_LUA).arg(3).arg(&keys[..]).arg(&self.node_id).arg(&args[..]);
                self.timed("EVAL", eval.query_async(conn)).await?
            }
            r => r?,
        };
        let [status, granted_min, granted_mon, remaining, reset_us, retry_us, counter, extra] = raw[..] else {
            return Err(RedisError::from((ErrorKind::TypeError, "unexpected answer of the lease script")));
        };
        let n = |v: i64| u64::try_from(v).unwrap_or(0);
        Ok(Answer {
            status,
            granted_min: n(granted_min),
            granted_mon: n(granted_mon),
            remaining: n(remaining),
            reset_us,
            retry_us,
            counter: n(counter),
            extra,
        })
    }
}
