//! Crash consistency of shared limits (contract section 3): three real
//! `mds serve` processes on one PostgreSQL database and a private Redis,
//! under load: one node SIGKILLed and one SIGSTOPped while they hold
//! leases; or Redis stalled, then restarted empty. Once the faults settle,
//! what every node reports and what the cluster enforces agree: a key whose
//! usage says `requests: u` is admitted exactly `quota − u` more this
//! month, on every node, and a stalled node that comes back after its
//! leases were reclaimed gives nothing back twice.
//! Needs `MDS_TEST_POSTGRES_URL` and `redis-server`; says it is skipped
//! without them.

use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use common::cluster::{Cluster, SETTLE, get, signal, usage};
use mds_testkit::pg::admin_url;
use mds_testkit::redis::RedisServer;

const QUOTA: u64 = 1_500;

/// The tests of this file run one at a time: each drives three nodes hard
/// on a two-core machine, and the loss bounds are in milliseconds of a
/// node's traffic.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
/// Requests sent before the faults settle: well under the quota, so the
/// quota is spent only afterwards, through the survivors.
const BUDGET: u64 = 900;

/// The crash cluster on `MDS_TEST_POSTGRES_URL`; `None` (the test says it
/// is skipped) without it or `redis-server`.
async fn start() -> Option<Cluster> {
    Cluster::start(&admin()?, QUOTA).await
}

/// `MDS_TEST_POSTGRES_URL`; `None` (the test says it is skipped) without
/// it.
fn admin() -> Option<String> {
    let admin = admin_url();
    if admin.is_none() {
        eprintln!("skipped: needs MDS_TEST_POSTGRES_URL");
    }
    admin
}

impl Cluster {
    /// Load on all three nodes, twelve requests at a time, until `BUDGET`
    /// are sent; `fault` runs once 400 are answered. A worker whose node
    /// stops answering stops. Returns how many were answered `200`.
    async fn load(&mut self, fault: impl FnOnce(&mut Cluster)) -> u64 {
        let sent = Arc::new(AtomicU64::new(0));
        let answered = Arc::new(AtomicU64::new(0));
        let mut workers = tokio::task::JoinSet::new();
        for w in 0..12 {
            let (client, base, key) = (self.client.clone(), self.base(w % 3), self.key.clone());
            let (sent, answered) = (sent.clone(), answered.clone());
            workers.spawn(async move {
                while sent.fetch_add(1, Ordering::Relaxed) < BUDGET {
                    match get(&client, &base, &key).await {
                        Some(200) => answered.fetch_add(1, Ordering::Relaxed),
                        Some(s) => panic!("{base}: {s} under the quota"),
                        None => return,
                    };
                }
            });
        }
        while answered.load(Ordering::Relaxed) < 400 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        fault(self);
        while workers.join_next().await.is_some() {}
        answered.load(Ordering::Relaxed)
    }
}

#[tokio::test]
async fn a_dead_nodes_leases_come_back_and_report_equals_enforcement() {
    let _serial = ONE_AT_A_TIME.lock().await;
    let Some(mut c) = start().await else { return };
    let t0 = Instant::now();
    // Mid-run, node 0 dies and node 1 stalls, both holding leases.
    let served = c
        .load(|c| {
            c.nodes[0].kill();
            signal(&c.nodes[1], "STOP");
        })
        .await;

    // The stalled node's leases end while it is away; a request through the
    // third node meets them. Then the stalled node comes back and gives
    // back what it still holds.
    tokio::time::sleep(SETTLE).await;
    assert_eq!(get(&c.client, &c.base(2), &c.key).await, Some(200));
    signal(&c.nodes[1], "CONT");
    tokio::time::sleep(SETTLE).await;

    // The survivors report the ledger, less what the dead node had not
    // flushed, and enforce exactly that.
    let reclaimed = c.nodes[1..].iter().any(|n| n.logs().contains("reclaimed the leases"));
    assert!(reclaimed, "a survivor reclaimed the leases of the nodes that stopped renewing them");
    let u = c.spend_the_rest(&[1, 2]).await;
    assert!(u <= served + 1 + 12, "{u} reported, {served} answered (and up to 12 in flight at the stall)");
    assert!(t0.elapsed() < Duration::from_secs(40), "took {:?}", t0.elapsed());
}

