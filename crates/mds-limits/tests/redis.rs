//! [`SharedLimiter`] against a real Redis (`MDS_TEST_REDIS_URL`, e.g.
//! `redis://127.0.0.1:6379`; each test that needs it says `skipped` and
//! passes when it is unset) and a real SQLite store in a temporary directory.
//! Every test uses a random key namespace, so tests run in parallel on one
//! Redis, and deletes its keys at the end. "Two nodes" are two limiters with
//! their own meters and connections, sharing Redis and the store.
//!
//! The fallback test needs no Redis (it points at a closed port). The
//! recovery tests start a private `redis-server` on a free port (skipped
//! when the binary is missing) so they can pause and restart it without
//! disturbing the other tests.

mod common;

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use mds_domain::usage::BillingMonth;
use mds_domain::{AccountName, Environment, KeyHash, KeyPrefix, TierName};
use mds_limits::{Ask, Charge, Decision, Limits, ManualClock, Meter, Outcome, Policy, SharedConfig, SharedLimiter};
use mds_store::prelude::*;
use mds_store::sqlite::SqliteStore;
use mds_store::{DatabaseUrl, KeyRecord, UsageBatch, UsageDelta};
use mds_testkit::redis::RedisServer;
use tempfile::TempDir;

use common::Answering;

const KEY: &str = "mds_live_t01";

fn redis_url() -> Option<String> {
    match std::env::var("MDS_TEST_REDIS_URL") {
        Ok(u) if !u.trim().is_empty() => Some(u),
        _ => {
            println!("skipped: MDS_TEST_REDIS_URL is not set");
            None
        }
    }
}

fn key() -> KeyPrefix {
    KeyPrefix::parse(KEY).unwrap()
}

fn t0() -> DateTime<Utc> {
    "2026-11-15T12:00:00Z".parse().unwrap()
}

fn nov() -> BillingMonth {
    BillingMonth::of(t0())
}

/// A migrated store holding account `acme` and key [`KEY`], a clock, a
/// random namespace.
struct Env {
    store: SqliteStore,
    _dir: TempDir,
    url: String,
    ns: String,
    clock: Arc<ManualClock>,
}

impl Env {
    /// The environment on the Redis of `MDS_TEST_REDIS_URL`; `None` (the
    /// test skipped) when that is not set.
    async fn start() -> Option<Env> {
        Some(Env::new(&redis_url()?).await)
    }

    /// [`Env::start`], with the limiter of a node that is the only one.
    async fn start_alone() -> Option<(Env, Arc<SharedLimiter>)> {
        let env = Env::start().await?;
        let node = env.node(1).await;
        Some((env, node))
    }

    async fn new(url: &str) -> Env {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::connect(&DatabaseUrl::new(dir.path().join("mds.db").to_str().unwrap())).await.unwrap();
        store.migrate().await.unwrap();
        let acme = AccountName::parse("acme").unwrap();
        store.create_account(&acme, t0()).await.unwrap();
        store
            .create_key(&KeyRecord {
                prefix: key(),
                hash: KeyHash([7; 32]),
                account: acme,
                tier: TierName::parse("pro").unwrap(),
                environment: Environment::Live,
                created_at: "2026-01-01T00:00:00Z".parse().unwrap(),
                revoked_at: None,
                expires_at: None,
            })
            .await
            .unwrap();
        Env {
            store,
            _dir: dir,
            url: url.to_owned(),
            ns: format!("mdstest{:016x}", rand::random::<u64>()),
            clock: Arc::new(ManualClock::new(t0())),
        }
    }

    fn config(&self, nodes: u32) -> SharedConfig {
        SharedConfig {
            namespace: self.ns.clone(),
            nodes,
            probe_interval: Duration::from_millis(50),
            // A call slowed by a loaded machine (the workspace's tests run
            // at once) must not turn into the fallback these tests do not
            // test; the stall test sets its own.
            timeout: Duration::from_secs(10),
            caller_time: true,
            usage_ttl: Duration::from_secs(300), // what a failed test leaves goes soon
            ..SharedConfig::new(self.url.clone())
        }
    }

    /// A node: its own meter and connection.
    async fn node(&self, nodes: u32) -> Arc<SharedLimiter> {
        self.node_with(self.config(nodes)).await
    }

    /// A node with no usage mirror.
    async fn node_without_mirror(&self, nodes: u32) -> Arc<SharedLimiter> {
        self.node_with(SharedConfig { mirror: false, ..self.config(nodes) }).await
    }

