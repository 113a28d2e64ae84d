//! [`SharedLimiter`]: the per-minute limit and the monthly quota enforced
//! across all nodes together, through Redis, at the speed of local limits.
//!
//! # Leased admission
//! A node does not ask Redis for every request. It takes a *lease* for a key:
//! a number of per-minute tokens (taken from the GCRA whose TAT is at
//! `{ns}:gcra:{<prefix>}`) and of month tokens (reserved on the month's
//! counter `{ns}:usage:{<prefix>}:<yyyymm>`, which holds what was spent plus
//! what is leased), and admits from it locally. A lease ends when spent,
//! after [`SharedConfig::lease_ttl`], when the key's limits change (a tier
//! or entitlement change) or at shutdown; what it did not use goes back to
//! Redis in the same script that takes the next one ([`LEASE_LUA`], one
//! `EVALSHA`). A background sweep ([`SharedLimiter::sweep`]) gives back the
//! leases of keys that went quiet. How big a lease is: [`crate::lease`].
//! Because every admitted request spends a token Redis granted, the cluster
//! never admits more than the limit or the quota; a node may refuse while
//! another holds unused tokens, for at most one lease TTL.
//!
//! # One clock
//! The script reads Redis's own `TIME`, so nodes with skewed clocks take
//! from the same minute. (Tests may pass the time instead:
//! [`SharedConfig::caller_time`].) Lease lifetimes are measured on the
//! node's monotonic clock; they are durations, not instants.
//!
//! # Exact through stalls
//! Every script a node sends carries the node's id and a sequence number,
//! and Redis keeps, per node and key, the last one applied with what it
//! granted (`{ns}:lease:{<prefix>}:<yyyymm>`, a hash). A script older than
//! the record (one that timed out here and reached Redis late) changes
//! nothing. The next script settles whichever lease the record holds: the
//! one the node knows, with what it spent, or one the node never heard of,
//! as unspent. Requests counted outside leases (admitted locally while Redis
//! was away, or given back after their lease ended) are carried as one
//! running total per node and month, and the script adds only the part the
//! record has not seen. So a stall or a timeout neither loses a request nor
//! counts one twice: afterwards the counter, the store's ledger and every
//! node's usage agree.
//!
//! # Redis is the authority, the store the ledger
//! Redis holds the live count of the month; the store stays the durable
//! ledger. A counted request still goes into this node's [`Meter`] (pending
//! counts, flushed in idempotent batches exactly as without Redis), so usage
//! history does not change. When the month's counter is missing (first use,
//! Redis restarted, or evicted) the script answers "unseeded": this node
//! sets it to the store's count for the month, read with the store's
//! `usage` generation in one snapshot ([`SEED_LUA`], which also drops the
//! lease records of the counter's earlier life, noting the generation),
//! then runs the script again. A node that Redis then has no record of is
//! told the seed's generation and adds, in its next script, exactly what it
//! counted that the seed does not hold: requests being answered, pending,
//! in its outbox, or in a batch the store took after that generation (from
//! the meter's log of the key's last flushes, each with the generation the
//! store gave it), counted with its flushes held off and its held lease cut
//! to what it spent. Two things come first. A batch whose write failed may
//! be in the store all the same (the commit's answer lost): the node asks
//! the store whether, and at which generation, it took it, and counts it
//! only if after the seed (a batch sent again is told that generation too,
//! not the store's now). And a node back from a stall pushes its mirror
//! first: if another node took it over, the store (and so the seed) has
//! what was taken, and the push takes it out of the node's batches. So
//! after Redis loses a counter the nodes rebuild it from the ledger and
//! their own counts; what can still go wrong is a flush older than the log
//! (16 flushes) or a batch written before the store recorded generations
//! (counted twice: over, the safe side).
//!
//! # A node that dies
//! Each lease record also says when it was written and how many of the
//! node's requests of the key were not in the store then. A live node
//! renews or settles every lease within a lease TTL (spent or not), and
//! touches its record every half TTL while it has such requests
//! ([`SharedLimiter::sweep`]). A record not written for a TTL that still
//! holds tokens or requests is a dead (or stalled) node's. With usage
//! mirrors it first waits for the node's mirror to be taken over (the
//! taker gives its unflushed requests to the store and marks its records;
//! [`AWAIT_TAKEOVER`] at the most), so that the seed that follows reads a
//! ledger that holds them. Then the next script on the key reclaims it
//! (its minute tokens back to the GCRA) and drops the counter, which is
//! seeded again as above. A seed keeps the records of live nodes, each
//! with a reservation of its lease's month tokens and its requests not in
//! the store when it last wrote, until the node's next script says what it
//! counted: a live node's held lease is never leased again by another. The
//! dead node's unspent tokens (and, without mirrors, its unflushed
//! requests: lost, not billed) so leave the counter, and it is again the
//! ledger plus the live leases: what `/v1/usage` reports is what the key
//! can spend, and never more than the quota. A stalled node that comes
//! back finds no record: its lease has ended by its own clock, it gives
//! nothing back twice, and adds what it counted, as after a seed.
//!
//! # Redis away
//! On any Redis error (refused, timed out after [`SharedConfig::timeout`])
//! the request is admitted by the node's own [`Limiter`], with the per-minute
//! limit divided by [`SharedConfig::nodes`] (each node allows
//! `max(rate_limit_per_minute / nodes, 1)` per minute, so the cluster as a
//! whole stays within the limit), and the monthly quota checked against what
//! this node knows: the last shared count it saw for the key plus what it
//! admitted since. So during an outage each node may admit up to what was
//! left of the quota when it last heard from Redis: over-admission is bounded
//! by `(nodes − 1) × remaining` per key, and only during the outage. A lease
//! taken before the outage is still spent first: its tokens were granted.
//!
//! The node logs one warning when it falls back and one info line when Redis
//! answers again; while degraded it tries Redis again at most once per
//! [`SharedConfig::probe_interval`] (the request that probes uses Redis if it
//! answers), not on every request. [`SharedLimiter::is_degraded`] and
//! [`SharedLimiter::stats`] tell a metrics endpoint where things stand.
//!
//! # Layout
//! - here: [`SharedLimiter`], its public calls (admit, sweep, give back)
//!   and the Redis key names;
//! - `config`: [`SharedConfig`] and [`SharedConfigError`];
//! - `scripts`: the two Lua scripts (`lease.lua`, `seed.lua`, loaded with
//!   `include_str!`), what they take and what they answer;
//! - `protocol`: taking, settling and seeding through the scripts, and
//!   running them;
//! - `decide`: admitting from a held lease, or refusing by a standing
//!   refusal, without Redis;
//! - `state`: one key's leasing on this node, and `Release`;
//! - `connection`: the Redis connection, its timeout, and falling back
//!   and coming back;
//! - `fallback`: the node's own decision while Redis is away;
//! - `stats`: [`SharedStats`], and the counts behind it.

