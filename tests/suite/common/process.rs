//! The real `mds` binary as a process: [`Proc::start`] runs it with piped
//! output, collects both streams, and waits for the address it serves on
//! (`addr=` or `"addr":` in the log of `serve`, the "Serving on" line of
//! `demo`); its
//! `Drop` kills and reaps it, so a failed test leaves no server behind.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tempfile::TempDir;

/// The `mds` binary under test (`MDS_TEST_BIN` names another build, a
/// release one, say, for the loops of `bench/`), with its log at `info`
/// (the address is logged there).
pub fn mds() -> Command {
    let bin = std::env::var_os("MDS_TEST_BIN").unwrap_or_else(|| env!("CARGO_BIN_EXE_mds").into());
    let mut c = Command::new(bin);
    c.env("MDS_LOG", "info");
    c
}

/// `mds` on a SQLite store in `dir`, run there. A directory with no store
/// yet gets one first, as an operator starts: `mds migrate` (the only
/// command that changes the schema, contract section 16).
pub fn in_dir(dir: &Path) -> Command {
    let db = dir.join("mds.db");
    if !db.exists() {
        migrate(&db.to_string_lossy());
    }
    let mut c = mds();
    c.env("MDS_DATABASE_URL", db).current_dir(dir);
    c
}

/// `mds migrate` on the database `url` (a SQLite path or a PostgreSQL
/// URL); asserts it succeeds.
pub fn migrate(url: &str) {
    let o = mds().env("MDS_DATABASE_URL", url).env("MDS_LOG", "warn").arg("migrate").output().unwrap();
    assert!(o.status.success(), "mds migrate: {}", String::from_utf8_lossy(&o.stderr));
}

/// Starts `mds ARGS` on the store in `dir`, on a free loopback port.
pub fn start(dir: &TempDir, args: &[&str]) -> Proc {
    let mut c = in_dir(dir.path());
    c.args(args);
    Proc::start(c)
}

/// Runs the operator command `mds ARGS` on the store in `dir`; asserts it
/// succeeds and returns its standard output.
pub fn cli(dir: &TempDir, args: &[&str]) -> String {
    let o = in_dir(dir.path()).args(args).env("MDS_LOG", "warn").output().unwrap();
    assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

/// A store in a new temporary directory with account `acme` and one key
/// of it on `tier`, made with the operator commands; the directory and key.
pub fn store_with_key(tier: &str) -> (TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    cli(&dir, &["accounts", "create", "acme"]);
    let key = cli(&dir, &["keys", "create", "--account", "acme", "--tier", tier]).trim().to_owned();
    (dir, key)
}

/// `n` concurrent counted requests with `key`, each asserted `200`.
pub async fn burst(client: &reqwest::Client, base: &str, key: &str, n: usize) {
    let mut set = tokio::task::JoinSet::new();
    for i in 0..n {
        let (c, url, k) = (
            client.clone(),
            format!("{base}/v1/companies?limit=1&letter={}", (b'A' + (i % 26) as u8) as char),
            key.to_owned(),
        );
        set.spawn(async move { c.get(url).bearer_auth(k).send().await.unwrap().status().as_u16() });
    }
    while let Some(s) = set.join_next().await {
        assert_eq!(s.unwrap(), 200);
    }
}

/// What `/v1/usage` of `key` says of this month's requests.
pub async fn requests_this_month(client: &reqwest::Client, base: &str, key: &str) -> u64 {
    let u: serde_json::Value =
        client.get(format!("{base}/v1/usage")).bearer_auth(key).send().await.unwrap().json().await.unwrap();
    u["current_month"]["requests"].as_u64().unwrap()
}

/// The value of the field `name` in a log line, text (`name=value`) or
/// JSON (`"name":"value"`).
pub fn field<'a>(line: &'a str, name: &str) -> Option<&'a str> {
    if let Some(i) = line.find(&format!("\"{name}\":\"")) {
        let rest = &line[i + name.len() + 4..];
        return rest.split('"').next();
    }
    let i = line.find(&format!("{name}="))?;
    line[i + name.len() + 1..].split_whitespace().next()
}

/// A running `mds` process with its output collected.
pub struct Proc {
    /// The process.
    pub child: Child,
    /// `host:port` it serves on.
    pub addr: String,
    stderr: Arc<Mutex<Vec<String>>>,
    stdout: Arc<Mutex<Vec<String>>>,
}

impl Proc {
    /// Starts `cmd` (with `--listen 127.0.0.1:0` added) and waits up to
    /// 30 s for the address it reports.
    pub fn start(mut cmd: Command) -> Proc {
        let child = cmd
            .args(["--listen", "127.0.0.1:0"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start mds");
        // Owned by a Proc at once, so its Drop kills and reaps it on any panic.
        let mut proc = Proc { child, addr: String::new(), stderr: Arc::default(), stdout: Arc::default() };
        let (tx, rx) = mpsc::channel::<String>();
        for (stream, sink) in [
            (Box::new(proc.child.stderr.take().unwrap()) as Box<dyn Read + Send>, proc.stderr.clone()),
            (Box::new(proc.child.stdout.take().unwrap()), proc.stdout.clone()),
        ] {
            let tx = tx.clone();
            // Drains the stream for the process's whole life, so it never
            // blocks on a full pipe.
            std::thread::spawn(move || {
                for line in BufReader::new(stream).lines().map_while(Result::ok) {
                    sink.lock().unwrap().push(line.clone());
                    let _ = tx.send(line);
                }
            });
        }
        // `mds demo` loads its data first (the lists, the change files,
        // 23k corporate-action rows, 730k rows of daily prices, the news):
        // in a debug build that is 34 s of CPU, two minutes on busy cores.
        // A generous deadline costs nothing when the server is quick.
        let deadline = Instant::now() + Duration::from_secs(300);
        loop {
            let line = rx
                .recv_timeout(deadline.saturating_duration_since(Instant::now()))
                .expect("server reports its address");
            if let Some(addr) = field(&line, "addr").or_else(|| line.strip_prefix("Serving on http://")) {
                proc.addr = addr.split_whitespace().next().unwrap().to_owned();
                return proc;
            }
        }
    }

    /// `http://host:port`.
    pub fn base(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Sends SIGTERM and waits up to `within` for the process to exit.
    pub fn sigterm_within(&mut self, within: Duration) -> ExitStatus {
        let ok = Command::new("kill").args(["-TERM", &self.child.id().to_string()]).status().unwrap();
        assert!(ok.success());
        let t = Instant::now();
        loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                return s;
            }
            assert!(t.elapsed() < within, "did not exit within {within:?} of SIGTERM; its log:\n{}", self.logs());
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Sends SIGTERM and waits up to 10 s for the process to exit.
    pub fn sigterm(&mut self) -> ExitStatus {
        self.sigterm_within(Duration::from_secs(10))
    }

    /// Kills the process (SIGKILL) and reaps it.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Its standard error so far.
    pub fn logs(&self) -> String {
        self.stderr.lock().unwrap().join("\n")
    }

    /// Whether a log line holds `needle`, waiting up to 10 s for it: a line
    /// the process wrote before its address may still be on its way from
    /// the stderr reader when [`Proc::start`] returns.
    pub fn logged(&self, needle: &str) -> bool {
        let deadline = Instant::now() + Duration::from_secs(10);
        while !self.logs().contains(needle) {
            if Instant::now() > deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        true
    }

    /// Its standard output so far.
    pub fn stdout(&self) -> String {
        self.stdout.lock().unwrap().join("\n")
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        self.kill();
    }
}
