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
//! sets it to the store's count for the month ([`SEED_LUA`], which also
//! drops the lease records of the counter's earlier life, noting when), then runs the script
//! again. A node that Redis then has no record of is told when the counter
//! was seeded and adds, in its next script, all it counted that the seed
//! could not see: requests not in the store yet (pending, or being
//! answered) and those the store took after the seed (from the meter's log
//! of the key's last flushes). So after Redis loses a counter the nodes
//! rebuild it from the ledger and their own counts; what can still go
//! missing is a flush older than the log (16 flushes); a flush that lands
//! while the seed reads the store may be counted twice (over, the safe side).
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

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, RwLock};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use mds_domain::KeyPrefix;
use mds_domain::usage::BillingMonth;
use mds_store::{StoreError, StoreResult, UsageStore};
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::{ErrorKind, RedisError, Script};

use crate::clock::Clock;
use crate::lease::{self, Held, Tokens};
use crate::limiter::{Ask, Charge, Decision, Limiter, Limits, MinuteStanding, Policy, Ticket};
use crate::meter::{self, Meter};

/// The lease script. `KEYS[1]`: the GCRA TAT (µs); `KEYS[2]`: the month's
/// counter (spent plus leased); `KEYS[3]`: the month's lease records, a hash
/// of node id → `"seq granted_min granted_month adjustments"`, and `_seeded`
/// (when the counter was seeded).
///
/// `ARGV`: 1 node id, 2 this attempt's sequence number, 3 the lease the node
/// settles (its sequence number, 0 for none), 4 and 5 the per-minute and
/// month tokens it spent of it, 6 the node's running total of requests
/// counted outside leases this month, 7 what to add to the counter when
/// Redis has no record of the node (-1: not known yet), 8 per-minute tokens
/// wanted (0: only settle), 9 limit per minute, 10 monthly quota, 11 nodes
/// sharing the key, 12 now in µs (0: use Redis's `TIME`), 13 the expiry of
/// the counter and records (s), 14 month tokens wanted (granted only with
/// per-minute tokens, and no more of them: a counted request needs one of
/// each, a refused request reserves nothing).
///
/// Answers `{status, granted_min, granted_month, remaining, reset_us,
/// retry_us, counter, extra}`: status 1 done (`extra` 0); -1 unseeded (the counter is
/// missing: seed it and run again; nothing changed); -2 stale (the record is
/// at or past this attempt, whose sequence number is then in `extra`'s
/// place; nothing changed); -3 no record of this node and argument 7 is -1
/// (then `extra` holds the µs since the counter was seeded: run again
/// with what the node counted that the seed could not see; nothing changed).
pub const LEASE_LUA: &str = r#"
local now = tonumber(ARGV[12])
if now == 0 then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end
local used = redis.call('GET', KEYS[2])
if not used then
  return {-1, 0, 0, 0, 0, 0, 0, 0}