mod config;
mod connection;
mod decide;
mod fallback;
mod mirror;
mod protocol;
mod scripts;
mod state;
mod stats;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::{Duration, Instant};

use mds_domain::KeyPrefix;
use mds_domain::usage::BillingMonth;
use mds_store::{StoreError, StoreResult, UsageStore};
use redis::{RedisError, Script};

use crate::clock::Clock;
use crate::lease::Held;
use crate::limiter::{Ask, Decision, Limiter};
use crate::meter::Meter;

pub use config::{SharedConfig, SharedConfigError};
use connection::Conn;
pub use mirror::{AWAIT_TAKEOVER, LOOK_CAP, OwnMirror, STALE, Taken, own_mirror_done, take_own_mirror};
pub use scripts::{FORGET_LUA, LEASE_LUA, MIRROR_LUA, SEED_LUA, TAKE_LUA};
use state::KeyLease;
pub(crate) use state::Release;
use stats::Counters;
pub use stats::SharedStats;

/// Why an admission through Redis did not give a decision.
enum Failure {
    Redis(RedisError),
    Store(StoreError),
}

impl From<RedisError> for Failure {
    fn from(e: RedisError) -> Self {
        Failure::Redis(e)
    }
}

impl From<StoreError> for Failure {
    fn from(e: StoreError) -> Self {
        Failure::Store(e)
    }
}

/// The per-minute limit and monthly quota of all nodes together, leased
/// from Redis, with the node's own [`Limiter`] as the fallback.
///
/// Build one per node from the node's meter and clock
/// ([`SharedLimiter::connect`]), call [`SharedLimiter::admit`] where
/// [`Limiter::admit`] was called, and settle the hold the same way. Call
/// [`SharedLimiter::sweep`] every lease TTL or so, and
/// [`SharedLimiter::give_back`] at shutdown.
#[derive(Debug)]
pub struct SharedLimiter {
    config: SharedConfig,
    client: redis::Client,
    conn: Mutex<Option<Conn>>,
    local: Limiter,
    lease_script: Script,
    mirror_script: Script,
    take_script: Script,
    /// When the mirror id was last added to the set of live mirrors, and
    /// the id.
    mirror_indexed: Mutex<Option<(Instant, String)>>,
    /// Takeovers the store did not take yet: mirror id, lease id, counts.
    takeovers: Mutex<Vec<(String, String, Taken)>>,
    /// Whether the last mirror push failed (a flush then does not wait
    /// for one).
    mirror_failing: AtomicBool,
    node_id: String,
    leases: RwLock<HashMap<KeyPrefix, Arc<KeyLease>>>,
    degraded: AtomicBool,
    next_probe: Mutex<Instant>,
    counters: Counters,
}