    async fn node_with(&self, config: SharedConfig) -> Arc<SharedLimiter> {
        Arc::new(SharedLimiter::connect(config, Arc::new(Meter::new()), self.clock.clone()).await.unwrap())
    }

    async fn redis(&self) -> redis::aio::MultiplexedConnection {
        redis::Client::open(self.url.as_str()).unwrap().get_multiplexed_async_connection().await.unwrap()
    }

    async fn counter(&self, l: &SharedLimiter) -> Option<u64> {
        redis::cmd("GET").arg(l.usage_key(&key(), nov())).query_async(&mut self.redis().await).await.unwrap()
    }

    async fn del_counter(&self, l: &SharedLimiter) {
        redis::cmd("DEL").arg(l.usage_key(&key(), nov())).query_async::<()>(&mut self.redis().await).await.unwrap();
    }

    async fn stored(&self) -> u64 {
        self.store.usage(&key(), nov(), nov()).await.unwrap().iter().map(|(_, n)| n).sum()
    }

    /// Deletes every key of the namespace.
    async fn cleanup(&self) {
        let mut c = self.redis().await;
        let keys: Vec<String> = redis::cmd("KEYS").arg(format!("{}:*", self.ns)).query_async(&mut c).await.unwrap();
        if !keys.is_empty() {
            redis::cmd("DEL").arg(keys).query_async::<()>(&mut c).await.unwrap();
        }
    }
}

async fn admit(l: &SharedLimiter, store: &SqliteStore, limits: Limits, counts: bool) -> Decision {
    let charge = if counts { Charge::Counted("/v1/companies") } else { Charge::Free };
    l.admit(store, Ask { key: &key(), limits, charge }).await.unwrap()
}

/// Moves the clock on by `d` in steps of a quarter of a lease TTL (1 s),
/// every node sweeping after each, as live nodes do: none of their lease
/// records looks like a dead node's.
async fn live_for(env: &Env, nodes: &[&SharedLimiter], d: chrono::Duration) {
    let step = chrono::Duration::milliseconds(250);
    let mut moved = chrono::Duration::zero();
    while moved < d {
        env.clock.advance(step);
        moved += step;
        for n in nodes {
            n.sweep(&env.store).await;
        }
    }
}

fn limits(rate_limit_per_minute: u32, monthly_quota: u64) -> Limits {
    Limits { rate_limit_per_minute, monthly_quota }
}

#[tokio::test]
async fn a_burst_over_two_nodes_admits_exactly_the_minute_limit() {
    let Some(env) = Env::start().await else { return };
    let (a, b) = (env.node(2).await, env.node(2).await);
    let l = limits(10, 1_000);
    let mut admitted = 0;
    for i in 0..30 {
        let d = admit(if i % 2 == 0 { &a } else { &b }, &env.store, l, true).await;
        if d.admitted() {
            admitted += 1;
            d.hold.unwrap().settle(Outcome::Counted);
        } else {
            assert_eq!(d.violated, vec![Policy::Minute]);
            assert_eq!(d.retry_after_secs, 6, "one request every 6 s");
            assert_eq!(d.minute.remaining, 0);
        }
    }
    assert_eq!(admitted, 10);
    assert!(!a.is_degraded() && !b.is_degraded());
    // 6 s refill exactly one request, whichever node asks.
    live_for(&env, &[&a, &b], chrono::Duration::seconds(6)).await;
    assert!(admit(&b, &env.store, l, true).await.admitted());
    assert!(!admit(&a, &env.store, l, true).await.admitted());
    // Usage reads take from the minute too, and are refused with it.
    assert_eq!(admit(&a, &env.store, l, false).await.violated, vec![Policy::Minute]);
    let (sa, sb) = (a.stats(), b.stats());
    assert_eq!(sa.redis_admitted + sb.redis_admitted, 11);
    assert_eq!(sa.redis_refused_minute + sb.redis_refused_minute, 22);
    assert_eq!(sa.seeds + sb.seeds, 1, "one node seeded the month, the other found it");
    env.cleanup().await;
}