end
used = tonumber(used)
local seq = tonumber(ARGV[2])
local rec = redis.call('HGET', KEYS[3], ARGV[1])
local rseq, rmin, rmon, radj = 0, 0, 0, nil
if rec then
  local f = {}
  for v in string.gmatch(rec, '%S+') do f[#f + 1] = tonumber(v) end
  rseq, rmin, rmon, radj = f[1], f[2], f[3], f[4]
  if rseq >= seq then
    return {-2, 0, 0, 0, 0, 0, used, rseq}
  end
elseif tonumber(ARGV[7]) < 0 then
  local seeded = redis.call('HGET', KEYS[3], '_seeded')
  local age = 0
  if seeded then
    age = math.max(now - tonumber(seeded), 0)
  end
  return {-3, 0, 0, 0, 0, 0, used, age}
end
local period = 60000000
local limit = math.max(tonumber(ARGV[9]), 1)
local t = math.max(math.floor(period / limit), 1)
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat < now then
  tat = now
end
if rec then
  local umin, umon = 0, 0
  if rseq == tonumber(ARGV[3]) then
    umin, umon = tonumber(ARGV[4]), tonumber(ARGV[5])
  end
  tat = math.max(tat - math.max(rmin - umin, 0) * t, now)
  used = used - math.max(rmon - umon, 0)
end
local adj = tonumber(ARGV[6])
if radj then
  used = used + adj - radj
else
  used = used + tonumber(ARGV[7])
end
used = math.max(used, 0)
local want = tonumber(ARGV[8])
local want_mon = tonumber(ARGV[14])
local nodes = math.max(tonumber(ARGV[11]), 1)
local avail = math.floor((now + period - tat) / t)
local gmin = 0
if want > 0 and avail > 0 then
  gmin = math.min(want, math.max(math.floor(avail / nodes), 1))
end
local left = tonumber(ARGV[10]) - used
local gmon = 0
if want_mon > 0 and left > 0 and gmin > 0 then
  gmon = math.min(want_mon, gmin, math.max(math.floor(left / nodes), 1))
end
tat = tat + gmin * t
if tat > now then
  redis.call('SET', KEYS[1], tat, 'PX', math.max(math.ceil((tat - now) / 1000), 1))
else
  redis.call('DEL', KEYS[1])
end
used = used + gmon
redis.call('SET', KEYS[2], used, 'KEEPTTL')
redis.call('HSET', KEYS[3], ARGV[1], seq .. ' ' .. gmin .. ' ' .. gmon .. ' ' .. adj)
redis.call('EXPIRE', KEYS[3], tonumber(ARGV[13]))
local retry = 0
if avail == 0 then
  retry = tat - now - (period - t)
end
return {1, gmin, gmon, avail - gmin, tat - now, retry, used, 0}
"#;

/// Seeds a month's counter that is missing: `KEYS[1]` the counter,
/// `KEYS[2]` the month's lease records. `ARGV`: the count, its expiry (s),
/// when the count was read (µs on Redis's clock). Only when the
/// counter is still missing (another node may have seeded it meanwhile):
/// sets it, and drops the records of the counter's earlier life (their
/// leases were lost with it), noting the seed as of then.
pub const SEED_LUA: &str = r#"
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('SET', KEYS[1], ARGV[1], 'EX', tonumber(ARGV[2]))
  redis.call('DEL', KEYS[2])
  redis.call('HSET', KEYS[2], '_seeded', ARGV[3])
  redis.call('EXPIRE', KEYS[2], tonumber(ARGV[2]))
  return 1
end
return 0
"#;

/// How a [`SharedLimiter`] reaches Redis and shares the limit without it.
#[derive(Debug, Clone)]
pub struct SharedConfig {
    /// `redis://host:port[/db]` (or `rediss://`, `redis+unix://`).
    pub url: String,
    /// Serving nodes that share the limits: while Redis is away each node
    /// allows `rate_limit_per_minute / nodes` per minute (at least 1); with
    /// Redis, the cap of one node's lease and its fair share.
    pub nodes: u32,
    /// Prefix of every Redis key (`mds`); tests use a random one.
    pub namespace: String,
    /// Longest wait for Redis (connect, or one script) before falling back.
    pub timeout: Duration,
    /// While degraded, how often Redis is tried again.
    pub probe_interval: Duration,
    /// Expiry of a month's counter and lease records, set when it is seeded
    /// (40 days, longer than any month, so it outlives its month and then
    /// goes).
    pub usage_ttl: Duration,
    /// How long a lease admits before what it did not use goes back (1 s):
    /// the longest one node can hold tokens another node is refused for.
    pub lease_ttl: Duration,
    /// Whether the scripts take the time from the node's [`Clock`] instead
    /// of Redis's `TIME`. Only for tests that move time; in production the
    /// nodes' clocks may be skewed and Redis's is the one clock.
    pub caller_time: bool,
}

impl SharedConfig {
    /// Defaults for `url`: one node, namespace `mds`, 1 s timeout (a busy
    /// Redis is slow, not down), a probe every second, counters kept 40
    /// days, leases of 1 s, Redis's clock.
    pub fn new(url: impl Into<String>) -> Self {
        SharedConfig {
            url: url.into(),
            nodes: 1,
            namespace: "mds".to_owned(),
            timeout: Duration::from_secs(1),
            probe_interval: Duration::from_secs(1),
            usage_ttl: Duration::from_secs(40 * 24 * 3600),
            lease_ttl: Duration::from_secs(1),
            caller_time: false,
        }
    }

    /// Sets the number of nodes sharing the limit (at least 1).
    pub fn with_nodes(mut self, nodes: u32) -> Self {
        self.nodes = nodes.max(1);
        self
    }

    /// Sets the namespace of the Redis keys.
    pub fn with_namespace(mut self, namespace: impl Into<String>) -> Self {
        self.namespace = namespace.into();
        self
    }

    /// Sets the timeout of each Redis call.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Sets how often Redis is tried again while degraded.
    pub fn with_probe_interval(mut self, interval: Duration) -> Self {
        self.probe_interval = interval;
        self
    }

    /// Sets how long a lease admits (at least 1 ms).
    pub fn with_lease_ttl(mut self, ttl: Duration) -> Self {
        self.lease_ttl = ttl.max(Duration::from_millis(1));
        self
    }

    /// Takes the time from the node's clock instead of Redis's (tests).
    pub fn with_caller_time(mut self) -> Self {
        self.caller_time = true;
        self
    }
}

/// A Redis URL that cannot be used (a bad scheme, host or port).
#[derive(Debug)]
pub struct SharedConfigError(String);

impl std::fmt::Display for SharedConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "invalid Redis URL: {}", self.0)
    }
}