impl SharedLimiter {
    /// A limiter sharing limits through Redis at `config.url`, counting into
    /// `meter` (the node's meter, flushed as before) and reading time from
    /// `clock`. Tries to connect once (within `config.timeout`); an
    /// unreachable Redis is not an error: the limiter starts degraded (one
    /// warning) and tries again later. Only a URL that cannot be used is an
    /// error.
    pub async fn connect(
        config: SharedConfig,
        meter: Arc<Meter>,
        clock: Arc<dyn Clock>,
    ) -> Result<Self, SharedConfigError> {
        let client = redis::Client::open(config.url.as_str()).map_err(|e| SharedConfigError(e.to_string()))?;
        let limiter = SharedLimiter {
            client,
            conn: Mutex::new(None),
            local: Limiter::new(meter, clock),
            lease_script: Script::new(LEASE_LUA),
            mirror_script: Script::new(MIRROR_LUA),
            take_script: Script::new(TAKE_LUA),
            mirror_indexed: Mutex::new(None),
            takeovers: Mutex::new(Vec::new()),
            mirror_failing: AtomicBool::new(false),
            node_id: format!("{:016x}", rand::random::<u64>()),
            leases: RwLock::new(HashMap::new()),
            degraded: AtomicBool::new(false),
            next_probe: Mutex::new(Instant::now()),
            counters: Counters::default(),
            config: SharedConfig {
                nodes: config.nodes.max(1),
                lease_ttl: config.lease_ttl.max(Duration::from_millis(1)),
                ..config
            },
        };
        if let Err(e) = limiter.connection().await {
            limiter.fell_back(&e);
        }
        if limiter.config.mirror {
            let meter = limiter.local.meter();
            meter.start_mirroring();
            if let Some(spill) = meter.spill() {
                spill.set_mirror(&meter.mirror_id()).map_err(|e| SharedConfigError(format!("usage spill: {e}")))?;
            }
        }
        Ok(limiter)
    }

    /// The node's own limiter (its meter and clock), used while degraded.
    pub fn local(&self) -> &Limiter {
        &self.local
    }

    /// How long a lease admits: three quarters of the lease TTL, so that
    /// with the sweep that gives it back ([`SharedLimiter::sweep_interval`])
    /// and a refused node's next ask, another node waits at most one TTL
    /// for tokens this one did not use.
    fn lease_life(&self) -> Duration {
        self.config.lease_ttl * 3 / 4
    }

    /// The longest a node refused for the minute waits before asking Redis
    /// again: two lease TTLs, the time the largest lease a node takes
    /// ([`crate::lease`]) needs to refill. A key held at its limit then
    /// costs one script per such lease; the tokens are not lost meanwhile
    /// (the minute's allowance keeps them), only taken in one batch.
    fn minute_wait(&self) -> Duration {
        self.config.lease_ttl * 2
    }

    /// How often [`SharedLimiter::sweep`] should run: an eighth of the
    /// lease TTL.
    pub fn sweep_interval(&self) -> Duration {
        self.config.lease_ttl / 8
    }

    /// Whether decisions are taken locally now, Redis being away.
    pub fn is_degraded(&self) -> bool {
        self.degraded.load(Ordering::Relaxed)
    }

    /// Admits the request `ask` or says why not, like [`Limiter::admit`]
    /// but across all nodes: from the key's lease, taking a new one from
    /// Redis when it is spent or ended, or, while Redis is away, by the
    /// node's own limiter with its share of the per-minute limit. A Redis
    /// failure is never an error here; a store failure (reading the count
    /// to seed a counter) is.
    pub async fn admit(&self, store: &dyn UsageStore, ask: Ask<'_>) -> StoreResult<Decision> {
        let lease = self.lease_of(ask.key);
        if let Some(d) = self.admit_from_lease(&lease, ask) {
            return Ok(d);
        }
        if self.should_try_redis() {
            // One request renews; the others wait for it and take from the new lease.
            let _renewing = lease.renewing.lock().await;
            if let Some(d) = self.admit_from_lease(&lease, ask) {
                return Ok(d);
            }
            match self.renew(store, &lease, ask).await {
                Ok(d) => {
                    self.came_back();
                    return Ok(d);
                }
                Err(Failure::Store(e)) => return Err(e),
                Err(Failure::Redis(e)) => self.fell_back(&e),
            }
        }
        self.fallback(store, ask, lease).await
    }

