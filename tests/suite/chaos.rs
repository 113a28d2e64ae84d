//! Chaos on a cluster (issue 25, point 4): three real `mds serve`
//! processes on a PRIVATE PostgreSQL (a cluster made with `initdb` in a
//! temporary directory, started with `pg_ctl` on a free port; never the
//! shared server) and a private Redis, under load, while PostgreSQL is
//! restarted, Redis stalled, or the nodes' links to both slowed and reset
//! (a toxiproxy-style TCP proxy in the test, [`Proxy`]). After each fault
//! settles: no `5xx` (nor any other refusal) outside the fault window, the
//! ledger on every node equals what was served, report equals enforcement,
//! and a key revoked during or right after the fault is refused by every
//! node within 1 s. Then all of them at random, one after another, for
//! `MDS_CHAOS_SECONDS` (40 s here; `bench/chaos.sh` runs it for minutes),
//! with a node SIGKILLed and started again among them: the ledger is then
//! what was served less at most the crash loss bound.
//! Needs PostgreSQL's server binaries (`/usr/lib/postgresql/*/bin`) and
//! `redis-server`; says it is skipped without them.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use common::cluster::{Cluster, SETTLE, get, usage};
use tempfile::TempDir;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::sync::watch;

/// Time after a fault ends during which a node may still answer for it
/// (a pool reconnecting, a flush retried).
const GRACE: Duration = Duration::from_secs(1);

/// A private PostgreSQL cluster in a temporary directory, on a free port,
/// run as the `postgres` user when the test runs as root; stopped on drop.
struct PrivatePg {
    bin: PathBuf,
    dir: TempDir,
    port: u16,
}

impl PrivatePg {
    /// Made with `initdb` and started with `pg_ctl`; `None` (it says the
    /// test is skipped) without them.
    fn start() -> Option<PrivatePg> {
        let Some(bin) = server_bin() else {
            eprintln!("skipped: needs initdb and pg_ctl (/usr/lib/postgresql/*/bin)");
            return None;
        };
        let dir = tempfile::tempdir().unwrap();
        if is_root() {
            let ok = Command::new("chown").args(["-R", "postgres"]).arg(dir.path()).status().unwrap();
            assert!(ok.success(), "chown the cluster's directory to postgres");
        }
        let mut pg = PrivatePg { bin, dir, port: 0 };
        let data = pg.data();
        pg.run("initdb", &["-D", &data, "-A", "trust", "-U", "postgres", "--no-sync"]);
        // The port is chosen just before the start, not before `initdb`,
        // and chosen again if another socket took it in between.
        for tries in 1.. {
            pg.port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
            let o = pg.command("pg_ctl").args(pg.pg_ctl_args(&["start"])).output().unwrap();
            if o.status.success() {
                break;
            }
            assert!(tries < 5, "pg_ctl start: {}", String::from_utf8_lossy(&o.stderr));
        }
        Some(pg)
    }

    fn data(&self) -> String {
        self.dir.path().join("data").display().to_string()
    }

    /// The server binary `tool`, run as `postgres` under root.
    fn command(&self, tool: &str) -> Command {
        let exe = self.bin.join(tool);
        let mut c = if is_root() {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(exe);
            c
        } else {
            Command::new(exe)
        };
        c.current_dir(self.dir.path());
        c
    }

    /// Runs `tool ARGS` and asserts it succeeds.
    fn run(&self, tool: &str, args: &[&str]) {
        let o = self.command(tool).args(args).output().unwrap();
        assert!(o.status.success(), "{tool} {args:?}: {}", String::from_utf8_lossy(&o.stderr));
    }

    /// `pg_ctl ACTION` on the cluster, waiting for it to finish.
    fn pg_ctl(&self, action: &[&str]) {
        let args = self.pg_ctl_args(action);
        self.run("pg_ctl", &args.iter().map(String::as_str).collect::<Vec<_>>());
    }