impl std::error::Error for SharedConfigError {}

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
}

#[derive(Debug, Default)]
struct Counters {
    redis_admitted: AtomicU64,
    redis_refused_minute: AtomicU64,
    redis_refused_month: AtomicU64,
    local_admitted: AtomicU64,
    local_refused: AtomicU64,
    lease_calls: AtomicU64,
    redis_errors: AtomicU64,
    seeds: AtomicU64,
    fallbacks: AtomicU64,
}

fn bump(c: &AtomicU64) {
    c.fetch_add(1, Ordering::Relaxed);
}

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
    /// The record's sequence (status -2), or the µs since the counter was
    /// seeded (status -3).
    extra: i64,
}

/// A Redis connection (shared, multiplexed, reconnecting by itself).
#[derive(Clone)]
struct Conn(ConnectionManager);

impl std::fmt::Debug for Conn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ConnectionManager")
    }
}

/// Refused until a time, without asking Redis again before it.
#[derive(Debug, Clone, Copy)]
struct Blocked {
    until: Duration,
    /// When Redis's minute allows one more (its `retry`), and is full.
    retry_at: Duration,
    reset_at: Duration,
    month: BillingMonth,
    limits: Limits,
    minute: bool,
    month_spent: bool,
    minute_remaining: u64,
    counter: u64,
}

/// One key's leasing on this node.
#[derive(Debug, Default)]
struct LeaseState {
    /// The last attempt's sequence number.
    seq: u64,
    /// The lease admitting now, if any.
    held: Option<Held>,
    /// A lease that ended but Redis has not been told how much of it was
    /// spent (the script that would have said so failed).
    ended: Option<Held>,
    /// The next lease's size.
    size: u64,
    /// Requests counted outside leases this month (running total), and the
    /// total Redis has acknowledged.
    adj: i64,
    adj_acked: i64,
    adj_month: Option<BillingMonth>,
    blocked: Option<Blocked>,
    /// The limits of the last lease asked for (what a lease given back was
    /// taken under).
    limits: Option<Limits>,
}

/// One key's lease, and the lock that lets one request at a time renew it.
#[derive(Debug, Default)]
pub(crate) struct KeyLease {
    state: Mutex<LeaseState>,
    renewing: tokio::sync::Mutex<()>,
}