/// Redis stalled (SIGSTOP, 2 s) under load, then killed and restarted
/// empty: afterwards every node reports what the ledger says, and enforces
/// exactly that.
#[tokio::test]
async fn after_redis_stalls_and_restarts_empty_report_equals_enforcement() {
    let _serial = ONE_AT_A_TIME.lock().await;
    let Some(mut c) = start().await else { return };
    let t0 = Instant::now();
    c.load(|c| c.redis.signal("STOP")).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    c.redis.signal("CONT");
    tokio::time::sleep(SETTLE).await;
    // Killed and restarted on its port, empty (no persistence).
    c.redis.signal("KILL");
    tokio::time::sleep(Duration::from_millis(200)).await;
    c.redis = RedisServer::start_on(c.redis.port).expect("restart redis-server");
    tokio::time::sleep(SETTLE).await;
    c.spend_the_rest(&[0, 1, 2]).await;
    assert!(t0.elapsed() < Duration::from_secs(40), "took {:?}", t0.elapsed());
}

/// Node `i`'s `mds_usage_flushes_total` line, as its metrics say now.
async fn flushes(c: &Cluster, i: usize) -> Option<String> {
    let body = c.client.get(format!("{}/metrics", c.base(i))).send().await.unwrap().text().await.unwrap();
    body.lines().find(|l| l.starts_with("mds_usage_flushes_total ")).map(str::to_owned)
}

/// How much of a node's traffic a node that never returns may lose (the
/// contract's bound with the usage mirror; the mirror pushes every 50 ms).
const LOSS_BOUND: Duration = Duration::from_millis(100);

/// A node SIGKILLed under load that never comes back: another node takes
/// its usage mirror over, so the ledger holds what was served less at most
/// 100 ms of the dead node's traffic (counted by the client per node), and
/// never more than was served plus the requests in flight at the kill.
/// The kill falls 600 ms after one of the node's flushes, so without the
/// mirror (`MDS_NO_USAGE_MIRROR=1`) about 600 ms of its traffic is lost
/// and this fails.
#[tokio::test]
async fn a_node_that_never_returns_loses_at_most_100_ms_of_its_traffic() {
    let _serial = ONE_AT_A_TIME.lock().await;
    let Some(admin) = admin() else { return };
    let Some(mut c) = Cluster::start(&admin, 10_000_000).await else { return };
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let answered: Arc<[AtomicU64; 3]> = Arc::new(Default::default());
    let mut workers = tokio::task::JoinSet::new();
    const PER_NODE: usize = 4;
    for w in 0..3 * PER_NODE {
        let (client, base, key) = (c.client.clone(), c.base(w % 3), c.key.clone());
        let (stop, answered) = (stop.clone(), answered.clone());
        workers.spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                match get(&client, &base, &key).await {
                    Some(200) => answered[w % 3].fetch_add(1, Ordering::Relaxed),
                    Some(s) => panic!("{base}: {s}"),
                    None => return,
                };
            }
        });
    }
    let t0 = Instant::now();
    tokio::time::sleep(Duration::from_secs(2)).await;
    // Just after one of node 0's flushes, plus 600 ms.
    let before = flushes(&c, 0).await;
    while flushes(&c, 0).await == before {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    tokio::time::sleep(Duration::from_millis(600)).await;
    c.nodes[0].kill();
    let killed_after = t0.elapsed();
    tokio::time::sleep(Duration::from_millis(500)).await;
    stop.store(true, Ordering::Relaxed);
    while workers.join_next().await.is_some() {}
    tokio::time::sleep(SETTLE).await;

    let served: Vec<u64> = answered.iter().map(|a| a.load(Ordering::Relaxed)).collect();
    let total: u64 = served.iter().sum();
    let (ledger, _) = usage(&c.client, &c.base(1), &c.key).await;
    let rate0 = served[0] as f64 / killed_after.as_secs_f64();
    let bound = (rate0 * LOSS_BOUND.as_secs_f64()).ceil() as u64;
    let lost = total as i64 - ledger as i64;
    eprintln!(
        "served {served:?} ({rate0:.0}/s on the dead node), ledger {ledger}: lost {lost} = {:.0} ms of its traffic (bound {bound})",
        lost as f64 / rate0 * 1000.0
    );
    assert!(lost <= bound as i64, "lost {lost} requests, more than 100 ms of the dead node's traffic ({bound})");
    assert!(-lost <= PER_NODE as i64, "the ledger holds {} more than was served", -lost);
    let took = c.nodes[1..].iter().any(|n| n.logs().contains("took over the usage mirror"));
    assert!(took, "a survivor took the dead node's usage mirror over");
    // And says so in its metrics.
    let mut taken = 0;
    for base in &c.bases()[1..] {
        let body = c.client.get(format!("{base}/metrics")).send().await.unwrap().text().await.unwrap();
        let value = |name: &str| body.lines().find_map(|l| l.strip_prefix(name)?.trim().parse::<u64>().ok());
        assert!(value("mds_redis_reclaimed_total ").is_some(), "{base}: no mds_redis_reclaimed_total");
        taken += value("mds_redis_taken_over_requests_total ").unwrap();
    }
    assert!(taken > 0 && taken <= served[0], "{taken} taken over of the {} the dead node served", served[0]);
}