#[tokio::test]
async fn concurrent_requests_on_two_nodes_never_exceed_the_quota() {
    let Some(env) = Env::start().await.map(Arc::new) else { return };
    let nodes = [env.node(2).await, env.node(2).await];
    let l = limits(1_000_000, 50);
    let mut tasks = Vec::new();
    for i in 0..200 {
        let (node, env) = (nodes[i % 2].clone(), env.clone());
        tasks.push(tokio::spawn(async move {
            let d = admit(&node, &env.store, l, true).await;
            let ok = d.admitted();
            if let Some(t) = d.hold {
                t.settle(Outcome::Counted);
            } else {
                assert!(!ok);
                assert_eq!(d.violated, vec![Policy::Month]);
                assert_eq!(d.month.remaining, 0);
            }
            ok
        }));
    }
    let mut admitted = 0;
    for t in tasks {
        admitted += u32::from(t.await.unwrap());
    }
    assert_eq!(admitted, 50, "zero over-admission across nodes");
    for n in &nodes {
        n.give_back(&env.store).await;
    }
    assert_eq!(env.counter(&nodes[0]).await, Some(50), "spent, with no lease left out");
    // The store stays the ledger: both meters flush exactly what was admitted.
    for n in &nodes {
        n.local().meter().flush(&env.store).await.unwrap();
    }
    assert_eq!(env.stored().await, 50);
    // Usage reads still pass (they take only from the minute).
    assert!(admit(&nodes[1], &env.store, l, false).await.admitted());
    env.cleanup().await;
}

#[tokio::test]
async fn a_missing_counter_is_seeded_from_the_store_and_what_is_unflushed() {
    let Some(env) = Env::start().await else { return };
    let batch = UsageBatch {
        id: "old:1".into(),
        deltas: vec![UsageDelta::counted(key(), nov().first_day(), "/v1/companies", 40)],
    };
    env.store.apply_usage(&batch).await.unwrap();
    let a = env.node(1).await;
    let l = limits(1_000, 50);
    let d = admit(&a, &env.store, l, true).await;
    assert_eq!(d.month.remaining, 9, "40 stored + this one");
    d.hold.unwrap().settle(Outcome::Counted);
    for _ in 0..4 {
        admit(&a, &env.store, l, true).await.hold.unwrap().settle(Outcome::Counted);
    }
    assert!(env.counter(&a).await.unwrap() >= 45, "spent plus leased");
    a.give_back(&env.store).await;
    assert_eq!(env.counter(&a).await, Some(45), "the unspent part of the lease is back");

    // Redis lost the counter; this node has 5 not yet flushed.
    env.del_counter(&a).await;
    let d = admit(&a, &env.store, l, true).await;
    assert_eq!(d.month.remaining, 4, "40 stored + 5 unflushed + this one");
    d.hold.unwrap().settle(Outcome::Counted);
    assert_eq!(a.stats().seeds, 2);

    // Flushed, its lease given back, lost again, and a fresh node
    // (nothing unflushed) seeds it. (A lease still held would be reserved
    // by the seed: `a_reseed_keeps_what_live_nodes_hold_and_have_not_flushed`.)
    a.local().meter().flush(&env.store).await.unwrap();
    assert_eq!(env.stored().await, 46);
    a.give_back(&env.store).await;
    env.del_counter(&a).await;
    let b = env.node(1).await;
    let d = admit(&b, &env.store, l, true).await;
    assert_eq!(d.month.remaining, 3);
    b.give_back(&env.store).await;
    assert_eq!(env.counter(&b).await, Some(47));
    env.cleanup().await;
}

#[tokio::test]
async fn a_304_gives_the_request_back() {
    let Some((env, a)) = Env::start_alone().await else { return };
    let l = limits(1_000, 2);
    let d = admit(&a, &env.store, l, true).await;
    assert_eq!(d.month.remaining, 1);
    d.hold.unwrap().settle(Outcome::NotModified);
    a.give_back(&env.store).await;
    assert_eq!(env.counter(&a).await, Some(0), "the release reached Redis with the lease");
    assert_eq!(a.local().meter().backlog(), 0, "a 304 is not metered");
    for remaining in [1, 0] {
        let d = admit(&a, &env.store, l, true).await;
        assert_eq!(d.month.remaining, remaining);
        d.hold.unwrap().settle(Outcome::Counted);
    }
    assert_eq!(admit(&a, &env.store, l, true).await.violated, vec![Policy::Month]);
    assert_eq!(a.local().meter().backlog(), 2);
    a.give_back(&env.store).await;
    assert_eq!(a.shared_used(&key(), nov()).await, Some(2));
    env.cleanup().await;
}