impl KeyLease {
    fn lock(&self) -> MutexGuard<'_, LeaseState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A released request (a `304`, a `5xx`) given back: into the lease it
/// came from while that lease admits, else onto the node's running total,
/// which the next script carries to Redis. Never a network call.
#[derive(Debug)]
pub(crate) struct Release {
    lease: Arc<KeyLease>,
    /// The lease it was admitted from; `None` when admitted locally.
    seq: Option<u64>,
    month: BillingMonth,
}

impl Release {
    /// Gives the request back.
    pub(crate) fn apply(self) {
        let mut s = self.lease.lock();
        if let (Some(seq), Some(h)) = (self.seq, s.held.as_mut()) {
            if h.seq == seq && h.mon.used > 0 {
                h.mon.used -= 1;
                return;
            }
        }
        if s.adj_month == Some(self.month) {
            s.adj -= 1;
        }
    }
}

/// The per-minute limit and monthly quota of all nodes together, leased
/// from Redis, with the node's own [`Limiter`] as the fallback.
///
/// Build one per node from the node's meter and clock
/// ([`SharedLimiter::connect`]), call [`SharedLimiter::admit`] where
/// [`Limiter::admit`] was called, and settle the ticket the same way. Call
/// [`SharedLimiter::sweep`] every lease TTL or so, and
/// [`SharedLimiter::give_back`] at shutdown.
#[derive(Debug)]
pub struct SharedLimiter {
    config: SharedConfig,
    client: redis::Client,
    conn: Mutex<Option<Conn>>,
    local: Limiter,
    lease_script: Script,
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
            node_id: format!("{:016x}", rand::random::<u64>()),
            leases: RwLock::new(HashMap::new()),
            degraded: AtomicBool::new(false),
            next_probe: Mutex::new(Instant::now()),
            counters: Counters::default(),
            config: SharedConfig { nodes: config.nodes.max(1), ..config },
        };
        if let Err(e) = limiter.connection().await {
            limiter.fell_back(&e);
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
        }
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
        self.admit_local(store, &lease, ask).await
    }

    /// Gives back the leases that ended and carries requests counted outside
    /// leases to Redis, for keys that went quiet (an active key does both
    /// when it takes its next lease). Run it every
    /// [`SharedLimiter::sweep_interval`].
    pub async fn sweep(&self, store: &dyn UsageStore) {
        if self.is_degraded() {
            return;
        }
        let now = self.local.clock().elapsed();
        let due: Vec<(KeyPrefix, Arc<KeyLease>)> = self
            .leases
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .filter(|(_, l)| {
                let s = l.lock();
                // A spent lease has nothing to give back: the next lease
                // settles it.
                let holds = |h: Held| h.min.left() > 0 || h.mon.left() > 0;
                s.held.is_some_and(|h| holds(h) && !h.live(now)) || s.ended.is_some() || s.adj != s.adj_acked
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
        let fut = get.query_async::<Option<u64>>(&mut conn);
        tokio::time::timeout(self.config.timeout, fut).await.ok()?.ok()?
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

    /// The decision the key's lease (or its standing refusal) gives without
    /// Redis, if it gives one.
    fn admit_from_lease(&self, lease: &Arc<KeyLease>, ask: Ask<'_>) -> Option<Decision> {
        let Ask { limits, charge, .. } = ask;
        let counts = charge != Charge::Free;
        let clock = self.local.clock();
        let (now, mono) = (clock.now(), clock.elapsed());
        let month = BillingMonth::of(now);
        let mut s = lease.lock();
        let size = s.size;
        let standing = s.blocked.filter(|b| b.until > mono);
        if let Some(h) = s.held.as_mut() {
            if h.month == month && h.limits == limits && h.live(mono) {
                if h.take(counts) {
                    let h = *h;
                    drop(s);
                    return Some(self.admitted(ask, lease, &h, now, mono));
                }
                // Spent, and Redis had nothing left: refused here, without
                // asking Redis, until a lease of this size has refilled (at
                // most [`SharedLimiter::minute_wait`]).
                if let Some((retry_at, ready_at)) = h.refill(size) {
                    let until = ready_at.min(mono + self.minute_wait());
                    if mono < retry_at.max(until) && standing.is_none() {
                        let h = *h;
                        s.blocked = Some(Blocked {
                            until,
                            retry_at,
                            reset_at: h.taken_at + Duration::from_micros(u64::try_from(h.reset_us).unwrap_or(0)),
                            month,
                            limits,
                            minute: true,
                            month_spent: false,
                            minute_remaining: 0,
                            counter: h.month_used(),
                        });
                    }
                }
            }
        }
        let b = s.blocked?;
        if mono >= b.until || b.month != month || b.limits != limits || !(b.minute || (counts && b.month_spent)) {
            return None;
        }
        drop(s);
        Some(self.refused(&b, limits, counts, now, mono))
    }

    /// An admitted request from lease `h` (already taken from it).
    fn admitted(&self, ask: Ask<'_>, lease: &Arc<KeyLease>, h: &Held, now: DateTime<Utc>, mono: Duration) -> Decision {
        let Ask { key, limits, charge } = ask;
        bump(&self.counters.redis_admitted);
        let used = h.month_used();
        let state = self.local.meter().key_state(key);
        meter::record_shared(&mut state.lock(), h.month, used, charge != Charge::Free);
        let ticket = match charge {
            Charge::Counted(route) => {
                let release = Release { lease: lease.clone(), seq: Some(h.seq), month: h.month };
                Some(Ticket::new(state, h.month, now.date_naive(), route, Some(release)))
            }
            Charge::Free => None,
        };
        let minute = MinuteStanding { remaining: h.minute_remaining(), reset_ns: h.reset_ns(mono), retry_ns: 0 };
        Decision::assemble(limits, BillingMonth::seconds_until_next(now), minute, used, Vec::new(), ticket)
    }

    /// A refused request, standing refusal `b`.
    fn refused(&self, b: &Blocked, limits: Limits, counts: bool, now: DateTime<Utc>, mono: Duration) -> Decision {
        let mut violated = Vec::new();
        if b.minute {
            violated.push(Policy::Minute);
            bump(&self.counters.redis_refused_minute);
        }
        if counts && b.month_spent {
            violated.push(Policy::Month);
            if !b.minute {
                bump(&self.counters.redis_refused_month);
            }
        }
        let ns = |at: Duration| i64::try_from(at.saturating_sub(mono).as_nanos()).unwrap_or(i64::MAX);
        let minute = MinuteStanding {
            remaining: b.minute_remaining,
            reset_ns: ns(b.reset_at),
            retry_ns: ns(b.retry_at.max(b.until)),
        };
        Decision::assemble(limits, BillingMonth::seconds_until_next(now), minute, b.counter, violated, None)
    }

    /// Ends the key's lease (if any), gives back what it did not use, and
    /// takes a new one for this request; decides the request from it.
    async fn renew(&self, store: &dyn UsageStore, lease: &Arc<KeyLease>, ask: Ask<'_>) -> Result<Decision, Failure> {
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
            drop(s);
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
    async fn settle(
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
            // node, so one carrying the running total ends the held lease
            // too.
            let carry = s.adj != s.adj_acked;
            if let Some(h) = s.held.filter(|h| all || carry || !h.live(mono)) {
                s.held = None;
                if h.min.granted > 0 {
                    let spent = h.min.spent_out();
                    s.size = lease::next_size(&h, s.size, spent, u64::MAX).min(s.size.max(1));
                }
                s.ended = Some(h);
            }
            match (s.ended, s.adj_month) {
                (Some(h), _) => h.month,
                (None, Some(m)) if s.adj != s.adj_acked => m,
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
        // When the counter was seeded, once Redis says it has no record of
        // this node: what to add is then counted as the script is sent.
        let mut seeded_at: Option<Instant> = None;
        for _ in 0..5 {
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
                // the store yet, or written there after the seed.
                let meter = self.local.meter();
                let if_new = seeded_at.map_or(-1, |at| {
                    let n = meter.not_in_store(key, month) + meter.flushed_since(key, month, at);
                    i64::try_from(n).unwrap_or(i64::MAX)
                });
                let args: [i64; 13] = [
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
                ];
                (s.seq, args)
            };
            bump(&self.counters.lease_calls);
            let a = self.eval(&mut conn, &keys, &args).await?;
            match a.status {
                1 => {
                    let mut s = lease.lock();
                    if s.ended.is_some_and(|h| h.month == month) {
                        s.ended = None;
                    }
                    s.adj_acked = args[4];
                    debug_assert_eq!(s.seq, seq);
                    return Ok(a);
                }
                -1 => self.seed(store, &mut conn, key, month, &keys).await?,
                -3 => {
                    // A counter seeded since this node last wrote to it (or
                    // never written by it).
                    let age = Duration::from_micros(u64::try_from(a.extra).unwrap_or(0));
                    seeded_at = Some(Instant::now().checked_sub(age).unwrap_or_else(Instant::now));
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
        // The seed is as of before the read: what the store takes after
        // this instant, nodes add themselves.
        let read_at = match self.now_us() {
            0 => {
                let (secs, us): (i64, i64) = self.timed(redis::cmd("TIME").query_async(conn)).await?;
                secs * 1_000_000 + us
            }
            caller => caller,
        };
        let stored: u64 = store.usage(key, month, month).await?.iter().map(|(_, n)| n).sum();
        let mut seed = redis::cmd("EVAL");
        seed.arg(SEED_LUA)
            .arg(2)
            .arg(&keys[1])
            .arg(&keys[2])
            .arg(stored)
            .arg(self.config.usage_ttl.as_secs().max(1))
            .arg(read_at);
        if self.timed(seed.query_async::<i64>(conn)).await? == 1 {
            bump(&self.counters.seeds);
        }
        Ok(())
    }

    /// The time the scripts are told (µs since the epoch), or 0 for
    /// Redis's own `TIME`.
    fn now_us(&self) -> i64 {
        match self.config.caller_time {
            true => self.local.clock().now().timestamp_micros().max(1),
            false => 0,
        }
    }

    /// Whether this request goes to Redis: always when healthy; while
    /// degraded, one request per probe interval.
    fn should_try_redis(&self) -> bool {
        if !self.is_degraded() {
            return true;
        }
        let mut next = self.next_probe.lock().unwrap_or_else(PoisonError::into_inner);
        let now = Instant::now();
        if now >= *next {
            *next = now + self.config.probe_interval;
            true
        } else {
            false
        }
    }

    fn fell_back(&self, e: &RedisError) {
        bump(&self.counters.redis_errors);
        *self.next_probe.lock().unwrap_or_else(PoisonError::into_inner) = Instant::now() + self.config.probe_interval;
        if !self.degraded.swap(true, Ordering::Relaxed) {
            bump(&self.counters.fallbacks);
            tracing::warn!(
                error = %e,
                nodes = self.config.nodes,
                "Redis unavailable: limiting locally, each node allowing 1/{} of the per-minute limit and checking the quota against its own count",
                self.config.nodes
            );
        }
    }

    fn came_back(&self) {
        if self.degraded.swap(false, Ordering::Relaxed) {
            tracing::info!("Redis is back: limits are shared across nodes again");
        }
    }

    /// The connection, made on first use (or after a failed start).
    async fn connection(&self) -> Result<ConnectionManager, RedisError> {
        if let Some(c) = self.conn.lock().unwrap_or_else(PoisonError::into_inner).clone() {
            return Ok(c.0);
        }
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(self.config.timeout)
            .set_response_timeout(self.config.timeout)
            .set_number_of_retries(1)
            .set_max_delay(100);
        let c = self.timed(ConnectionManager::new_with_config(self.client.clone(), config)).await?;
        let mut slot = self.conn.lock().unwrap_or_else(PoisonError::into_inner);
        Ok(slot.get_or_insert(Conn(c)).0.clone())
    }

    /// `fut` within the timeout, a timeout being a Redis error like any other.
    async fn timed<T>(&self, fut: impl Future<Output = Result<T, RedisError>>) -> Result<T, RedisError> {
        match tokio::time::timeout(self.config.timeout, fut).await {
            Ok(r) => r,
            Err(_) => Err(RedisError::from((ErrorKind::IoError, "Redis did not answer in time"))),
        }
    }

    /// Runs the lease script: `EVALSHA`, or `EVAL` when Redis lacks it.
    async fn eval(
        &self,
        conn: &mut ConnectionManager,
        keys: &[String; 3],
        args: &[i64; 13],
    ) -> Result<Answer, RedisError> {
        let mut evalsha = redis::cmd("EVALSHA");
        evalsha.arg(self.lease_script.get_hash()).arg(3).arg(&keys[..]).arg(&self.node_id).arg(&args[..]);
        let raw: Vec<i64> = match self.timed(evalsha.query_async(conn)).await {
            Err(e) if e.kind() == ErrorKind::NoScriptError => {
                let mut eval = redis::cmd("EVAL");
                eval.arg(LEASE_LUA).arg(3).arg(&keys[..]).arg(&self.node_id).arg(&args[..]);
                self.timed(eval.query_async(conn)).await?
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

    /// The node's own decision, with its share of the per-minute limit; a
    /// counted admission is added to the running total Redis is told of.
    async fn admit_local(&self, store: &dyn UsageStore, lease: &Arc<KeyLease>, ask: Ask<'_>) -> StoreResult<Decision> {
        let limits = Limits {
            rate_limit_per_minute: (ask.limits.rate_limit_per_minute / self.config.nodes).max(1),
            monthly_quota: ask.limits.monthly_quota,
        };
        let mut d = self.local.admit(store, Ask { limits, ..ask }).await?;
        if d.admitted() {
            bump(&self.counters.local_admitted);
            if let Some(t) = d.ticket.as_mut() {
                let mut s = lease.lock();
                if s.adj_month != Some(t.month) {
                    (s.adj, s.adj_acked, s.adj_month) = (0, 0, Some(t.month));
                }
                s.adj += 1;
                t.release = Some(Release { lease: lease.clone(), seq: None, month: t.month });
            }
        } else {
            bump(&self.counters.local_refused);
        }
        Ok(d)
    }
}
