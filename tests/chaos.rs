//! Chaos on a cluster (issue 25, point 4): three real `mds serve`
//! processes on a PRIVATE PostgreSQL (a cluster made with `initdb` in a
//! temporary directory, started with `pg_ctl` on a free port; never the
//! shared server) and a private Redis, under load, while PostgreSQL is
//! restarted or Redis stalled. After each fault settles: no `5xx` (nor any
//! other refusal) outside the fault window, the ledger on every node equals
//! what was served, report equals enforcement, and a key revoked during or
//! right after the fault is refused by every node within 1 s.
//! Needs PostgreSQL's server binaries (`/usr/lib/postgresql/*/bin`) and
//! `redis-server`; says it is skipped without them.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use common::cluster::{Cluster, SETTLE, get, usage};
use tempfile::TempDir;

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
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let pg = PrivatePg { bin, dir, port };
        let data = pg.data();
        pg.run("initdb", &["-D", &data, "-A", "trust", "-U", "postgres", "--no-sync"]);
        pg.pg_ctl(&["start"]);
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
        let (data, log) = (self.data(), self.dir.path().join("log").display().to_string());
        let opts = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200",
            self.port,
            self.dir.path().display()
        );
        let mut args = vec!["-D", &data, "-l", &log, "-o", &opts, "-w", "-t", "30"];
        args.extend_from_slice(action);
        self.run("pg_ctl", &args);
    }

    /// The administration URL.
    fn admin_url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }
}

impl Drop for PrivatePg {
    fn drop(&mut self) {
        let _ = self.command("pg_ctl").args(["-D", &self.data(), "-m", "immediate", "-w", "stop"]).output();
    }
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

/// What a load saw: the requests answered `200`, and every other outcome
/// with when it happened (since the load began).
#[derive(Default)]
struct Seen {
    ok: u64,
    other: Vec<(Duration, Option<u16>)>,
}

/// Paced load on all three nodes (four workers) with `client`, while
/// `fault` runs on a thread of its own after 500 ms, and for 500 ms after
/// it ends; what it saw and the fault window (since the load began).
async fn load_during(
    c: &Cluster,
    client: &reqwest::Client,
    fault: impl FnOnce() + Send + 'static,
) -> (Seen, Duration, Duration) {
    let t0 = Instant::now();
    let stop = Arc::new(AtomicBool::new(false));
    let seen = Arc::new(Mutex::new(Seen::default()));
    let mut workers = tokio::task::JoinSet::new();
    for w in 0..4 {
        let (client, base, key) = (client.clone(), c.bases[w % 3].clone(), c.key.clone());
        let (stop, seen) = (stop.clone(), seen.clone());
        workers.spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                let s = get(&client, &base, &key).await;
                {
                    let mut seen = seen.lock().unwrap();
                    match s {
                        Some(200) => seen.ok += 1,
                        other => seen.other.push((t0.elapsed(), other)),
                    }
                }
                tokio::time::sleep(Duration::from_millis(15)).await;
            }
        });
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let from = t0.elapsed();
    tokio::task::spawn_blocking(fault).await.unwrap();
    let to = t0.elapsed();
    tokio::time::sleep(Duration::from_millis(500)).await;
    stop.store(true, Ordering::Relaxed);
    while workers.join_next().await.is_some() {}
    let seen = std::mem::take(&mut *seen.lock().unwrap());
    (seen, from, to)
}

/// A new key of the cluster's account; revoked with `mds keys revoke`, it
/// is refused (`401`) by every node within 1 s of the command's return.
async fn revocation_reaches_every_node(c: &Cluster) {
    let other = c.cli(&["keys", "create", "--account", "acme", "--tier", "crash"]).trim().to_owned();
    let client = &c.client;
    // Every node knows it (a node refuses a key it has not loaded yet).
    for base in &c.bases {
        let t = Instant::now();
        while get(client, base, &other).await != Some(200) {
            assert!(t.elapsed() < Duration::from_secs(5), "{base} never accepted the new key");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    c.cli(&["keys", "revoke", &other[..17]]);
    let t = Instant::now();
    for base in &c.bases {
        while get(client, base, &other).await != Some(401) {
            assert!(t.elapsed() < Duration::from_secs(1), "{base} still accepts a revoked key");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

/// PostgreSQL stopped (fast shutdown, every connection cut) for 1.5 s and
/// started again under load:
/// the nodes answer nothing but `200` outside the fault window; once it
/// settles every node's ledger holds exactly what was served, reports it,
/// and admits exactly the rest of the quota; a revocation right after the
/// restart reaches every node within 1 s.
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
    let (seen, from, to) = load_during(&c, &client, move || {
        restarting.pg_ctl(&["-m", "fast", "stop"]);
        std::thread::sleep(Duration::from_millis(1_500));
        restarting.pg_ctl(&["start"]);
    })
    .await;
    eprintln!("served {}, other {:?}, fault window {from:?}..{to:?}", seen.ok, seen.other);
    for &(at, status) in &seen.other {
        assert!(
            at >= from && at <= to + GRACE && status.is_none_or(|s| s >= 500),
            "{status:?} at {at:?}, outside the fault window {from:?}..{to:?} (or not a 5xx)"
        );
    }
    revocation_reaches_every_node(&c).await;
    tokio::time::sleep(SETTLE).await;
    for base in &c.bases {
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
    c.redis.signal("STOP");
    let stalled = Instant::now();
    let (seen, from, to) = load_during(&c, &client, || std::thread::sleep(Duration::from_millis(500))).await;
    revocation_reaches_every_node(&c).await;
    assert!(stalled.elapsed() < Duration::from_secs(4), "the revocation was checked while Redis was stalled");
    c.redis.signal("CONT");
    eprintln!("served {}, other {:?}, fault window {from:?}..{to:?}", seen.ok, seen.other);
    assert!(seen.other.is_empty(), "only 200 while Redis is stalled: {:?}", seen.other);
    tokio::time::sleep(SETTLE).await;
    for base in &c.bases {
        assert_eq!(usage(&c.client, base, &c.key).await.0, seen.ok, "{base}: the ledger holds what was served");
    }
    c.spend_the_rest(&[0, 1, 2]).await;
    assert!(t0.elapsed() < Duration::from_secs(40), "took {:?}", t0.elapsed());
}
