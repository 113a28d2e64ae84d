//! Crash consistency of shared limits (contract section 3): three real
//! `mds serve` processes on one PostgreSQL database and a private Redis,
//! one SIGKILLed and one SIGSTOPped while they hold leases under load. Once
//! the faults settle, what every node reports and what the cluster enforces
//! agree: a key whose usage says `requests: u` is admitted exactly
//! `quota − u` more this month, on every node, and a stalled node that
//! comes back after its leases were reclaimed gives nothing back twice.
//! Needs `MDS_TEST_POSTGRES_URL` and `redis-server`; says it is skipped
//! without them.

mod common;

use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use common::process::{self, Proc};
use mds_testkit::pg::{TestDb, admin_url};
use mds_testkit::redis::RedisServer;

const QUOTA: u64 = 1_500;
/// Requests sent before the faults settle: well under the quota, so the
/// quota is spent only afterwards, through the survivors.
const BUDGET: u64 = 900;
/// A lease TTL, a flush interval and a reload interval, with room: after
/// this, every fault has settled.
const SETTLE: Duration = Duration::from_millis(2_600);

fn mds(url: &str, redis: &str) -> Command {
    let mut c = process::mds();
    c.env("MDS_DATABASE_URL", url).env("MDS_REDIS_URL", redis).env("MDS_NODES", "3");
    c
}

fn cli(url: &str, redis: &str, args: &[&str]) -> String {
    let o = mds(url, redis).args(args).env("MDS_LOG", "warn").output().unwrap();
    assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

fn signal(p: &Proc, sig: &str) {
    let ok = Command::new("kill").args([&format!("-{sig}"), &p.child.id().to_string()]).status().unwrap();
    assert!(ok.success(), "kill -{sig}");
}

/// `requests` and `remaining` of this month, as `/v1/usage` on `base` says.
async fn usage(client: &reqwest::Client, base: &str, key: &str) -> (u64, u64) {
    let u: serde_json::Value =
        client.get(format!("{base}/v1/usage")).bearer_auth(key).send().await.unwrap().json().await.unwrap();
    let m = &u["current_month"];
    (m["requests"].as_u64().unwrap(), m["remaining"].as_u64().unwrap())
}

/// One counted request; its status, or `None` when the node did not answer.
async fn get(client: &reqwest::Client, base: &str, key: &str) -> Option<u16> {
    let r = client.get(format!("{base}/v1/companies?limit=1")).bearer_auth(key).send().await.ok()?;
    Some(r.status().as_u16())
}

#[tokio::test]
async fn a_dead_nodes_leases_come_back_and_report_equals_enforcement() {
    let Some(admin) = admin_url() else {
        eprintln!("skipped: needs MDS_TEST_POSTGRES_URL");
        return;
    };
    let Some(redis_server) = RedisServer::start() else {
        eprintln!("skipped: needs redis-server");
        return;
    };
    let redis = redis_server.url();
    let db = TestDb::create(&admin).await;
    let url = db.url().expose().to_owned();
    cli(&url, &redis, &["tiers", "set", "crash", "--rate-limit-per-minute", "100000", "--monthly-quota", "1500"]);
    cli(&url, &redis, &["accounts", "create", "acme"]);
    let key = cli(&url, &redis, &["keys", "create", "--account", "acme", "--tier", "crash"]).trim().to_owned();
    let nodes: Vec<Proc> = (0..3)
        .map(|_| {
            let mut c = mds(&url, &redis);
            c.arg("serve");
            Proc::start(c)
        })
        .collect();
    let bases: Vec<String> = nodes.iter().map(Proc::base).collect();
    let client = reqwest::Client::builder().no_proxy().timeout(Duration::from_millis(800)).build().unwrap();
    let t0 = Instant::now();

    // Load on all three nodes, twelve requests at a time, until the budget
    // is spent; a worker whose node stops answering stops.
    let sent = Arc::new(AtomicU64::new(0));
    let answered = Arc::new(AtomicU64::new(0));
    let mut workers = tokio::task::JoinSet::new();
    for w in 0..12 {
        let (client, base, key) = (client.clone(), bases[w % 3].clone(), key.clone());
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
    // Mid-run, node 0 dies and node 1 stalls, both holding leases.
    while answered.load(Ordering::Relaxed) < 400 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let mut nodes = nodes;
    nodes[0].kill();
    signal(&nodes[1], "STOP");
    while workers.join_next().await.is_some() {}
    let served = answered.load(Ordering::Relaxed);

    // The stalled node's leases end while it is away; a request through the
    // third node meets them. Then the stalled node comes back and gives
    // back what it still holds.
    tokio::time::sleep(SETTLE).await;
    assert_eq!(get(&client, &bases[2], &key).await, Some(200));
    signal(&nodes[1], "CONT");
    tokio::time::sleep(SETTLE).await;

    // Both survivors report the same: the ledger, less what the dead node
    // had not flushed.
    let (u, remaining) = usage(&client, &bases[1], &key).await;
    assert_eq!(usage(&client, &bases[2], &key).await, (u, remaining), "both survivors report the same");
    assert_eq!(remaining, QUOTA - u);
    assert!(u <= served + 1 + 12, "{u} reported, {served} answered (and up to 12 in flight at the stall)");
    let reclaimed = nodes[1..].iter().any(|n| n.logs().contains("reclaimed the leases"));
    assert!(reclaimed, "a survivor reclaimed the leases of the nodes that stopped renewing them");

    // Report = enforcement: exactly `remaining` more are admitted through
    // the survivors, then both refuse for the month. A node may refuse
    // while the other holds the last tokens, for at most a lease TTL.
    let mut admitted = 0u64;
    let mut refused_since: Option<Instant> = None;
    let mut i = 0usize;
    loop {
        let base = &bases[1 + i % 2];
        i += 1;
        match get(&client, base, &key).await {
            Some(200) => {
                admitted += 1;
                refused_since = None;
                assert!(admitted <= remaining, "admitted more than the {remaining} usage said were left");
            }
            Some(429) => {
                let since = *refused_since.get_or_insert_with(Instant::now);
                if since.elapsed() > Duration::from_secs(3) {
                    break;
                }
                if i % 2 == 0 {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
            other => panic!("{base}: {other:?}"),
        }
    }
    assert_eq!(
        admitted, remaining,
        "usage said {u} requests ({remaining} left) but {admitted} more were admitted (dead node killed, \
         {served} answered before)"
    );
    tokio::time::sleep(SETTLE).await;
    for base in &bases[1..] {
        assert_eq!(usage(&client, base, &key).await, (QUOTA, 0), "{base}: the ledger holds the quota");
    }
    assert!(t0.elapsed() < Duration::from_secs(40), "took {:?}", t0.elapsed());
}