    /// The arguments of `pg_ctl ACTION` on the cluster, on its port.
    fn pg_ctl_args(&self, action: &[&str]) -> Vec<String> {
        let (data, log) = (self.data(), self.dir.path().join("log").display().to_string());
        let opts = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200",
            self.port,
            self.dir.path().display()
        );
        let args = ["-D", &data, "-l", &log, "-o", &opts, "-w", "-t", "30"];
        args.iter().chain(action).map(|a| a.to_string()).collect()
    }

    /// The administration URL.
    fn admin_url(&self) -> String {
        admin_url_on(self.port)
    }
}

impl Drop for PrivatePg {
    fn drop(&mut self) {
        let _ = self.command("pg_ctl").args(["-D", &self.data(), "-m", "immediate", "-w", "stop"]).output();
    }
}

/// The administration URL of a private cluster reached at `port`.
fn admin_url_on(port: u16) -> String {
    format!("postgres://postgres@127.0.0.1:{port}/postgres")
}

fn is_root() -> bool {
    Command::new("id").arg("-u").output().is_ok_and(|o| o.stdout.trim_ascii() == b"0")
}

/// The newest `/usr/lib/postgresql/*/bin` with `initdb` and `pg_ctl`.
fn server_bin() -> Option<PathBuf> {
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| {
            let e = e.ok()?;
            let version = e.file_name().to_str()?.parse().ok()?;
            let bin = e.path().join("bin");
            let has = |t: &str| Path::new(&bin).join(t).exists();
            (has("initdb") && has("pg_ctl")).then_some((version, bin))
        })
        .collect();
    found.sort();
    found.pop().map(|(_, bin)| bin)
}

/// A toxiproxy-style TCP proxy on a free loopback port in front of a
/// loopback `upstream` port: every chunk is forwarded after the latency set
/// (none at first), and [`Proxy::reset`] cuts every open connection with a
/// TCP reset. Dropped, it stops accepting and resets what is open.
struct Proxy {
    port: u16,
    latency_ms: Arc<AtomicU64>,
    resets: watch::Sender<u64>,
    /// How many connections a reset has cut.
    cut: Arc<AtomicU64>,
    accept: tokio::task::JoinHandle<()>,
}

impl Proxy {
    fn start(upstream: u16) -> Proxy {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let listener = tokio::net::TcpListener::from_std(listener).unwrap();
        let latency_ms = Arc::new(AtomicU64::new(0));
        let (resets, _) = watch::channel(0);
        let cut = Arc::new(AtomicU64::new(0));
        let (latency, reset, counted) = (latency_ms.clone(), resets.clone(), cut.clone());
        let accept = tokio::spawn(async move {
            while let Ok((down, _)) = listener.accept().await {
                // Refused upstream: the client sees its connection closed.
                if let Ok(up) = TcpStream::connect(("127.0.0.1", upstream)).await {
                    let (latency, reset, counted) = (latency.clone(), reset.subscribe(), counted.clone());
                    tokio::spawn(async move {
                        if pipe(down, up, latency, reset).await {
                            counted.fetch_add(1, Ordering::Relaxed);
                        }
                    });
                }
            }
        });
        Proxy { port, latency_ms, resets, cut, accept }
    }

    /// Delays every chunk, each way, by `latency` from now on.
    fn set_latency(&self, latency: Duration) {
        self.latency_ms.store(latency.as_millis() as u64, Ordering::Relaxed);
    }

