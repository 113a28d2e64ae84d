//! The real `mds` process's log (API.md 16, Logs): JSON lines with their
//! fields, probes not logged at `info` on either listener, no key in any
//! line, and access-log lines dropped and counted, never waited for, when
//! nobody reads stderr.

use crate::common;

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use common::process::{cli, field, mds, migrate, start, store_with_key};
use serde_json::Value;

/// Every line of `text` as a JSON object with the fields every line has.
fn json_lines(text: &str) -> Vec<serde_json::Map<String, Value>> {
    text.lines()
        .filter(|l| !l.is_empty())
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}"));
            let o = v.as_object().unwrap_or_else(|| panic!("not an object: {l}")).clone();
            for name in ["timestamp", "level", "target", "message"] {
                assert!(o.get(name).is_some_and(Value::is_string), "no {name} in {l}");
            }
            o
        })
        .collect()
}

#[tokio::test]
async fn json_lines_carry_their_fields_probes_are_quiet_and_keys_absent() {
    let (dir, key) = store_with_key("pro");
    let token = cli(&dir, &["admin-tokens", "create", "ops"]).trim().to_owned();
    let mut server = start(&dir, &["serve", "--log-format", "json", "--admin-listen", "127.0.0.1:0"]);
    assert!(server.logged("serving the admin API"), "{}", server.logs());
    let logs = server.logs();
    let admin = logs.lines().find_map(|l| field(l, "admin")).expect("the admin address is logged").to_owned();
    let base = server.base();
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let get = |url: String, auth: Option<&str>| {
        let mut rb = client.get(url);
        if let Some(a) = auth {
            rb = rb.bearer_auth(a);
        }
        async move { rb.send().await.unwrap().status().as_u16() }
    };
    assert_eq!(get(format!("{base}/v1/companies"), Some(&key)).await, 200);
    assert_eq!(get(format!("{base}/v1/news/{key}"), Some(&key)).await, 404);
    assert_eq!(get(format!("{base}/v1/companies?search={key}"), None).await, 400);
    for probe in ["/healthz", "/readyz"] {
        assert_eq!(get(format!("{base}{probe}"), None).await, 200);
    }
    assert_eq!(get(format!("http://{admin}/metrics"), None).await, 200);
    assert_eq!(get(format!("http://{admin}/admin/v1/tiers"), Some(&token)).await, 200);
    assert!(server.sigterm().success());

    let lines = json_lines(&server.logs());
    json_lines(&server.stdout());
    let access: Vec<_> = lines.iter().filter(|l| l["target"] == "mds::access").collect();
    let kept = access.iter().find(|l| l["path"] == "/v1/companies").expect("the keyed request's line");
    assert_eq!(kept["level"], "INFO");
    assert_eq!(kept["message"], "request");
    assert_eq!(kept["method"], "GET");
    assert_eq!(kept["status"], 200);
    assert!(kept["latency_us"].is_u64(), "{kept:?}");
    assert_eq!(kept["key_prefix"].as_str(), Some(&key[..17]));
    assert!(kept["request_id"].as_str().is_some_and(|r| r.len() >= 20), "{kept:?}");
    let redacted = access.iter().find(|l| l["status"] == 404).expect("the line of the path with a key");
    assert_eq!(redacted["path"], "/v1/news/mds_live_[redacted]");
    // The admin listener's lines: same latency unit, the probe quiet.
    let admin_lines: Vec<_> = lines.iter().filter(|l| l["message"] == "admin request").collect();
    assert!(admin_lines.iter().any(|l| l["path"] == "/admin/v1/tiers" && l["latency_us"].is_u64()), "{admin_lines:?}");
    for l in lines.iter().filter(|l| l.contains_key("path")) {
        assert!(!["/metrics", "/healthz", "/readyz"].contains(&l["path"].as_str().unwrap()), "a probe at info: {l:?}");
    }
    let all = format!("{}\n{}", server.logs(), server.stdout());
    assert!(!all.contains(&key[12..]), "a key reached the logs:\n{all}");
}

/// Kills and reaps the child on drop (a failed test leaves no server).
struct Reaped(Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test]
async fn a_stalled_log_drops_access_lines_counts_them_and_never_slows_a_request() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("mds.db");
    migrate(&db.to_string_lossy());
    let mut cmd = mds();
    cmd.env("MDS_DATABASE_URL", db)
        .args(["serve", "--log-format", "json", "--log-buffer-lines", "4", "--listen", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut child = Reaped(cmd.spawn().unwrap());
    let mut stderr = BufReader::new(child.0.stderr.take().unwrap());
    // Read up to the address, then no more: the pipe (64 KiB) and the
    // writer's buffer fill, and the writer blocks.
    let mut read = String::new();
    let addr = loop {
        let mut line = String::new();
        assert!(stderr.read_line(&mut line).unwrap() > 0, "exited before serving:\n{read}");
        read.push_str(&line);
        if let Some(a) = field(&line, "addr") {
            break a.to_owned();
        }
    };
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let n = 3_000;
    let t = Instant::now();
    let mut set = tokio::task::JoinSet::new();
    for w in 0..4 {
        let (c, url) = (client.clone(), format!("http://{addr}/v1/companies/INE{w}"));
        set.spawn(async move {
            for _ in 0..n / 4 {
                assert_eq!(c.get(&url).send().await.unwrap().status(), 401);
            }
        });
    }
    while let Some(r) = set.join_next().await {
        r.unwrap();
    }
    let took = t.elapsed();
    // Far more than a blocked log could hold: a request waiting for it
    // would never finish.
    assert!(took < Duration::from_secs(60), "{n} requests took {took:?}");
    let metrics = client.get(format!("http://{addr}/metrics")).send().await.unwrap().text().await.unwrap();
    let dropped: u64 = metrics
        .lines()
        .find_map(|l| l.strip_prefix("mds_log_lines_dropped_total "))
        .expect("the drop counter")
        .parse()
        .unwrap();
    assert!(dropped > 0, "nothing dropped with nobody reading the log");
    // Read again: every line arrives whole, and every request has either
    // its line or a count.
    let ok = std::process::Command::new("kill").args(["-TERM", &child.0.id().to_string()]).status().unwrap();
    assert!(ok.success());
    let mut rest = String::new();
    stderr.read_to_string(&mut rest).unwrap();
    assert!(child.0.wait().unwrap().success());
    let written = json_lines(&rest).iter().filter(|l| l["target"] == "mds::access").count() as u64;
    assert_eq!(written + dropped, n as u64, "{written} lines written, {dropped} dropped");
}
