//! Three `mds serve` processes on loopback sharing PostgreSQL and Redis:
//! one key's quota holds across them exactly, usage agrees on every node
//! and with Redis's counter once the leases are back,
//! a killed node does not disturb the others, and a revocation reaches all
//! of them within a second. Needs `MDS_TEST_POSTGRES_URL` and
//! `MDS_TEST_REDIS_URL` (CI sets both); says it is skipped without them.

use crate::common;

use std::process::Command;
use std::time::{Duration, Instant};

use common::process::{self, Proc};
use mds_testkit::pg::{TestDb, admin_url};

fn mds(url: &str, redis: &str) -> Command {
    let mut c = process::mds();
    c.env("MDS_DATABASE_URL", url).env("MDS_REDIS_URL", redis);
    c
}

fn cli(url: &str, redis: &str, args: &[&str]) -> String {
    let o = mds(url, redis).args(args).output().unwrap();
    assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

fn start(url: &str, redis: &str) -> Proc {
    let mut c = mds(url, redis);
    c.arg("serve");
    Proc::start(c)
}

/// The Redis key of `key`'s `kind` (`usage`, `lease`) this month, in the
/// default namespace.
fn month_key(kind: &str, key: &str) -> String {
    format!("mds:{kind}:{{{}}}:{}", &key[..17], chrono::Utc::now().format("%Y%m"))
}

/// `redis-cli -u redis ARGS`, its trimmed output.
fn redis_cli(redis: &str, args: &[&str]) -> String {
    let out = Command::new("redis-cli").args(["-u", redis]).args(args).output().unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// The value of `key` in Redis.
fn redis_get(redis: &str, key: &str) -> String {
    redis_cli(redis, &["GET", key])
}

#[tokio::test]
async fn three_nodes_share_one_quota_and_one_truth() {
    let (Some(admin), Ok(redis)) = (admin_url(), std::env::var("MDS_TEST_REDIS_URL")) else {
        eprintln!("skipped: needs MDS_TEST_POSTGRES_URL and MDS_TEST_REDIS_URL");
        return;
    };
    let db = TestDb::create(&admin).await;
    let url = db.url().expose().to_owned();
    process::migrate(&url);
    let demo = concat!(env!("CARGO_MANIFEST_DIR"), "/data/demo/");
    cli(
        &url,
        &redis,
        &[
            "import",
            "exchanges",
            "--nse",
            &format!("{demo}nse_EQUITY_L_2024-01.csv"),
            "--bse",
            &format!("{demo}bse_Equity_2024-01.csv"),
            "--as-of",
            "2024-01-30",
        ],
    );
    cli(&url, &redis, &["tiers", "set", "small", "--rate-limit-per-minute", "100000", "--monthly-quota", "100"]);
    cli(&url, &redis, &["accounts", "create", "acme"]);
    let key = cli(&url, &redis, &["keys", "create", "--account", "acme", "--tier", "small"]).trim().to_owned();
    let other = cli(&url, &redis, &["keys", "create", "--account", "acme", "--tier", "pro"]).trim().to_owned();
    let mut nodes: Vec<Proc> = (0..3).map(|_| start(&url, &redis)).collect();
    let client = reqwest::Client::builder().no_proxy().build().unwrap();

    // 600 concurrent requests on one key with a quota of 100, spread over the nodes.
    let mut set = tokio::task::JoinSet::new();
    for i in 0..600 {
        let (c, base, k) = (client.clone(), nodes[i % 3].base(), key.clone());
        set.spawn(async move {
            c.get(format!("{base}/v1/companies?limit=1")).bearer_auth(k).send().await.unwrap().status().as_u16()
        });
    }
    let mut admitted = 0;
    let mut refused = 0;
    while let Some(s) = set.join_next().await {
        match s.unwrap() {
            200 => admitted += 1,
            429 => refused += 1,
            other => panic!("unexpected status {other}"),
        }
    }
    assert_eq!(admitted, 100, "admitted across three nodes equals the quota");
    assert_eq!(refused, 500);

    // Usage read from any node equals what was admitted (after a flush).
    tokio::time::sleep(Duration::from_millis(2_500)).await;
    for n in &nodes {
        let u: serde_json::Value =
            client.get(format!("{}/v1/usage", n.base())).bearer_auth(&key).send().await.unwrap().json().await.unwrap();
        assert_eq!(u["current_month"]["requests"], 100, "{}", n.base());
        assert_eq!(u["current_month"]["remaining"], 0);
    }
    // Redis agrees: the leases the nodes took are back, the counter holds
    // what was spent.
    assert_eq!(redis_get(&redis, &month_key("usage", &key)), "100", "the shared counter");

    // One node killed mid-traffic: the others keep answering correctly.
    let killed = nodes.remove(0);
    drop(killed);
    for i in 0..50 {
        let n = &nodes[i % 2];
        let r = client.get(format!("{}/v1/companies?limit=2", n.base())).bearer_auth(&other).send().await.unwrap();
        assert_eq!(r.status(), 200);
    }

    // A revoked key is refused by every remaining node within 1 s.
    cli(&url, &redis, &["keys", "revoke", &other[..17]]);
    let t = Instant::now();
    let mut made = 50;
    for n in &nodes {
        loop {
            let s = client
                .get(format!("{}/v1/companies?limit=1", n.base()))
                .bearer_auth(&other)
                .send()
                .await
                .unwrap()
                .status();
            if s == 401 {
                break;
            }
            made += 1;
            assert!(t.elapsed() < Duration::from_secs(1), "{} still accepts a revoked key", n.base());
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
    // Its leased tokens were not spent: once the leases end, the counter
    // holds the requests it made (those answered before the revocation
    // reached a node included), nothing more.
    let t = Instant::now();
    loop {
        let counter = redis_get(&redis, &month_key("usage", &other));
        if counter == made.to_string() {
            break;
        }
        if t.elapsed() > Duration::from_secs(5) {
            let records = redis_cli(&redis, &["HGETALL", &month_key("lease", &other)]);
            panic!("{made} made, the counter stays at {counter}; leases {records}");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
