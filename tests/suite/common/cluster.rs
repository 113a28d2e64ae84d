//! Three real `mds serve` processes on one PostgreSQL database and a
//! private Redis, with a key of a monthly quota: the cluster the crash and
//! chaos suites inject faults into ([`Cluster`]), the two requests they
//! make ([`get`], [`usage`]), and the check they end with: report equals
//! enforcement ([`Cluster::spend_the_rest`]).

use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use mds_testkit::pg::TestDb;
use mds_testkit::redis::RedisServer;

use super::process::{self, Proc};

/// A lease TTL, a flush interval and a reload interval, with room: after
/// this, every fault has settled.
pub const SETTLE: Duration = Duration::from_millis(2_600);

/// `mds` on the database `url` and Redis `redis`, told there are 3 nodes
/// (`MDS_TEST_CLUSTER_NODES` tells them another number: an operator who
/// left `MDS_NODES` out runs three nodes each told there is one).
pub fn mds(url: &str, redis: &str) -> Command {
    let mut c = process::mds();
    let nodes = std::env::var("MDS_TEST_CLUSTER_NODES").unwrap_or_else(|_| "3".to_owned());
    c.env("MDS_DATABASE_URL", url).env("MDS_REDIS_URL", redis).env("MDS_NODES", nodes);
    c
}

