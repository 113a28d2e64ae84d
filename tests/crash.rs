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

/// Three nodes on a fresh database and a private Redis, and a key of
/// `QUOTA` a month; `None` (the test says it is skipped) without
/// PostgreSQL or `redis-server`.
struct Cluster {
    _db: TestDb,
    redis: RedisServer,
    key: String,
    nodes: Vec<Proc>,
    bases: Vec<String>,
    client: reqwest::Client,
}

impl Cluster {
    async fn start() -> Option<Cluster> {
        let Some(admin) = admin_url() else {
            eprintln!("skipped: needs MDS_TEST_POSTGRES_URL");
            return None;
        };
        let Some(redis_server) = RedisServer::start() else {
            eprintln!("skipped: needs redis-server");
            return None;
        };
        let redis = redis_server.url();
        let db = TestDb::create(&admin).await;
        let url = db.url().expose().to_owned();
        let quota = QUOTA.to_string();
        cli(&url, &redis, &["tiers", "set", "crash", "--rate-limit-per-minute", "100000", "--monthly-quota", &quota]);
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
        Some(Cluster { _db: db, redis: redis_server, key, nodes, bases, client })
    }

    /// Load on all three nodes, twelve requests at a time, until `BUDGET`
    /// are sent; `fault` runs once 400 are answered. A worker whose node
    /// stops answering stops. Returns how many were answered `200`.
    async fn load(&mut self, fault: impl FnOnce(&mut Cluster)) -> u64 {
        let sent = Arc::new(AtomicU64::new(0));
        let answered = Arc::new(AtomicU64::new(0));
        let mut workers = tokio::task::JoinSet::new();
        for w in 0..12 {
            let (client, base, key) = (self.client.clone(), self.bases[w % 3].clone(), self.key.clone());
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

    /// Report = enforcement through the nodes `on`: they all report the
    /// same `requests: u`, `remaining = QUOTA − u`, and exactly that many
    /// more are admitted through them before all refuse for the month (a
    /// node may refuse while another holds the last tokens, for at most a
    /// lease TTL); then the ledger holds the quota. Returns `u`.
    async fn spend_the_rest(&self, on: &[usize]) -> u64 {
        let (client, key) = (&self.client, &self.key);
        let (u, remaining) = usage(client, &self.bases[on[0]], key).await;
        for &n in &on[1..] {
            assert_eq!(usage(client, &self.bases[n], key).await, (u, remaining), "every node reports the same");
        }
        assert_eq!(remaining, QUOTA - u);
        let mut admitted = 0u64;
        let mut refused_since: Option<Instant> = None;
        let mut i = 0usize;
        loop {
            let base = &self.bases[on[i % on.len()]];
            i += 1;
            match get(client, base, key).await {
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
                    if i % on.len() == 0 {
                        tokio::time::sleep(Duration::from_millis(100)).await;
                    }
                }
                other => panic!("{base}: {other:?}"),
            }
        }
        assert_eq!(admitted, remaining, "usage said {u} requests ({remaining} left) but {admitted} more were admitted");
        tokio::time::sleep(SETTLE).await;
        for &n in on {
            let base = &self.bases[n];
            assert_eq!(usage(client, base, key).await, (QUOTA, 0), "{base}: the ledger holds the quota");
        }
        u
    }
}

#[tokio::test]
async fn a_dead_nodes_leases_come_back_and_report_equals_enforcement() {
    let Some(mut c) = Cluster::start().await else { return };
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
    assert_eq!(get(&c.client, &c.bases[2], &c.key).await, Some(200));
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
    let Some(mut c) = Cluster::start().await else { return };
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