/// Issue 40: through a node's crash near the quota, with many clients on
/// every node, the survivors never admit past the quota by more than the
/// requests the dead node had not flushed, never report more than the
/// quota (nor more than was admitted), and then report what they enforce.
/// The survivors once admitted and billed up to 1,720 of a 1,500 quota: a
/// seed of the month's counter dropped the leases live nodes still held,
/// and a seed made before the dead node's usage mirror was taken over left
/// its mirrored requests out, to be leased again and billed on top
/// (`crates/mds-limits/tests/redis.rs` pins both down). `MDS_CRASH_ROUNDS`
/// runs (4 by default, `bench/crash-quota.sh` runs 10 on a release build),
/// of three kinds in turn (`MDS_CRASH_KIND` picks one): clients as fast as
/// they go; paced; and as fast
/// with a lease TTL of 250 ms, under the usage mirror's 500 ms staleness,
/// so the dead node's lease records come due before its mirror can be
/// taken over (a seed then, as before the fix, leaves its unflushed
/// requests out: admitted and billed past the quota in every such round).
#[tokio::test]
async fn a_node_dying_near_the_quota_under_many_clients_admits_no_more() {
    let _serial = ONE_AT_A_TIME.lock().await;
    let Some(admin) = admin() else { return };
    let rounds: usize = std::env::var("MDS_CRASH_ROUNDS").ok().and_then(|s| s.parse().ok()).unwrap_or(4);
    // `MDS_CRASH_KIND` (0, 1 or 2) runs only rounds of that kind.
    let only: Option<usize> = std::env::var("MDS_CRASH_KIND").ok().and_then(|s| s.parse().ok());
    for round in 0..rounds {
        let kind = only.unwrap_or(round) % 3;
        let short_lease = kind == 2;
        let started = if short_lease {
            Cluster::start_with_lease_ttl(&admin, QUOTA, Duration::from_millis(250)).await
        } else {
            Cluster::start(&admin, QUOTA).await
        };
        let Some(mut c) = started else { return };
        let pace = (kind == 1).then_some(Duration::from_millis(90));
        let r = c.kill_near_the_quota(0, pace).await;
        eprintln!("round {round} (pace {pace:?}, short lease {short_lease}): {r}");
        r.assert_bounds(&c, &format!("round {round}"));
        c.spend_the_rest(&[1, 2]).await;
    }
}

/// A node stalled (SIGSTOP) with counts in its usage mirror until another
/// node took the mirror over, then resumed with Redis gone: the store
/// already has its batch, and only Redis could say what was taken, so the
/// batch is held. A SIGTERM still ends the node within the final flush's
/// deadline, the held counts logged as not written. The final flush once
/// retried only after errors, and on this flush that wrote nothing and
/// failed nothing it spun until killed.
#[tokio::test]
async fn a_node_back_from_a_takeover_with_redis_gone_still_stops() {
    let _serial = ONE_AT_A_TIME.lock().await;
    let Some(mut c) = start().await else { return };
    // Counted through node 0 just after one of its flushes: they wait for
    // the next (a second later), mirrored to Redis within 50 ms.
    // Until no flush came between the requests and the stall.
    loop {
        assert_eq!(get(&c.client, &c.base(0), &c.key).await, Some(200));
        let before = flushes(&c, 0).await;
        while flushes(&c, 0).await == before {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let after = flushes(&c, 0).await;
        for _ in 0..20 {
            assert_eq!(get(&c.client, &c.base(0), &c.key).await, Some(200));
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
        if flushes(&c, 0).await == after {
            break;
        }
    }
    signal(&c.nodes[0], "STOP");
    let t = Instant::now();
    while !c.nodes[1..].iter().any(|n| n.logs().contains("took over the usage mirror")) {
        assert!(t.elapsed() < Duration::from_secs(30), "no node took the stalled node's usage mirror over");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    c.redis.signal("KILL");
    signal(&c.nodes[0], "CONT");
    assert!(c.nodes[0].logged("the store had this node's batch before"), "{}", c.nodes[0].logs());
    let deadline = mds_node::flush::FINAL_FLUSH_DEADLINE + Duration::from_secs(10);
    c.nodes[0].sigterm_within(deadline);
    assert!(c.nodes[0].logs().contains("final usage flush failed"), "{}", c.nodes[0].logs());
}