/// Runs the operator command `mds ARGS` there; asserts it succeeds and
/// returns its standard output.
pub fn cli(url: &str, redis: &str, args: &[&str]) -> String {
    let o = mds(url, redis).args(args).env("MDS_LOG", "warn").output().unwrap();
    assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

/// Sends `sig` (`KILL`, `STOP`, `CONT`) to the process.
pub fn signal(p: &Proc, sig: &str) {
    let ok = Command::new("kill").args([&format!("-{sig}"), &p.child.id().to_string()]).status().unwrap();
    assert!(ok.success(), "kill -{sig}");
}

/// `requests` and `remaining` of this month, as `/v1/usage` on `base` says.
pub async fn usage(client: &reqwest::Client, base: &str, key: &str) -> (u64, u64) {
    let u: serde_json::Value =
        client.get(format!("{base}/v1/usage")).bearer_auth(key).send().await.unwrap().json().await.unwrap();
    let m = &u["current_month"];
    (m["requests"].as_u64().unwrap(), m["remaining"].as_u64().unwrap())
}

/// One counted request; its status, or `None` when the node did not answer.
pub async fn get(client: &reqwest::Client, base: &str, key: &str) -> Option<u16> {
    let r = client.get(format!("{base}/v1/companies?limit=1")).bearer_auth(key).send().await.ok()?;
    Some(r.status().as_u16())
}

/// `mds serve` on the database `url` and Redis `redis`, with the
/// environment `env` on top.
fn serve(url: &str, redis: &str, env: &[(String, String)]) -> Proc {
    let mut c = mds(url, redis);
    c.envs(env.iter().map(|(k, v)| (k, v))).arg("serve");
    Proc::start(c)
}

/// Waits until the node at `base` is ready (serving starts before the node
/// is ready: `503` until then).
async fn ready(client: &reqwest::Client, base: &str) {
    let t = Instant::now();
    while client.get(format!("{base}/readyz")).send().await.map(|r| r.status().as_u16()).ok() != Some(200) {
        assert!(t.elapsed() < Duration::from_secs(30), "{base} never became ready");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Three nodes on a fresh database and a private Redis, and a key of
/// `quota` requests a month.
pub struct Cluster {
    /// The database, dropped with the cluster.
    pub db: TestDb,
    /// The private Redis.
    pub redis: RedisServer,
    /// The key's monthly quota.
    pub quota: u64,
    /// The key under load.
    pub key: String,
    /// The three nodes.
    pub nodes: Vec<Proc>,
    /// A client that gives up on a node after 800 ms.
    pub client: reqwest::Client,
    /// The database and Redis URLs the nodes are started with.
    node_urls: (String, String),
    /// The environment the nodes are started with on top of those.
    node_env: Vec<(String, String)>,
}

impl Cluster {
    /// Starts one on a new database of the PostgreSQL server `admin` (its
    /// administration URL); `None` (it says the test is skipped) without
    /// `redis-server`.
    pub async fn start(admin: &str, quota: u64) -> Option<Cluster> {
        Self::start_with(admin, quota, |url, redis| (url.to_owned(), redis.url())).await
    }

    /// As [`Cluster::start`], with the nodes reaching the database and Redis
    /// at the URLs `route` gives for the database's URL and the Redis server
    /// (through proxies, say); the operator commands reach them directly.
    pub async fn start_with(
        admin: &str,
        quota: u64,
        route: impl FnOnce(&str, &RedisServer) -> (String, String),
    ) -> Option<Cluster> {
        Self::launch(admin, quota, route, Vec::new()).await
    }

    /// As [`Cluster::start`], with a lease TTL of `lease_ttl` (an
    /// operator's `MDS_LEASE_TTL_MS`) on every node.
    pub async fn start_with_lease_ttl(admin: &str, quota: u64, lease_ttl: Duration) -> Option<Cluster> {
        let env = vec![("MDS_LEASE_TTL_MS".to_owned(), lease_ttl.as_millis().to_string())];
        Self::launch(admin, quota, |url, redis| (url.to_owned(), redis.url()), env).await
    }

    /// Starts the key, then the three nodes with `node_env`.
    async fn launch(
        admin: &str,
        quota: u64,
        route: impl FnOnce(&str, &RedisServer) -> (String, String),
        node_env: Vec<(String, String)>,
    ) -> Option<Cluster> {
        let Some(redis_server) = RedisServer::start() else {
            eprintln!("skipped: needs redis-server");
            return None;
        };
        let redis = redis_server.url();
        let db = TestDb::create(admin).await;
        let url = db.url().expose().to_owned();
        let (node_url, node_redis) = route(&url, &redis_server);
        let q = quota.to_string();
        cli(&url, &redis, &["migrate"]);
        cli(&url, &redis, &["tiers", "set", "crash", "--rate-limit-per-minute", "100000", "--monthly-quota", &q]);
        cli(&url, &redis, &["accounts", "create", "acme"]);
        let key = cli(&url, &redis, &["keys", "create", "--account", "acme", "--tier", "crash"]).trim().to_owned();
        let nodes: Vec<Proc> = (0..3).map(|_| serve(&node_url, &node_redis, &node_env)).collect();
        let client = reqwest::Client::builder().no_proxy().timeout(Duration::from_millis(800)).build().unwrap();
        for node in &nodes {
            ready(&client, &node.base()).await;
        }
        let node_urls = (node_url, node_redis);
        Some(Cluster { db, redis: redis_server, quota, key, nodes, client, node_urls, node_env })
    }

    /// Starts node `i` again (after a kill): a new process, a new node id,
    /// on a new port (its [`Cluster::base`]), once it is ready.
    pub async fn restart(&mut self, i: usize) {
        self.nodes[i] = serve(&self.node_urls.0, &self.node_urls.1, &self.node_env);
        ready(&self.client, &self.base(i)).await;
    }

    /// Node `i`'s `http://host:port` (a new one after a restart).
    pub fn base(&self, i: usize) -> String {
        self.nodes[i].base()
    }

    /// Every node's `http://host:port`, in order.
    pub fn bases(&self) -> Vec<String> {
        self.nodes.iter().map(Proc::base).collect()
    }

    /// The operator command `mds ARGS` on the cluster's store and Redis.
    pub fn cli(&self, args: &[&str]) -> String {
        cli(self.db.url().expose(), &self.redis.url(), args)
    }

    /// Report = enforcement through the nodes `on`: they all report the
    /// same `requests: u`, `remaining = quota − u`, and exactly that many
    /// more are admitted through them before all refuse for the month (a
    /// node may refuse while another holds the last tokens, for at most a
    /// lease TTL); then the ledger holds the quota. Returns `u`.
    pub async fn spend_the_rest(&self, on: &[usize]) -> u64 {
        let (client, key, quota) = (&self.client, &self.key, self.quota);
        let (u, remaining) = usage(client, &self.base(on[0]), key).await;
        for &n in &on[1..] {
            assert_eq!(usage(client, &self.base(n), key).await, (u, remaining), "every node reports the same");
        }
        assert_eq!(remaining, quota - u);
        let mut admitted = 0u64;
        let mut refused_since: Option<Instant> = None;
        let mut i = 0usize;
        loop {
            let base = &self.base(on[i % on.len()]);
            i += 1;
            match get(client, base, key).await {
                Some(200) => {
                    admitted += 1;
                    refused_since = None;
                    assert!(admitted <= remaining, "admitted more than the {remaining} usage said were left");
                }
                Some(429) => {
                    let since = *refused_since.get_or_insert_with(Instant::now);
                    // A lease TTL is 1 s; a loaded machine (CI) has seen a
                    // holder give back later than 3 s: the count stays exact,
                    // only the wait for the last tokens is longer.
                    if since.elapsed() > Duration::from_secs(6) {
                        break;
                    }
                    if i % on.len() == 0 {
                        tokio::time::sleep(Duration::from_millis(100)).await;
                    }
                }
                other => panic!("{base}: {other:?}"),
            }
        }
        if admitted != remaining {
            eprintln!("{}", self.diagnosis(on));
        }
        assert_eq!(admitted, remaining, "usage said {u} requests ({remaining} left) but {admitted} more were admitted");
        tokio::time::sleep(SETTLE).await;
        for &n in on {
            let base = &self.base(n);
            assert_eq!(usage(client, base, key).await, (quota, 0), "{base}: the ledger holds the quota");
        }
        u
    }

    /// What Redis holds for the key (its counters and lease records) and
    /// what the nodes `on` logged at info and above of leases, mirrors and
    /// flushes: printed when report and enforcement disagree (or a bound
    /// of a test does not hold).
    pub fn diagnosis(&self, on: &[usize]) -> String {
        let mut out = String::from("--- redis ---\n");
        for k in self.redis.cli(&["--scan"]).lines() {
            let kind = self.redis.cli(&["TYPE", k]);
            let v = match kind.as_str() {
                "string" => self.redis.cli(&["GET", k]),
                "hash" => self.redis.cli(&["HGETALL", k]).replace('\n', " | "),
                "set" => self.redis.cli(&["SMEMBERS", k]).replace('\n', " | "),
                other => other.to_owned(),
            };
            out.push_str(&format!("{k} = {v}\n"));
        }
        for &n in on {
            out.push_str(&format!("--- node {n} ---\n"));
            // Not the access log's lines (message `request`, then its fields).
            for line in self.nodes[n].logs().lines().filter(|l| !l.contains(" request method=")) {
                out.push_str(line);
                out.push('\n');
            }
        }
        out
    }

    /// The operator's scenario of issue 40, from where the key stands now
    /// (`requests: u` of its quota): 24 concurrent clients spread over the
    /// nodes (each request to the next node), node `dead` SIGKILLed once
    /// four fifths of `quota − u` more are answered, the clients going on
    /// against every node (the dead one refusing connections) until they
    /// have been refused for 3 s. With `pace`, each client pauses that long
    /// after each answer (90 ms: about 250 requests a second in all, as
    /// clients in notebooks send them, so the survivors are still spending
    /// the quota when the dead node's leases come back). Returns what was
    /// served and reported once the faults settled; [`NearQuota::assert_bounds`]
    /// checks it.
    pub async fn kill_near_the_quota(&mut self, dead: usize, pace: Option<Duration>) -> NearQuota {
        const CLIENTS: usize = 24;
        let survivor = (dead + 1) % self.nodes.len();
        let (before, _) = usage(&self.client, &self.base(survivor), &self.key).await;
        let left = self.quota - before;
        let stop = Arc::new(AtomicBool::new(false));
        let served: Arc<Vec<AtomicU64>> = Arc::new(self.nodes.iter().map(|_| AtomicU64::new(0)).collect());
        let last_200 = Arc::new(std::sync::Mutex::new(Instant::now()));
        let mut workers = tokio::task::JoinSet::new();
        let bases = self.bases();
        for w in 0..CLIENTS {
            let (client, bases, key) = (self.client.clone(), bases.clone(), self.key.clone());
            let (stop, served, last_200) = (stop.clone(), served.clone(), last_200.clone());
            workers.spawn(async move {
                let mut i = w;
                while !stop.load(Ordering::Relaxed) {
                    let n = i % bases.len();
                    i += 1;
                    match get(&client, &bases[n], &key).await {
                        Some(200) => {
                            served[n].fetch_add(1, Ordering::Relaxed);
                            *last_200.lock().unwrap() = Instant::now();
                        }
                        Some(429) | None => {}
                        Some(s) => panic!("{}: {s}", bases[n]),
                    }
                    if let Some(pause) = pace {
                        tokio::time::sleep(pause).await;
                    }
                }
            });
        }
        let t0 = Instant::now();
        let total = || served.iter().map(|a| a.load(Ordering::Relaxed)).sum::<u64>();
        while total() < left * 4 / 5 {
            assert!(t0.elapsed() < Duration::from_secs(60), "only {} answered in 60 s", total());
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        self.nodes[dead].kill();
        let killed_after = t0.elapsed();
        let served_by_dead = served[dead].load(Ordering::Relaxed);
        // Until nothing was admitted for 3 s: the quota is spent, and every
        // lease the dead node held has come back and been spent too.
        while last_200.lock().unwrap().elapsed() < Duration::from_secs(3) {
            assert!(t0.elapsed() < Duration::from_secs(90), "still admitting after 90 s");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        stop.store(true, Ordering::Relaxed);
        while workers.join_next().await.is_some() {}
        tokio::time::sleep(SETTLE).await;
        let (reported, _) = usage(&self.client, &self.base(survivor), &self.key).await;
        let admitted = total();
        let rate = served_by_dead as f64 / killed_after.as_secs_f64();
        NearQuota {
            quota: self.quota,
            before,
            admitted,
            reported,
            // The dead node's traffic in the 100 ms before its death (its
            // mirror is pushed every 50 ms), and its clients' requests in flight.
            unflushed_bound: (rate * 0.1).ceil() as u64 + (CLIENTS / self.nodes.len()) as u64,
            dead,
        }
    }
}

/// What [`Cluster::kill_near_the_quota`] saw.
#[derive(Debug)]
pub struct NearQuota {
    /// The key's monthly quota.
    pub quota: u64,
    /// `requests` in `/v1/usage` before the load.
    pub before: u64,
    /// Requests answered `200` during the load, all nodes together.
    pub admitted: u64,
    /// `requests` in `/v1/usage` on a survivor once the faults settled.
    pub reported: u64,
    /// The most the dead node can have admitted and not mirrored.
    pub unflushed_bound: u64,
    /// The node killed.
    pub dead: usize,
}

impl std::fmt::Display for NearQuota {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let NearQuota { quota, before, admitted, reported, unflushed_bound, dead } = self;
        write!(
            f,
            "{before} before, {admitted} admitted, {reported} reported of a quota of {quota} (node {dead} killed; its unflushed bound {unflushed_bound})"
        )
    }
}

impl NearQuota {
    /// Issue 40's bounds: usage never above the quota, nor above what was
    /// admitted; admitted never past the quota by more than the dead
    /// node's unflushed requests; and no more lost than those. Prints the
    /// survivors' diagnosis before failing.
    pub fn assert_bounds(&self, c: &Cluster, label: &str) {
        let NearQuota { quota, before, admitted, reported, unflushed_bound, dead } = *self;
        let served = before + admitted;
        let survivors: Vec<usize> = (0..c.nodes.len()).filter(|&n| n != dead).collect();
        let failed = [
            (reported > quota).then(|| format!("usage reports {reported} of a quota of {quota}")),
            (reported > served + unflushed_bound).then(|| format!("{reported} reported, {served} admitted")),
            (served > quota + unflushed_bound).then(|| {
                format!("{served} admitted of a quota of {quota} (the dead node can have {unflushed_bound} unflushed)")
            }),
            (served.saturating_sub(reported) > unflushed_bound)
                .then(|| format!("lost {} (bound {unflushed_bound})", served.saturating_sub(reported))),
        ];
        if let Some(why) = failed.into_iter().flatten().next() {
            panic!("{label}: {why}\n{}", c.diagnosis(&survivors));
        }
    }
}
