//! [`SharedLimiter`]: the per-minute limit and the monthly quota enforced
//! across all nodes together, in Redis.
//!
//! # How a request is admitted
//! One atomic Lua script per request, one round trip ([`ADMIT_LUA`], sent as
//! `EVALSHA`, and as `EVAL` when Redis does not know it yet, which also loads
//! it): it runs the GCRA of the key's minute on the TAT stored at
//! `{ns}:gcra:{<prefix>}` (with a `PX` expiry at which the allowance is full
//! again), checks the month's counter `{ns}:usage:{<prefix>}:<yyyymm>`
//! against the quota and, when both pass and the request counts, `INCR`s the
//! counter. It answers allowed / remaining / reset / retry-after / used, from
//! which the same [`Decision`] (the same headers) is built as on one node.
//! The braces are Redis Cluster hash tags: a key's two Redis keys share a
//! slot.
//!
//! The script takes `now` (µs since the epoch) from the caller's [`Clock`],
//! so tests can move time; in production every node's clock must be NTP
//! synchronised, since a node whose clock runs ahead spends the shared
//! minute faster (by its offset, at most).
//!
//! # Redis is the authority, the store the ledger
//! Redis holds the live count of the month; the store stays the durable
//! ledger. A counted request still goes into this node's [`Meter`] (pending
//! counts, flushed in idempotent batches exactly as without Redis), so usage
//! history does not change. When the month's counter is missing (first use,
//! Redis restarted, or evicted) the script answers "unseeded": this node
//! reads the store's count for the month, adds what it has not flushed yet,
//! `SET NX`es the counter to that (expiring after [`SharedConfig::usage_ttl`])
//! and runs the script once more. At steady state (Redis up, counters
//! present) there is no over-admission across nodes: every decision is one
//! atomic script. A reseed cannot see other nodes' unflushed counts, so after
//! Redis loses a counter the nodes may over-admit by at most about one flush
//! interval (1 s) of their traffic for that key. A script that timed out on
//! this side may still run in Redis: that request is then counted in Redis
//! although it was decided locally (an over-count, the safe side).
//!
//! A released request (a `304`) is given back with a `DECR` (only of a
//! counter that exists and is positive), sent in a task of its own.
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
//! by `(nodes − 1) × remaining` per key, and only during the outage.
//!
//! The node logs one warning when it falls back and one info line when Redis
//! answers again; while degraded it tries Redis again at most once per
//! [`SharedConfig::probe_interval`] (the request that probes uses Redis if it
//! answers), not on every request. Requests counted locally meanwhile are
//! added to the shared counter (`INCRBY`, inside the same script) the next
//! time the key is admitted through Redis. [`SharedLimiter::is_degraded`]
//! and [`SharedLimiter::stats`] tell a metrics endpoint where things stand.

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use mds_domain::KeyPrefix;
use mds_domain::usage::BillingMonth;
use mds_store::{StoreError, StoreResult, UsageStore};
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::{ErrorKind, RedisError, Script};

use crate::clock::Clock;
use crate::limiter::{Charge, Decision, Limiter, Limits, MinuteStanding, Policy, Ticket};
use crate::meter::{self, Meter};

/// The admission script. `KEYS[1]`: the GCRA TAT (µs); `KEYS[2]`: the
/// month's counter. `ARGV`: now (µs since the epoch), limit per minute,
/// monthly quota, counts (`1`/`0`), requests this node counted while Redis
/// was away (added to an existing counter first). Answers
/// `{status, minute_ok, month_ok, remaining, reset_us, retry_us, used}` with
/// status 1 admitted, 0 refused, -1 unseeded (the counter is missing: seed it
/// and run again). A refused request changes nothing.
pub const ADMIT_LUA: &str = r#"
local now = tonumber(ARGV[1])
local limit = math.max(tonumber(ARGV[2]), 1)
local quota = tonumber(ARGV[3])
local counts = ARGV[4] == '1'
local debt = tonumber(ARGV[5])
local used = redis.call('GET', KEYS[2])
if not used then
  return {-1, 0, 0, 0, 0, 0, 0}
end
if debt > 0 then
  used = redis.call('INCRBY', KEYS[2], debt)