#[tokio::test]
async fn unreachable_redis_falls_back_to_a_share_of_the_limit() {
    // Needs no Redis: nothing listens on port 1.
    let env = Env::new("redis://127.0.0.1:1").await;
    let a = env.node(2).await;
    assert!(a.is_degraded(), "a failed start is degraded, not an error");
    let l = limits(10, 1_000);
    let mut admitted = 0;
    for _ in 0..10 {
        let d = admit(&a, &env.store, l, true).await;
        if let Some(t) = d.hold {
            admitted += 1;
            t.settle(Outcome::Counted);
        } else {
            assert_eq!(d.violated, vec![Policy::Minute]);
            assert_eq!(d.minute.limit, 5, "the node's share is reported");
        }
    }
    assert_eq!(admitted, 5, "10 per minute over 2 nodes");
    // The quota is still checked against what the node knows.
    let q = limits(1_000, 7);
    env.clock.advance(chrono::Duration::minutes(5));
    let mut more = 0;
    for _ in 0..5 {
        if admit(&a, &env.store, q, true).await.admitted() {
            more += 1;
        }
    }
    assert_eq!(more, 2);
    let s = a.stats();
    assert!(s.degraded);
    assert_eq!((s.local_admitted, s.local_refused, s.fallbacks), (7, 8, 1));
    assert!(s.redis_errors >= 1);
    assert_eq!(a.shared_used(&key(), nov()).await, None);
    // Counts are metered as usual.
    a.local().meter().flush(&env.store).await.unwrap();
    assert_eq!(env.stored().await, 7);
}