    /// Resets every connection open now.
    fn reset(&self) {
        self.resets.send_modify(|n| *n += 1);
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

/// Forwards both ways between `down` and `up` until both ends close, or a
/// reset (or the proxy's end) cuts them both with a TCP reset; whether it
/// was cut.
async fn pipe(down: TcpStream, up: TcpStream, latency: Arc<AtomicU64>, mut reset: watch::Receiver<u64>) -> bool {
    let (mut down_r, mut down_w) = down.into_split();
    let (mut up_r, mut up_w) = up.into_split();
    let cut = tokio::select! {
        _ = async {
            tokio::join!(forward(&mut down_r, &mut up_w, &latency), forward(&mut up_r, &mut down_w, &latency))
        } => false,
        _ = reset.changed() => true,
    };
    if cut {
        let _ = down_w.as_ref().set_zero_linger();
        let _ = up_w.as_ref().set_zero_linger();
    }
    cut
}

/// Copies `from` to `to`, each chunk after the latency of the moment.
async fn forward(from: &mut OwnedReadHalf, to: &mut OwnedWriteHalf, latency: &AtomicU64) {
    let mut buf = vec![0; 16 * 1024];
    while let Ok(n @ 1..) = from.read(&mut buf).await {
        let ms = latency.load(Ordering::Relaxed);
        if ms > 0 {
            tokio::time::sleep(Duration::from_millis(ms)).await;
        }
        if to.write_all(&buf[..n]).await.is_err() {
            break;
        }
    }
    let _ = to.shutdown().await;
}

/// What a load saw: the requests answered `200`, and every other outcome
/// (status and body, or none) with when it happened (since the load began).
#[derive(Default)]
struct Seen {
    ok: u64,
    other: Vec<(Duration, Option<u16>, String)>,
}

/// Paced load on all three nodes (four workers) with `client`, while
/// `fault` runs after 500 ms, and for 500 ms after it ends; what it saw and
/// the fault window (since the load began).
async fn load_during(
    c: &Cluster,
    client: &reqwest::Client,
    fault: impl Future<Output = ()>,
) -> (Seen, Duration, Duration) {
    let t0 = Instant::now();
    let stop = Arc::new(AtomicBool::new(false));
    let seen = Arc::new(Mutex::new(Seen::default()));
    let mut workers = tokio::task::JoinSet::new();
    for w in 0..4 {
        let (client, base, key) = (client.clone(), c.base(w % 3), c.key.clone());
        let (stop, seen) = (stop.clone(), seen.clone());
        workers.spawn(async move {
            let url = format!("{base}/v1/companies?limit=1");
            while !stop.load(Ordering::Relaxed) {
                let answer = match client.get(&url).bearer_auth(&key).send().await {
                    Ok(r) => Some((r.status().as_u16(), r.text().await.unwrap_or_default())),
                    Err(_) => None,
                };
                {
                    let mut seen = seen.lock().unwrap();
                    match answer {
                        Some((200, _)) => seen.ok += 1,
                        Some((s, body)) => seen.other.push((t0.elapsed(), Some(s), body)),
                        None => seen.other.push((t0.elapsed(), None, String::new())),
                    }
                }
                tokio::time::sleep(Duration::from_millis(15)).await;
            }
        });
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let from = t0.elapsed();
    fault.await;
    let to = t0.elapsed();
    tokio::time::sleep(Duration::from_millis(500)).await;
    stop.store(true, Ordering::Relaxed);
    while workers.join_next().await.is_some() {}
    let seen = std::mem::take(&mut *seen.lock().unwrap());
    (seen, from, to)
}

/// Asserts that every answer but `200` came within the fault window
/// `from..to` (and `GRACE` after), and was a `5xx` or none; if not, says
/// what the nodes logged.
fn only_5xx_within(c: &Cluster, seen: &Seen, from: Duration, to: Duration) {
    for (at, status, body) in &seen.other {
        let inside = *at >= from && *at <= to + GRACE && status.is_none_or(|s| s >= 500);
        if !inside {
            let logs: Vec<String> = c.nodes.iter().map(|n| n.logs()).collect();
            panic!(
                "{status:?} {body} at {at:?}, outside the fault window {from:?}..{to:?}; logs:\n{}",
                logs.join("\n")
            );
        }
    }
}

/// A new key of the cluster's account, once every node has admitted it
/// (asked with `patient`): revoked with `mds keys revoke`, it is refused
/// (`401`) by every node within 1 s of the command's return.
async fn revocation_reaches_every_node(c: &Cluster, patient: &reqwest::Client) {
    let other = key_every_node_accepts(c, patient).await;
    revoked_everywhere_within_a_second(c, &other).await;
}

/// A new key of the cluster's account, once every node accepts it (a node
/// refuses a key it has not loaded yet).
async fn key_every_node_accepts(c: &Cluster, patient: &reqwest::Client) -> String {
    let other = c.cli(&["keys", "create", "--account", "acme", "--tier", "crash"]).trim().to_owned();
    for base in &c.bases() {
        let t = Instant::now();
        loop {
            let s = get(patient, base, &other).await;
            if s == Some(200) {
                break;
            }
            assert!(t.elapsed() < Duration::from_secs(10), "{base} never accepted the new key: {s:?}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    other
}

/// Revokes `key` (by the CLI) and checks every node refuses it within 1 s.
async fn revoked_everywhere_within_a_second(c: &Cluster, key: &str) {
    c.cli(&["keys", "revoke", &key[..17]]);
    let t = Instant::now();
    for base in &c.bases() {
        while get(&c.client, base, key).await != Some(401) {
            assert!(t.elapsed() < Duration::from_secs(1), "{base} still accepts a revoked key");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

/// PostgreSQL stopped (fast shutdown, every connection cut) for 1.5 s and
/// started again under load: the nodes answer nothing but `200` outside
/// the fault window; once it settles every node's ledger holds exactly
/// what was served, reports it, and admits exactly the rest of the quota;
/// a revocation right after the restart reaches every node within 1 s.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_restarted_under_load_ledger_equals_served() {
    let Some(pg) = PrivatePg::start().map(Arc::new) else { return };
    let Some(c) = Cluster::start(&pg.admin_url(), 2_000).await else { return };
    let t0 = Instant::now();
    // A patient client: a request given up on may have been served, and
    // then what was served is unknown.
    let client = reqwest::Client::builder().no_proxy().timeout(Duration::from_secs(20)).build().unwrap();
    let restarting = pg.clone();
    // Down for longer than a flush interval and a reload interval, so both
    // fail and are retried.
    let restart = async {
        let blocking = tokio::task::spawn_blocking(move || {
            restarting.pg_ctl(&["-m", "fast", "stop"]);
            std::thread::sleep(Duration::from_millis(1_500));
            restarting.pg_ctl(&["start"]);
        });
        blocking.await.unwrap();
    };
    let (seen, from, to) = load_during(&c, &client, restart).await;
    eprintln!("served {}, other {:?}, fault window {from:?}..{to:?}", seen.ok, seen.other);
    only_5xx_within(&c, &seen, from, to);
    revocation_reaches_every_node(&c, &client).await;
    tokio::time::sleep(SETTLE).await;
    for base in &c.bases() {
        let (requests, remaining) = usage(&c.client, base, &c.key).await;
        assert_eq!(requests, seen.ok, "{base}: the ledger holds what was served");
        assert_eq!(remaining, c.quota - seen.ok);
    }
    c.spend_the_rest(&[0, 1, 2]).await;
    assert!(t0.elapsed() < Duration::from_secs(40), "took {:?}", t0.elapsed());
}

/// Redis stalled (SIGSTOP) under load: a key revoked meanwhile is refused
/// by every node within 1 s, nothing but `200` is answered outside the
/// stall, and once Redis is back and the leases settle, the ledger holds
/// what was served and report equals enforcement.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revocation_reaches_every_node_while_redis_is_stalled() {
    let Some(pg) = PrivatePg::start() else { return };
    let Some(c) = Cluster::start(&pg.admin_url(), 1_000).await else { return };
    let t0 = Instant::now();
    let client = reqwest::Client::builder().no_proxy().timeout(Duration::from_secs(20)).build().unwrap();
    // Every node holds a lease of the key when Redis stalls.
    for base in &c.bases() {
        assert_eq!(get(&client, base, &c.key).await, Some(200));
    }
    let warm = 3;
    // Made before the stall: what the stall is to hold is the revocation,
    // not a CLI run and a key's first loading (which under a loaded CI took
    // the check past its bound).
    let other = key_every_node_accepts(&c, &client).await;
    c.redis.signal("STOP");
    let stalled = Instant::now();
    let (seen, from, to) =
        load_during(&c, &client, async { tokio::time::sleep(Duration::from_millis(1_500)).await }).await;
    revoked_everywhere_within_a_second(&c, &other).await;
    assert!(stalled.elapsed() < Duration::from_secs(5), "the revocation was checked while Redis was stalled");
    c.redis.signal("CONT");
    eprintln!("served {}, other {:?}, fault window {from:?}..{to:?}", seen.ok, seen.other);
    assert!(seen.other.is_empty(), "only 200 while Redis is stalled: {:?}", seen.other);
    tokio::time::sleep(SETTLE).await;
    for base in &c.bases() {
        assert_eq!(usage(&c.client, base, &c.key).await.0, warm + seen.ok, "{base}: the ledger holds what was served");
    }
    c.spend_the_rest(&[0, 1, 2]).await;
    assert!(t0.elapsed() < Duration::from_secs(40), "took {:?}", t0.elapsed());
}

/// Latency, then resets, on the node–Redis and node–PostgreSQL connections
/// (each through a proxy) under load: a key revoked while the links are
/// slow is refused by every node within 1 s, nothing but `200` is answered
/// outside the fault window, and once it settles the ledger holds what was
/// served and report equals enforcement.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_and_reset_links_to_redis_and_postgres() {
    let Some(pg) = PrivatePg::start() else { return };
    let to_pg = Arc::new(Proxy::start(pg.port));
    let mut to_redis = None;
    let route = |url: &str, r: &mds_testkit::redis::RedisServer| {
        let p = Proxy::start(r.port);
        let redis = format!("redis://127.0.0.1:{}", p.port);
        to_redis = Some(Arc::new(p));
        (url.replace(&format!(":{}/", pg.port), &format!(":{}/", to_pg.port)), redis)
    };
    let Some(c) = Cluster::start_with(&pg.admin_url(), 2_000, route).await else { return };
    let to_redis = to_redis.unwrap();
    let links = [to_pg.clone(), to_redis.clone()];
    let t0 = Instant::now();
    let client = reqwest::Client::builder().no_proxy().timeout(Duration::from_secs(20)).build().unwrap();
    let faults = async {
        to_redis.set_latency(REDIS_LATENCY);
        to_pg.set_latency(POSTGRES_LATENCY);
        revocation_reaches_every_node(&c, &client).await;
        for _ in 0..2 {
            links.iter().for_each(|l| l.reset());
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
        links.iter().for_each(|l| l.set_latency(Duration::ZERO));
        links.iter().for_each(|l| l.reset());
    };
    let (seen, from, to) = load_during(&c, &client, faults).await;
    eprintln!("served {}, other {:?}, fault window {from:?}..{to:?}", seen.ok, seen.other);
    tokio::time::sleep(Duration::from_millis(50)).await;
    for (link, proxy) in [("PostgreSQL", &to_pg), ("Redis", &to_redis)] {
        assert!(proxy.cut.load(Ordering::Relaxed) > 0, "no node–{link} connection was reset");
    }
    only_5xx_within(&c, &seen, from, to);
    tokio::time::sleep(SETTLE).await;
    for base in &c.bases() {
        assert_eq!(usage(&c.client, base, &c.key).await.0, seen.ok, "{base}: the ledger holds what was served");
    }
    c.spend_the_rest(&[0, 1, 2]).await;
    assert!(t0.elapsed() < Duration::from_secs(40), "took {:?}", t0.elapsed());
}

/// The latency added to each chunk on the node–Redis links in
/// [`slow_and_reset_links_to_redis_and_postgres`]. Measured there: a new
/// key's first request then takes about 1.5 s (its lookup and first lease).
const REDIS_LATENCY: Duration = Duration::from_millis(100);

/// The latency added to each chunk on the node–PostgreSQL links. Measured:
/// a revocation reaches every node in about 0.65 s at 10 ms, 0.9 s at
/// 20 ms, and not within 1 s at 50 ms (each reload's queries pay it).
const POSTGRES_LATENCY: Duration = Duration::from_millis(10);

/// One fault of the random run.
#[derive(Debug, Clone, Copy)]
enum Fault {
    /// A node SIGKILLed, started again (a new node) 1 to 2 s later.
    Kill(usize),
    /// Redis SIGSTOPped for 2 s.
    RedisStall,
    /// Redis killed and started again, empty.
    RedisRestart,
    /// PostgreSQL stopped (fast) for 1.5 s.
    PostgresRestart,
}

/// Random faults, one after another with 2 s of calm between, under
/// paced load on every node, for `MDS_CHAOS_SECONDS` (40 by default: the
/// short run of CI; `bench/chaos.sh` runs it for minutes): a node SIGKILLed
/// and started again, Redis stalled or restarted empty, PostgreSQL
/// restarted. Nothing but a `5xx` or no answer outside a fault window (and
/// only one of those within); at the end, on every node, the ledger is
/// what the client saw served less at most the measured crash loss bound
/// (100 ms of a killed node's traffic, by the usage mirror, per kill) and
/// at most what it never saw answered more; then a node killed near the
/// quota under 24 clients admits no more than the quota and its unflushed
/// requests, and usage reports no more than the quota; report equals
/// enforcement; a revocation reaches every node within 1 s. Prints the
/// figures.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_faults_under_load_keep_the_invariants() {
    let seconds: u64 = std::env::var("MDS_CHAOS_SECONDS").ok().and_then(|s| s.parse().ok()).unwrap_or(40);
    let seed: u64 = std::env::var("MDS_CHAOS_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(|| {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64 | 1
    });
    eprintln!("chaos seed {seed} (MDS_CHAOS_SEED={seed} runs the same faults)");
    let mut state = seed;
    let mut random = move || {
        // xorshift64
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let Some(pg) = PrivatePg::start().map(Arc::new) else { return };
    let Some(mut c) = Cluster::start(&pg.admin_url(), 100_000_000).await else { return };
    let t0 = Instant::now();
    let bases = Arc::new(std::sync::RwLock::new(c.bases()));
    let stop = Arc::new(AtomicBool::new(false));
    let ok: Arc<[AtomicU64; 3]> = Arc::new(Default::default());
    let other = Arc::new(Mutex::new(Vec::<(Duration, usize, Option<u16>)>::new()));
    let mut workers = tokio::task::JoinSet::new();
    const PER_NODE: usize = 2;
    // A patient client: a request given up on may have been served (and
    // the machine may be slow); a node killed answers no at once.
    let patient = reqwest::Client::builder().no_proxy().timeout(Duration::from_secs(10)).build().unwrap();
    for w in 0..3 * PER_NODE {
        let n = w % 3;
        let (client, key, bases) = (patient.clone(), c.key.clone(), bases.clone());
        let (stop, ok, other) = (stop.clone(), ok.clone(), other.clone());
        workers.spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                let base = bases.read().unwrap()[n].clone();
                match get(&client, &base, &key).await {
                    Some(200) => {
                        ok[n].fetch_add(1, Ordering::Relaxed);
                    }
                    s => {
                        other.lock().unwrap().push((t0.elapsed(), n, s));
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        });
    }
    let mut windows: Vec<(Fault, Duration, Duration)> = Vec::new();
    let mut loss_bound = 0u64;
    let mut i = 0u64;
    while t0.elapsed() < Duration::from_secs(seconds) {
        tokio::time::sleep(Duration::from_secs(2)).await;
        i += 1;
        let fault = match random() % 4 {
            0 => Fault::Kill((random() % 3) as usize),
            1 => Fault::RedisStall,
            2 => Fault::RedisRestart,
            _ => Fault::PostgresRestart,
        };
        // A killed node's rate over the last second, for its loss bound.
        if let Fault::Kill(n) = fault {
            let before = ok[n].load(Ordering::Relaxed);
            tokio::time::sleep(Duration::from_secs(1)).await;
            let rate = ok[n].load(Ordering::Relaxed) - before;
            loss_bound += rate.div_ceil(10) + PER_NODE as u64;
        }
        let from = t0.elapsed();
        match fault {
            Fault::Kill(n) => {
                c.nodes[n].kill();
                tokio::time::sleep(Duration::from_millis(1_000 + random() % 1_000)).await;
                c.restart(n).await;
                bases.write().unwrap()[n] = c.base(n);
            }
            Fault::RedisStall => {
                c.redis.signal("STOP");
                tokio::time::sleep(Duration::from_secs(2)).await;
                c.redis.signal("CONT");
            }
            Fault::RedisRestart => {
                c.redis.signal("KILL");
                tokio::time::sleep(Duration::from_millis(200)).await;
                c.redis = mds_testkit::redis::RedisServer::start_on(c.redis.port).expect("restart redis-server");
            }
            Fault::PostgresRestart => {
                let pg = pg.clone();
                tokio::task::spawn_blocking(move || {
                    pg.pg_ctl(&["-m", "fast", "stop"]);
                    std::thread::sleep(Duration::from_millis(1_500));
                    pg.pg_ctl(&["start"]);
                })
                .await
                .unwrap();
            }
        }
        windows.push((fault, from, t0.elapsed()));
        eprintln!("fault {i}: {fault:?} {from:?}..{:?}", t0.elapsed());
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    stop.store(true, Ordering::Relaxed);
    while workers.join_next().await.is_some() {}
    tokio::time::sleep(SETTLE * 2).await;

    // Nothing but a 5xx or no answer, and only within a fault window.
    let other = std::mem::take(&mut *other.lock().unwrap());
    for (at, node, status) in &other {
        let inside = windows.iter().any(|(_, from, to)| at >= from && *at <= *to + GRACE);
        assert!(
            inside && status.is_none_or(|s| s >= 500),
            "{status:?} from node {node} at {at:?}, windows {windows:?}"
        );
    }
    let served: u64 = ok.iter().map(|a| a.load(Ordering::Relaxed)).sum();
    let unanswered = other.iter().filter(|(_, _, s)| s.is_none()).count() as u64;
    let (ledger, _) = usage(&c.client, &c.base(0), &c.key).await;
    for base in &c.bases()[1..] {
        assert_eq!(usage(&c.client, base, &c.key).await.0, ledger, "{base}: every node reports the same");
    }
    let lost = served as i64 - ledger as i64;
    let kills = windows.iter().filter(|(f, _, _)| matches!(f, Fault::Kill(_))).count();
    eprintln!(
        "chaos {seconds} s: {} faults ({kills} kills), served {served}, ledger {ledger}, lost {lost} (bound {loss_bound}), {} not 200 ({unanswered} unanswered)",
        windows.len(),
        other.len()
    );
    assert!(lost <= loss_bound as i64, "lost {lost}, more than the bound {loss_bound}");
    assert!(-lost <= unanswered as i64, "the ledger holds {} more than was served", -lost);

    // The quota brought within reach; a node killed near it under 24
    // clients on every node (issue 40: admitted at most the quota and the
    // dead node's unflushed requests, reported at most the quota); then,
    // the node started again, report = enforcement as the rest is spent.
    let quota = ledger + 1_500;
    c.cli(&["tiers", "set", "crash", "--rate-limit-per-minute", "100000", "--monthly-quota", &quota.to_string()]);
    c.quota = quota;
    tokio::time::sleep(SETTLE).await;
    let dead = (random() % 3) as usize;
    let near = c.kill_near_the_quota(dead, None).await;
    eprintln!("near the quota: {near}");
    near.assert_bounds(&c, "chaos, a node killed near the quota");
    c.restart(dead).await;
    c.spend_the_rest(&[0, 1, 2]).await;
    revocation_reaches_every_node(&c, &patient).await;
}