    /// Gives back the leases that ended and carries requests counted outside
    /// leases to Redis, for keys that went quiet (an active key does both
    /// when it takes its next lease), and keeps the records of keys with
    /// requests not in the store yet from looking dead; while Redis is away,
    /// tries it again once per probe interval. Run it every
    /// [`SharedLimiter::sweep_interval`].
    pub async fn sweep(&self, store: &dyn UsageStore) {
        if self.probe().await {
            return;
        }
        let now = self.local.clock().elapsed();
        let meter = self.local.meter();
        let touch = self.config.lease_ttl / 2;
        let due: Vec<(KeyPrefix, Arc<KeyLease>)> = self
            .leases
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .filter(|(key, l)| {
                let s = l.lock();
                // A lease that ended is settled, spent or not: Redis takes a
                // record that holds tokens and is not renewed within a lease
                // TTL for a dead node's. So is one that told Redis of
                // requests not in the store, every half TTL until they are
                // and once more then.
                let granted = |h: Held| h.min.granted > 0 || h.mon.granted > 0;
                let live = s.held.is_some_and(|h| h.live(now));
                let told = s.told.is_some_and(|(month, n, at)| {
                    n > 0 && !live && (now >= at + touch || meter.not_in_store(key, month) == 0)
                });
                s.held.is_some_and(|h| granted(h) && !h.live(now)) || s.ended.is_some() || s.adj != s.adj_acked || told
            })
            .map(|(k, l)| (k.clone(), l.clone()))
            .collect();
        for (key, lease) in due {
            if let Err(Failure::Redis(e)) = self.settle(store, &key, &lease, false).await {
                self.fell_back(&e);
                return;
            }
        }
    }

    /// Gives back every lease this node holds (at shutdown), so no other
    /// node waits for them to end.
    pub async fn give_back(&self, store: &dyn UsageStore) {
        let all: Vec<(KeyPrefix, Arc<KeyLease>)> = self
            .leases
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .map(|(k, l)| (k.clone(), l.clone()))
            .collect();
        for (key, lease) in all {
            if let Err(Failure::Redis(e)) = self.settle(store, &key, &lease, true).await {
                tracing::warn!(error = %e, "could not give leases back to Redis; they end by themselves");
                return;
            }
        }
    }

    /// The shared count of `key` for `month`, if Redis has one: what was
    /// spent plus what is leased now. `None` when missing or unreachable.
    pub async fn shared_used(&self, key: &KeyPrefix, month: BillingMonth) -> Option<u64> {
        if self.is_degraded() {
            return None;
        }
        let mut conn = self.connection().await.ok()?;
        let mut get = redis::cmd("GET");
        get.arg(self.usage_key(key, month));
        self.timed("GET", get.query_async::<Option<u64>>(&mut conn)).await.ok()?
    }

    /// The Redis key of `key`'s GCRA state.
    pub fn gcra_key(&self, key: &KeyPrefix) -> String {
        format!("{}:gcra:{{{}}}", self.config.namespace, key.as_str())
    }

    /// The Redis key of `key`'s counter for `month`.
    pub fn usage_key(&self, key: &KeyPrefix, month: BillingMonth) -> String {
        format!("{}:usage:{{{}}}:{:04}{:02}", self.config.namespace, key.as_str(), month.year, month.month)
    }

    /// The Redis key of `key`'s lease records for `month`.
    pub fn lease_key(&self, key: &KeyPrefix, month: BillingMonth) -> String {
        format!("{}:lease:{{{}}}:{:04}{:02}", self.config.namespace, key.as_str(), month.year, month.month)
    }

    fn lease_of(&self, key: &KeyPrefix) -> Arc<KeyLease> {
        if let Some(l) = self.leases.read().unwrap_or_else(PoisonError::into_inner).get(key) {
            return l.clone();
        }
        self.leases.write().unwrap_or_else(PoisonError::into_inner).entry(key.clone()).or_default().clone()
    }
}