#[tokio::test]
async fn back_to_redis_after_a_pause_and_after_a_restart() {
    if redis_url().is_none() {
        return;
    }
    let Some(server) = RedisServer::start() else {
        println!("skipped: cannot start redis-server");
        return;
    };
    let port = server.port;
    let env = Env::new(&server.url()).await;
    // A timeout well under the 700 ms pause below, so the pause reads as an outage.
    let config = SharedConfig { timeout: Duration::from_millis(250), ..env.config(2) };
    let a = Arc::new(SharedLimiter::connect(config, Arc::new(Meter::new()), env.clock.clone()).await.unwrap());
    let l = limits(1_000, 1_000);
    for _ in 0..3 {
        admit(&a, &env.store, l, true).await.hold.unwrap().settle(Outcome::Counted);
    }
    assert!(!a.is_degraded());
    a.give_back(&env.store).await;
    assert_eq!(env.counter(&a).await, Some(3));
    let lease_ttl = chrono::Duration::seconds(2);

    // Redis stops answering (but keeps its data): the node falls back.
    redis::cmd("CLIENT").arg("PAUSE").arg(700).query_async::<()>(&mut env.redis().await).await.unwrap();
    for _ in 0..2 {
        let d = admit(&a, &env.store, l, true).await;
        assert!(d.admitted());
        d.hold.unwrap().settle(Outcome::Counted);
    }
    assert!(a.is_degraded());
    assert_eq!(a.stats().local_admitted, 2);
    tokio::time::sleep(Duration::from_millis(900)).await;
    // Back: what was counted locally is added to the shared counter once.
    // The script that timed out ran when the pause ended (Redis had it
    // queued) and took a lease this node never heard of: the next script
    // gives it back whole.
    env.clock.advance(lease_ttl);
    let d = admit(&a, &env.store, l, true).await;
    assert!(!a.is_degraded());
    assert_eq!(1_000 - d.month.remaining, 6, "3 + 2 local + this one, nothing twice");
    d.hold.unwrap().settle(Outcome::Counted);
    a.give_back(&env.store).await;
    assert_eq!(env.counter(&a).await, Some(6));

    // Redis restarts empty: fallback meanwhile, then a seed from the store
    // plus what this node has not flushed.
    drop(server);
    env.clock.advance(lease_ttl);
    assert!(admit(&a, &env.store, l, true).await.admitted());
    assert!(a.is_degraded());
    a.local().meter().flush(&env.store).await.unwrap();
    assert_eq!(env.stored().await, 7);
    let _server = RedisServer::start_on(port).expect("restart");
    let mut requests = 7;
    let mut back = false;
    for _ in 0..100 {
        let d = admit(&a, &env.store, l, true).await;
        assert!(d.admitted());
        requests += 1;
        if !a.is_degraded() {
            assert_eq!(d.month.remaining, 1_000 - requests, "seeded with every request made");
            back = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(back, "Redis is used again once it answers");
    let s = a.stats();
    assert_eq!(s.fallbacks, 2);
    assert!(s.seeds >= 2);
}

/// Bursts and gaps, deterministic: the requests' offsets (ms), `n` of
/// them, with gaps drawn from `gaps`.
fn schedule(n: u64, gaps: &'static [i64]) -> impl Iterator<Item = i64> {
    (0..n).scan(0i64, move |ms, i| {
        *ms += gaps[(i * 7 % gaps.len() as u64) as usize];
        Some(*ms)
    })
}

#[tokio::test]
async fn leases_of_one_take_the_same_decisions_as_the_local_gcra() {
    let Some((env, a)) = Env::start_alone().await else { return };
    let start = t0();
    // Limits under 60 a minute get leases of one (1 s leases, one node).
    for limit in [1u32, 10, 59] {
        // A fresh key state per limit: a namespace per limit.
        let a = Arc::new(
            SharedLimiter::connect(
                SharedConfig { namespace: format!("{}:{limit}", env.ns), ..env.config(1) },
                Arc::new(Meter::new()),
                env.clock.clone(),
            )
            .await
            .unwrap(),
        );
        let mut tat = None;
        for (i, ms) in schedule(300, &[0, 0, 7, 130, 999, 4_321]).enumerate() {
            let now = start + chrono::Duration::milliseconds(ms);
            env.clock.set(now);
            let want = mds_limits::gcra::check(tat, now.timestamp_nanos_opt().unwrap(), limit);
            let got = admit(&a, &env.store, limits(limit, u64::MAX), false).await;
            assert_eq!(got.admitted(), want.allowed, "limit {limit}, request {i} at {ms} ms");
            assert_eq!(got.minute.remaining, u64::from(want.remaining), "limit {limit}, request {i}");
            if want.allowed {
                tat = Some(want.new_tat_ns);
            } else {
                assert_eq!(got.retry_after_secs, (want.retry_after_ns as u64).div_ceil(1_000_000_000).max(1));
            }
        }
        let mut c = env.redis().await;
        let keys: Vec<String> =
            redis::cmd("KEYS").arg(format!("{}:{limit}:*", env.ns)).query_async(&mut c).await.unwrap();
        redis::cmd("DEL").arg(keys).query_async::<()>(&mut c).await.unwrap();
    }
    drop(a);
    env.cleanup().await;
}

#[tokio::test]
async fn larger_leases_admit_at_most_one_lease_more_than_the_gcra_would() {
    let Some(env) = Env::start().await else { return };
    let start = t0();
    for limit in [60u32, 600, 1_000] {
        let a = SharedLimiter::connect(
            SharedConfig { namespace: format!("{}:{limit}", env.ns), ..env.config(1) },
            Arc::new(Meter::new()),
            env.clock.clone(),
        )
        .await
        .unwrap();
        let (mut tat, mut gcra, mut leased, mut over) = (None, 0u32, 0u32, 0u32);
        // A lease's tokens were taken when it began; spent later, they may
        // come on top of a minute that refilled meanwhile (see lease.rs).
        let one_lease = (2 * limit / 60).max(1);
        // Bursts far over the limit, then quiet spells.
        for (i, ms) in schedule(3_000, &[0, 0, 1, 3, 0, 20, 0, 0, 450, 1]).enumerate() {
            let now = start + chrono::Duration::milliseconds(ms);
            env.clock.set(now);
            let want = mds_limits::gcra::check(tat, now.timestamp_nanos_opt().unwrap(), limit);
            if want.allowed {
                tat = Some(want.new_tat_ns);
                gcra += 1;
            }
            leased += u32::from(admit(&a, &env.store, limits(limit, u64::MAX), false).await.admitted());
            // A GCRA admitting every request it can admits the most by any
            // time, but for what a lease holds.
            assert!(leased <= gcra + one_lease, "limit {limit}, request {i}: {leased} leased > {gcra} + {one_lease}");
            over = over.max(leased.saturating_sub(gcra));
        }
        println!("limit {limit}: {leased} admitted from leases, {gcra} by the GCRA alone, at most {over} ahead");
        assert!(leased * 10 >= gcra * 9, "limit {limit}: leases refused too many ({leased} of {gcra})");
    }
    env.cleanup().await;
}

#[tokio::test]
async fn a_node_holding_unused_tokens_refuses_another_for_at_most_a_lease() {
    let Some(env) = Env::start().await else { return };
    let clock: Arc<dyn mds_limits::Clock> = Arc::new(mds_limits::SystemClock);
    let ttl = Duration::from_secs(1);
    let node = || async {
        let config = SharedConfig { caller_time: false, lease_ttl: ttl, ..env.config(2) };
        Arc::new(SharedLimiter::connect(config, Arc::new(Meter::new()), clock.clone()).await.unwrap())
    };
    let (a, b) = (node().await, node().await);
    // The nodes' sweeps, as `mds serve` runs them.
    let sweeps: Vec<_> = [a.clone(), b.clone()]
        .into_iter()
        .map(|n| {
            let store = env.store.clone();
            tokio::spawn(async move {
                loop {
                    tokio::time::sleep(n.sweep_interval()).await;
                    n.sweep(&store).await;
                }
            })
        })
        .collect();
    // A's leases grow while it is busy; it stops with one half spent.
    let open = limits(1_000_000, 1_000_000);
    for _ in 0..40 {
        admit(&a, &env.store, open, true).await.hold.unwrap().settle(Outcome::Counted);
    }
    let reserved = a.shared_used(&key(), BillingMonth::of(Utc::now())).await.unwrap();
    assert!(reserved > 40, "A holds unspent tokens: {reserved}");
    // The quota (lowered to what is reserved) is all in A's hands: B is
    // refused until A's lease ends and the sweep gives the rest back.
    let tight = limits(1_000_000, reserved);
    let start = std::time::Instant::now();
    let mut refused = 0;
    loop {
        let d = admit(&b, &env.store, tight, true).await;
        if let Some(t) = d.hold {
            t.settle(Outcome::Counted);
            break;
        }
        assert_eq!(d.violated, vec![Policy::Month]);
        refused += 1;
        assert!(start.elapsed() < ttl * 3, "B still refused after {:?}", start.elapsed());
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    println!(
        "early refusal: {refused} refusals over {:?} (lease TTL {ttl:?}, sweep every {:?})",
        start.elapsed(),
        a.sweep_interval()
    );
    for s in sweeps {
        s.abort();
    }
    env.cleanup().await;
}

#[tokio::test]
async fn a_tier_change_ends_the_lease_at_once() {
    let Some((env, a)) = Env::start_alone().await else { return };
    let pro = limits(100_000, 1_000);
    for _ in 0..20 {
        admit(&a, &env.store, pro, true).await.hold.unwrap().settle(Outcome::Counted);
    }
    let leased = a.shared_used(&key(), nov()).await.unwrap();
    assert!(leased > 20, "the node holds a lease: {leased}");
    // Lapsed to a tier of 20 a month: the next request is refused although
    // the lease still held tokens, and they go back.
    let evaluation = limits(100_000, 20);
    let d = admit(&a, &env.store, evaluation, true).await;
    assert_eq!(d.violated, vec![Policy::Month]);
    assert_eq!(d.month.remaining, 0);
    assert_eq!(a.shared_used(&key(), nov()).await, Some(20), "the lease's unspent tokens are back");
    env.cleanup().await;
}

/// `n` counted requests through `node`, each settled as counted, under a
/// limit and quota that admit them all.
async fn count(env: &Env, node: &SharedLimiter, n: usize) {
    for _ in 0..n {
        admit(node, &env.store, limits(1_000_000, 1_000), true).await.hold.unwrap().settle(Outcome::Counted);
    }
}

/// Node `a` pushes its mirror and goes quiet; node `b`, its own mirror
/// live, looks every 100 ms for 800 ms (past the stale age) and takes
/// `a`'s over.
async fn quiet_and_taken(env: &Env, a: &SharedLimiter, b: &SharedLimiter) {
    a.mirror_tick().await.unwrap();
    for _ in 0..8 {
        env.clock.advance(chrono::Duration::milliseconds(100));
        b.mirror_tick().await.unwrap();
        b.take_over(&env.store).await;
    }
}

/// Node A mirrors 10 counted requests it has not flushed and stops pushing
/// (dead, or stalled); node B, looking every 100 ms, takes its mirror over
/// once it has gone unpushed for the stale age and gives the store the 10.
/// When A comes back with 5 more, its next flush finds its mirror taken,
/// takes the 10 out and writes the 5 alone: nothing is counted twice, and
/// a second look by B takes nothing.
#[tokio::test]
async fn a_stopped_nodes_mirror_is_taken_over_once_and_nothing_counts_twice() {
    let Some(env) = Env::start().await else { return };
    let (a, b) = (env.node(2).await, env.node(2).await);
    count(&env, &a, 10).await;
    a.mirror_tick().await.unwrap();
    b.mirror_tick().await.unwrap();
    // Not stale yet: nothing taken.
    b.take_over(&env.store).await;
    assert_eq!(env.stored().await, 0);
    quiet_and_taken(&env, &a, &b).await;
    assert_eq!(env.stored().await, 10, "B gave the store A's mirrored counts");
    assert_eq!(b.stats().taken_over, 10);

    count(&env, &a, 5).await;
    a.flush(&env.store).await.unwrap();
    a.flush(&env.store).await.unwrap();
    assert_eq!(env.stored().await, 15, "A wrote only what B did not take");
    assert!(a.local().meter().is_drained());
    for _ in 0..8 {
        env.clock.advance(chrono::Duration::milliseconds(100));
        a.mirror_tick().await.unwrap();
        b.take_over(&env.store).await;
    }
    assert_eq!(env.stored().await, 15);
    assert_eq!(b.stats().taken_over, 10, "A's new mirror is live: nothing more taken");
    env.cleanup().await;
}

/// Node A counts 10 requests from a lease and mirrors them, then stops;
/// node B takes its mirror over (the store has the 10), and B's next lease
/// reclaims A's record, so the counter is seeded again from the store.
/// When A comes back, Redis has no record of it and asks what it counted
/// that the seed lacks: A must first find its mirror taken and take the 10
/// out, or it adds them again and the key is refused 10 requests early.
/// Afterwards the counter is exactly the ledger.
#[tokio::test]
async fn a_node_back_from_a_stall_does_not_count_its_taken_mirror_again() {
    let Some(env) = Env::start().await else { return };
    let (a, b) = (env.node(2).await, env.node(2).await);
    count(&env, &a, 10).await;
    quiet_and_taken(&env, &a, &b).await;
    assert_eq!(env.stored().await, 10, "B gave the store A's mirrored counts");
    count(&env, &b, 1).await;
    assert_eq!(b.stats().reclaimed, 1, "B reclaimed A's lease record");

    // A is back: its lease has ended by its clock; its next one asks Redis.
    count(&env, &a, 1).await;
    for n in [&a, &b] {
        n.give_back(&env.store).await;
        n.flush(&env.store).await.unwrap();
        n.flush(&env.store).await.unwrap();
    }
    assert_eq!(env.stored().await, 12);
    assert_eq!(env.counter(&a).await, Some(12), "the counter is the ledger: nothing of A's counted twice");
    env.cleanup().await;
}

/// A node's flush commits but its answer is lost (the batch stays in the
/// outbox, tried); then the counter is lost and seeded again from the
/// store, which has the batch. Asked what it counted that the seed lacks,
/// the node asks the store about the batch and does not add it again; its
/// retry is told the generation the batch was applied at. Afterwards the
/// counter is exactly the ledger.
#[tokio::test]
async fn a_batch_whose_answer_was_lost_is_not_counted_again_by_a_seed() {
    let Some(env) = Env::start().await else { return };
    let a = env.node(1).await;
    let l = limits(1_000_000, 1_000);
    let store = Answering::late(
        SqliteStore::connect(&DatabaseUrl::new(env._dir.path().join("mds.db").to_str().unwrap())).await.unwrap(),
        Duration::ZERO,
    );
    let admit = async || {
        let d = a.admit(&store, Ask { key: &key(), limits: l, charge: Charge::Counted("/v1/companies") }).await;
        d.unwrap().hold.unwrap().settle(Outcome::Counted);
    };
    for _ in 0..10 {
        admit().await;
    }
    store.lose_next();
    assert!(a.flush(&store).await.is_err(), "the answer is lost");
    assert_eq!(env.stored().await, 10, "but the batch is in the store");

    env.del_counter(&a).await;
    env.clock.advance(chrono::Duration::milliseconds(800));
    admit().await;
    assert_eq!(a.stats().seeds, 2, "seeded at first use and again");
    a.give_back(&store).await;
    a.flush(&store).await.unwrap();
    a.flush(&store).await.unwrap();
    assert!(a.local().meter().is_drained());
    assert_eq!(env.stored().await, 11);
    assert_eq!(env.counter(&a).await, Some(11), "the counter is the ledger: the batch counted once");
    env.cleanup().await;
}

/// Requests through `node` until it refuses one; how many it admitted
/// (each settled as counted).
async fn until_refused(env: &Env, node: &SharedLimiter, l: Limits) -> u64 {
    let mut n = 0;
    loop {
        let d = admit(node, &env.store, l, true).await;
        if !d.admitted() {
            return n;
        }
        d.hold.unwrap().settle(Outcome::Counted);
        n += 1;
    }
}

/// Issue 40: a node dies holding a lease; a survivor's script reclaims its
/// record and the month's counter is seeded again from the ledger. Node A,
/// alive, still holds a lease and requests it has not flushed: the seed
/// keeps both reserved until A's next script says what A counted, or
/// node B leases them again and the key is admitted past its quota (the
/// survivors of an operator's crash test admitted and billed up to 1,720
/// of a quota of 1,500). No usage mirrors here: the dead node's requests
/// were not flushed, so they are lost, not billed, and A and B together
/// may spend the whole quota, no more.
#[tokio::test]
async fn a_reseed_keeps_what_live_nodes_hold_and_have_not_flushed() {
    let Some(env) = Env::start().await else { return };
    let (a, b, dead) =
        (env.node_without_mirror(3).await, env.node_without_mirror(3).await, env.node_without_mirror(3).await);
    let l = limits(1_000_000, 60);
    for _ in 0..6 {
        admit(&dead, &env.store, l, true).await.hold.unwrap().settle(Outcome::Counted);
    }
    // The dead node stops. 900 ms on, A counts 10 from its leases (sizes
    // 1, 2, 4, 8: the last one live, 5 of it unspent).
    env.clock.advance(chrono::Duration::milliseconds(900));
    for _ in 0..10 {
        admit(&a, &env.store, l, true).await.hold.unwrap().settle(Outcome::Counted);
    }
    // Past the dead node's stale age, B reclaims its record: a new seed.
    env.clock.advance(chrono::Duration::milliseconds(200));
    let mut served = 10 + until_refused(&env, &b, l).await;
    assert_eq!(b.stats().reclaimed, 1, "B reclaimed the dead node's record");
    served += until_refused(&env, &a, l).await;
    // Every lease ends and is settled; then whatever is left is spent.
    live_for(&env, &[&a, &b], chrono::Duration::seconds(3)).await;
    served += until_refused(&env, &b, l).await + until_refused(&env, &a, l).await;
    assert!(served <= 60, "A and B admitted {served} of a quota of 60");
    for n in [&a, &b] {
        n.give_back(&env.store).await;
        n.flush(&env.store).await.unwrap();
        n.flush(&env.store).await.unwrap();
    }
    assert_eq!(env.stored().await, served, "the ledger holds what A and B served");
    assert_eq!(env.counter(&a).await, Some(served), "the counter is the ledger");
    assert_eq!(served, 60, "and the whole quota could be spent");
    env.cleanup().await;
}

/// Issue 40: a node dies with 20 requests it has not flushed, mirrored to
/// Redis. Its lease record goes stale before any node has taken its
/// mirror over: had a survivor's script reclaimed the record then, the
/// counter would be seeded again from a ledger without those 20, the
/// survivor would lease them again, and once the mirror was taken the
/// ledger would bill 80 requests of a quota of 60. The record waits for
/// its mirror: taken (its counts in the store), the record is reclaimed
/// and the counter seeded from a ledger that has them.
#[tokio::test]
async fn a_dead_nodes_record_waits_for_its_mirror_to_be_taken() {
    let Some(env) = Env::start().await else { return };
    let (a, dead) = (env.node(2).await, env.node(2).await);
    let l = limits(1_000_000, 60);
    for _ in 0..20 {
        admit(&dead, &env.store, l, true).await.hold.unwrap().settle(Outcome::Counted);
    }
    dead.mirror_tick().await.unwrap();
    // The dead node's record is stale; nobody has looked at its mirror.
    env.clock.advance(chrono::Duration::milliseconds(1_100));
    let mut served = until_refused(&env, &a, l).await;
    // Then A takes the mirror over (its own mirror live), spends what is
    // left, and every lease ends.
    for _ in 0..10 {
        env.clock.advance(chrono::Duration::milliseconds(100));
        a.mirror_tick().await.unwrap();
        a.take_over(&env.store).await;
        a.sweep(&env.store).await;
    }
    assert_eq!(a.stats().taken_over, 20, "A took the dead node's mirror over");
    live_for(&env, &[&a], chrono::Duration::seconds(2)).await;
    served += until_refused(&env, &a, l).await;
    a.give_back(&env.store).await;
    a.flush(&env.store).await.unwrap();
    a.flush(&env.store).await.unwrap();
    assert_eq!(env.stored().await, 20 + served, "the ledger holds the dead node's 20 and what A served");
    assert!(20 + served <= 60, "billed {} of a quota of 60", 20 + served);
    assert_eq!(served, 40, "A spent all that was left");
    assert_eq!(env.counter(&a).await, Some(60), "the counter is the ledger");
    env.cleanup().await;
}