end
used = tonumber(used)
local period = 60000000
local t = math.max(math.floor(period / limit), 1)
local tau = period - t
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat < now then
  tat = now
end
local minute_ok = (tat - now) <= tau
local month_ok = (not counts) or used < quota
if not minute_ok then
  return {0, 0, month_ok and 1 or 0, 0, tat - now, tat - now - tau, used}
end
local new_tat = tat + t
local remaining = math.max(limit - math.ceil((new_tat - now) / t), 0)
if not month_ok then
  return {0, 1, 0, remaining, new_tat - now, 0, used}
end
redis.call('SET', KEYS[1], new_tat, 'PX', math.max(math.ceil((new_tat - now) / 1000), 1))
if counts then
  used = redis.call('INCR', KEYS[2])
end
return {1, 1, 1, remaining, new_tat - now, 0, used}
"#;

/// Gives one released request back: `DECR` of a counter that exists and is
/// positive (a missing counter is seeded from the store later; it must not
/// come back as `-1`).
const RELEASE_LUA: &str = r#"
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
if n > 0 then
  return redis.call('DECR', KEYS[1])
end
return 0
"#;

/// How a [`SharedLimiter`] reaches Redis and shares the limit without it.
#[derive(Debug, Clone)]
pub struct SharedConfig {
    /// `redis://host:port[/db]` (or `rediss://`, `redis+unix://`).
    pub url: String,
    /// Serving nodes that share the limits: while Redis is away each node
    /// allows `rate_limit_per_minute / nodes` per minute (at least 1).
    pub nodes: u32,
    /// Prefix of every Redis key (`mds`); tests use a random one.
    pub namespace: String,
    /// Longest wait for Redis (connect, or one script) before falling back.
    pub timeout: Duration,
    /// While degraded, how often Redis is tried again.
    pub probe_interval: Duration,
    /// Expiry of a month's counter, set when it is seeded (40 days, longer
    /// than any month, so it outlives its month and then goes).
    pub usage_ttl: Duration,
}

impl SharedConfig {
    /// Defaults for `url`: one node, namespace `mds`, 1 s timeout (a busy Redis is slow, not down), a probe
    /// every second, counters kept 40 days.
    pub fn new(url: impl Into<String>) -> Self {
        SharedConfig {
            url: url.into(),
            nodes: 1,
            namespace: "mds".to_owned(),
            timeout: Duration::from_secs(1),
            probe_interval: Duration::from_secs(1),
            usage_ttl: Duration::from_secs(40 * 24 * 3600),
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
    /// Requests admitted through Redis.
    pub redis_admitted: u64,
    /// Requests Redis refused for the minute (possibly the month too).
    pub redis_refused_minute: u64,
    /// Requests Redis refused for the month only.
    pub redis_refused_month: u64,
    /// Requests admitted locally (degraded).
    pub local_admitted: u64,
    /// Requests refused locally (degraded).
    pub local_refused: u64,
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

/// What the admission script answered.
#[derive(Debug, Clone, Copy)]
struct Answer {
    status: i64,
    minute_ok: bool,
    month_ok: bool,
    remaining: i64,
    reset_us: i64,
    retry_us: i64,
    used: i64,
}

/// A Redis connection (shared, multiplexed, reconnecting by itself).
#[derive(Clone)]
struct Conn(ConnectionManager);

impl std::fmt::Debug for Conn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ConnectionManager")
    }
}

/// A released request to give back to the shared counter (see [`Ticket`]).
#[derive(Debug)]
pub(crate) struct Release {
    conn: Conn,
    script: Arc<Script>,
    key: String,
    timeout: Duration,
}

impl Release {
    /// Sends the `DECR` in a task of its own (nothing without a runtime).
    pub(crate) fn spawn(self) {
        let Ok(rt) = tokio::runtime::Handle::try_current() else { return };
        rt.spawn(async move {
            let mut conn = self.conn.0;
            let invocation = self.script.key(&self.key);
            let fut = invocation.invoke_async::<i64>(&mut conn);
            match tokio::time::timeout(self.timeout, fut).await {
                Ok(Ok(_)) => {}
                Ok(Err(e)) => tracing::debug!(error = %e, "could not release a request in Redis"),
                Err(_) => tracing::debug!("releasing a request in Redis timed out"),
            }
        });
    }
}

/// The per-minute limit and monthly quota of all nodes together, in Redis,
/// with the node's own [`Limiter`] as the fallback.
///
/// Build one per node from the node's meter and clock
/// ([`SharedLimiter::connect`]), call [`SharedLimiter::admit`] where
/// [`Limiter::admit`] was called, and settle the ticket the same way.
#[derive(Debug)]
pub struct SharedLimiter {
    config: SharedConfig,
    client: redis::Client,
    conn: Mutex<Option<Conn>>,
    local: Limiter,
    admit_script: Script,
    release_script: Arc<Script>,
    degraded: AtomicBool,
    next_probe: Mutex<Instant>,
    /// Requests counted locally while degraded, not yet in Redis.
    debt: Mutex<HashMap<(KeyPrefix, BillingMonth), u64>>,
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
            admit_script: Script::new(ADMIT_LUA),
            release_script: Arc::new(Script::new(RELEASE_LUA)),
            degraded: AtomicBool::new(false),
            next_probe: Mutex::new(Instant::now()),
            debt: Mutex::new(HashMap::new()),
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
            redis_errors: get(&c.redis_errors),
            seeds: get(&c.seeds),
            fallbacks: get(&c.fallbacks),
        }
    }

    /// Admits one request of `key` or says why not, like [`Limiter::admit`]
    /// but across all nodes: one script in Redis, or, while Redis is away,
    /// the node's own limiter with its share of the per-minute limit. A
    /// Redis failure is never an error here; a store failure (reading the
    /// count to seed a counter) is.
    pub async fn admit(
        &self,
        store: &dyn UsageStore,
        key: &KeyPrefix,
        limits: Limits,
        charge: Charge,
    ) -> StoreResult<Decision> {
        if self.should_try_redis() {
            match self.admit_shared(store, key, limits, charge).await {
                Ok(d) => {
                    self.came_back();
                    return Ok(d);
                }
                Err(Failure::Store(e)) => return Err(e),
                Err(Failure::Redis(e)) => self.fell_back(&e),
            }
        }
        self.admit_local(store, key, limits, charge).await
    }

    /// The shared count of `key` for `month`, if Redis has one: the live
    /// figure admission decides on (usage reports read the store's ledger
    /// instead, see `mds_node::usage`). `None` when missing or unreachable.
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

    /// Runs the admission script: `EVALSHA`, or `EVAL` when Redis lacks it.
    async fn eval(&self, conn: &mut ConnectionManager, keys: [&str; 2], args: [u64; 5]) -> Result<Answer, RedisError> {
        let mut evalsha = redis::cmd("EVALSHA");
        evalsha.arg(self.admit_script.get_hash()).arg(2).arg(&keys[..]).arg(&args[..]);
        let raw: Vec<i64> = match self.timed(evalsha.query_async(conn)).await {
            Err(e) if e.kind() == ErrorKind::NoScriptError => {
                let mut eval = redis::cmd("EVAL");
                eval.arg(ADMIT_LUA).arg(2).arg(&keys[..]).arg(&args[..]);
                self.timed(eval.query_async(conn)).await?
            }
            r => r?,
        };
        let [status, minute_ok, month_ok, remaining, reset_us, retry_us, used] = raw[..] else {
            return Err(RedisError::from((ErrorKind::TypeError, "unexpected answer of the admission script")));
        };
        Ok(Answer { status, minute_ok: minute_ok == 1, month_ok: month_ok == 1, remaining, reset_us, retry_us, used })
    }

    async fn admit_shared(
        &self,
        store: &dyn UsageStore,
        key: &KeyPrefix,
        limits: Limits,
        charge: Charge,
    ) -> Result<Decision, Failure> {
        let counts = charge != Charge::Free;
        let mut conn = self.connection().await?;
        let now = self.local.clock().now();
        let month = BillingMonth::of(now);
        let now_us = u64::try_from(now.timestamp_micros()).unwrap_or(0);
        let (gk, uk) = (self.gcra_key(key), self.usage_key(key, month));
        let debt = self.debt.lock().unwrap_or_else(PoisonError::into_inner).remove(&(key.clone(), month)).unwrap_or(0);
        let quota = limits.monthly_quota.min(i64::MAX as u64);
        let args = |debt| [now_us, u64::from(limits.rate_limit_per_minute), quota, u64::from(counts), debt];
        let mut answer = match self.eval(&mut conn, [&gk, &uk], args(debt)).await {
            Ok(a) => a,
            Err(e) => {
                if debt > 0 {
                    *self
                        .debt
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .entry((key.clone(), month))
                        .or_default() += debt;
                }
                return Err(e.into());
            }
        };
        if answer.status < 0 {
            // Seeding counts all this node has (flushed or not), the debt included.
            // Unflushed first, then the store: a flush in between is counted twice
            // (over, the safe side), never missed.
            let unflushed = self.local.meter().unflushed(key).get(&month).copied().unwrap_or(0);
            let stored: u64 = store.usage(key, month, month).await?.iter().map(|(_, n)| n).sum();
            let mut set = redis::cmd("SET");
            set.arg(&uk).arg(stored + unflushed).arg("NX").arg("EX").arg(self.config.usage_ttl.as_secs().max(1));
            self.timed(set.query_async::<()>(&mut conn)).await?;
            bump(&self.counters.seeds);
            answer = self.eval(&mut conn, [&gk, &uk], args(0)).await?;
            if answer.status < 0 {
                return Err(
                    RedisError::from((ErrorKind::ResponseError, "the month's counter vanished after seeding")).into()
                );
            }
        }
        Ok(self.decide(key, limits, charge, now, month, answer, conn, uk))
    }

    /// The decision of a script's answer, recorded in the node's meter.
    #[allow(clippy::too_many_arguments)]
    fn decide(
        &self,
        key: &KeyPrefix,
        limits: Limits,
        charge: Charge,
        now: chrono::DateTime<chrono::Utc>,
        month: BillingMonth,
        a: Answer,
        conn: ConnectionManager,
        usage_key: String,
    ) -> Decision {
        let used = a.used.max(0) as u64;
        let admitted = a.status == 1;
        let counts = charge != Charge::Free;
        let state = self.local.meter().key_state(key);
        meter::record_shared(&mut state.lock(), month, used, admitted && counts);
        let until_next_month = BillingMonth::seconds_until_next(now);
        let mut violated = Vec::new();
        if !a.minute_ok {
            violated.push(Policy::Minute);
            bump(&self.counters.redis_refused_minute);
        }
        if !a.month_ok {
            violated.push(Policy::Month);
            if a.minute_ok {
                bump(&self.counters.redis_refused_month);
            }
        }
        if admitted {
            bump(&self.counters.redis_admitted);
        }
        let ticket = match charge {
            Charge::Counted(route) if admitted => {
                let release = Release {
                    conn: Conn(conn),
                    script: self.release_script.clone(),
                    key: usage_key,
                    timeout: self.config.timeout,
                };
                Some(Ticket::new(state.clone(), month, now.date_naive(), route, Some(release)))
            }
            _ => None,
        };
        let minute = MinuteStanding {
            remaining: a.remaining.max(0) as u64,
            reset_ns: a.reset_us.saturating_mul(1000),
            retry_ns: a.retry_us.saturating_mul(1000),
        };
        Decision::assemble(limits, until_next_month, minute, used, violated, ticket)
    }

    /// The node's own decision, with its share of the per-minute limit.
    async fn admit_local(
        &self,
        store: &dyn UsageStore,
        key: &KeyPrefix,
        limits: Limits,
        charge: Charge,
    ) -> StoreResult<Decision> {
        let share = Limits {
            rate_limit_per_minute: (limits.rate_limit_per_minute / self.config.nodes).max(1),
            monthly_quota: limits.monthly_quota,
        };
        let d = self.local.admit(store, key, share, charge).await?;
        if d.admitted() {
            bump(&self.counters.local_admitted);
            if d.ticket.is_some() {
                let month = BillingMonth::of(self.local.clock().now());
                *self.debt.lock().unwrap_or_else(PoisonError::into_inner).entry((key.clone(), month)).or_default() += 1;
            }
        } else {
            bump(&self.counters.local_refused);
        }
        Ok(d)
    }
}
