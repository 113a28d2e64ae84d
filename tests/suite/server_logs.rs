//! The real `mds` process's log (API.md 16, Logs): JSON lines with their
//! fields, probes not logged at `info` on either listener, no key in any
//! line, access lines in both formats as tracing wrote them and only where
//! `MDS_LOG` lets them through, and access-log lines dropped and counted,
//! never waited for, when nobody reads stderr.

use crate::common;

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use common::process::{cli, field, in_dir, mds, migrate, start, store_with_key};
use serde_json::Value;
use tempfile::TempDir;

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
    let written = access_json(&rest).len() as u64;
    assert_eq!(written + dropped, n as u64, "{written} lines written, {dropped} dropped");
}

/// The access lines of the JSON log `text`.
fn access_json(text: &str) -> Vec<serde_json::Map<String, Value>> {
    json_lines(text).into_iter().filter(|l| l["target"] == "mds::access").collect()
}

/// A free loopback port (bound, then let go).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// What `mds serve` on the store in `dir`, with `MDS_LOG=log` and
/// `--log-format format`, wrote to stderr (all of it: read after its exit)
/// for: a keyed kept page, a path holding the key (`404`), a probe, and an
/// admin request with `token`.
async fn served(dir: &TempDir, log: &str, format: &str, key: &str, token: &str) -> String {
    // A file, not a pipe: at `debug` the other crates' lines would fill a
    // pipe nobody reads.
    let stderr = dir.path().join(format!("stderr-{}-{format}.log", log.replace([',', ':', '='], "_")));
    // A bound: a port taken by a socket that accepts and never answers
    // would otherwise hold the wait below forever.
    let client = reqwest::Client::builder().no_proxy().timeout(Duration::from_secs(10)).build().unwrap();
    let get = |url: String, auth: Option<&str>| {
        let mut rb = client.get(url);
        if let Some(a) = auth {
            rb = rb.bearer_auth(a);
        }
        async move { rb.send().await.map(|r| r.status().as_u16()) }
    };
    // The ports are chosen before the process binds them (at `warn` it
    // logs no address to learn a port 0 from), so another test's socket
    // may take one in between: the process then exits saying so, and is
    // started again on two new ports.
    let mut attempts = 0;
    let (mut child, public) = loop {
        attempts += 1;
        let (public, admin) = (format!("127.0.0.1:{}", free_port()), format!("127.0.0.1:{}", free_port()));
        let mut cmd = in_dir(dir.path());
        cmd.env("MDS_LOG", log)
            .args(["serve", "--log-format", format, "--listen", &public, "--admin-listen", &admin])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&stderr).unwrap());
        let mut child = Reaped(cmd.spawn().unwrap());
        // Up when its admin listener answers (not a probe of the public
        // one: those are what the filter may or may not let through).
        let t = Instant::now();
        let exited = loop {
            if get(format!("http://{admin}/admin/v1/tiers"), Some(token)).await.ok() == Some(200) {
                break false;
            }
            if child.0.try_wait().unwrap().is_some() {
                break true;
            }
            let text = std::fs::read_to_string(&stderr).unwrap_or_default();
            assert!(t.elapsed() < Duration::from_secs(60), "mds serve did not come up with MDS_LOG={log}:\n{text}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        if !exited {
            break (child, public);
        }
        let text = std::fs::read_to_string(&stderr).unwrap_or_default();
        assert!(text.contains("cannot listen on") && attempts < 5, "mds serve exited with MDS_LOG={log}:\n{text}");
    };
    assert_eq!(get(format!("http://{public}/healthz"), None).await.unwrap(), 200);
    assert_eq!(get(format!("http://{public}/v1/companies"), Some(key)).await.unwrap(), 200);
    assert_eq!(get(format!("http://{public}/v1/news/{key}"), Some(key)).await.unwrap(), 404);
    let ok = std::process::Command::new("kill").args(["-TERM", &child.0.id().to_string()]).status().unwrap();
    assert!(ok.success());
    assert!(child.0.wait().unwrap().success());
    let text = std::fs::read_to_string(&stderr).unwrap();
    assert!(!text.contains(&key[12..]), "a key reached the logs:\n{text}");
    text
}

/// An access line of the text log: its timestamp, level, message and
/// fields (name, value as written) in order.
type Access<'a> = (&'a str, &'a str, &'a str, Vec<(&'a str, &'a str)>);

/// `line` as an access line of the text log; `None` for another line.
fn text_access(line: &str) -> Option<Access<'_>> {
    let (timestamp, rest) = line.split_once(' ')?;
    let (level, rest) = rest.trim_start().split_once(' ')?;
    let (message, rest) =
        ["request ", "admin request "].iter().find_map(|m| Some((m.trim(), rest.strip_prefix(m)?)))?;
    let fields: Option<Vec<_>> = rest.split(' ').map(|f| f.split_once('=')).collect();
    let fields = fields?;
    fields.iter().any(|(n, _)| *n == "latency_us").then_some((timestamp, level, message, fields))
}

/// The value of the field `name` of `line`, as written ("" if none).
fn value(line: &Access<'_>, name: &str) -> String {
    line.3.iter().find(|f| f.0 == name).map_or("", |f| f.1).to_owned()
}

/// Asserts `timestamp` is RFC 3339 in UTC with microseconds, and recent.
fn recent(timestamp: &str) {
    assert!(timestamp.len() == 27 && timestamp.ends_with('Z'), "{timestamp}");
    let at: chrono::DateTime<chrono::Utc> = timestamp.parse().unwrap();
    assert!((chrono::Utc::now() - at).num_seconds().abs() < 120, "{timestamp}");
}

#[tokio::test]
async fn access_lines_are_written_in_both_formats_as_the_filter_lets_them() {
    let (dir, key) = store_with_key("pro");
    let token = cli(&dir, &["admin-tokens", "create", "ops"]).trim().to_owned();
    let prefix = format!("\"{}\"", &key[..17]);

    // Text at `info`: every field, in order, quoted as before; the probe
    // quiet; the admin listener's line says so.
    let text = served(&dir, "info", "text", &key, &token).await;
    let lines: Vec<_> = text.lines().filter_map(text_access).collect();
    let kept = lines.iter().find(|l| l.3.contains(&("path", "/v1/companies"))).unwrap_or_else(|| panic!("{text}"));
    recent(kept.0);
    assert_eq!((kept.1, kept.2), ("INFO", "request"));
    let names: Vec<_> = kept.3.iter().map(|f| f.0).collect();
    assert_eq!(names, ["method", "path", "status", "latency_us", "request_id", "key_prefix"]);
    assert_eq!(
        (value(kept, "method"), value(kept, "status"), value(kept, "key_prefix")),
        ("GET".into(), "200".into(), prefix)
    );
    assert!(value(kept, "latency_us").parse::<u64>().is_ok());
    let id = value(kept, "request_id");
    assert!(id.len() >= 22 && id.starts_with('"') && id.ends_with('"'), "{id}");
    assert!(
        lines.iter().any(|l| value(l, "path") == "/v1/news/mds_live_[redacted]" && value(l, "status") == "404"),
        "{text}"
    );
    let admin = lines.iter().find(|l| l.2 == "admin request").unwrap_or_else(|| panic!("{text}"));
    let names: Vec<_> = admin.3.iter().map(|f| f.0).collect();
    assert_eq!(names, ["listener", "method", "path", "status", "latency_us", "request_id", "admin_token"]);
    assert_eq!((value(admin, "listener"), value(admin, "admin_token")), ("\"admin\"".into(), "\"ops\"".into()));
    assert!(!lines.iter().any(|l| value(l, "path") == "/healthz"), "a probe at info:\n{text}");

    // JSON at `info`: the keys in tracing's order, values typed.
    let json = served(&dir, "info", "json", &key, &token).await;
    let raw = json.lines().find(|l| l.contains("\"path\":\"/v1/companies\"")).unwrap_or_else(|| panic!("{json}"));
    let order = ["timestamp", "level", "message", "method", "path", "status", "latency_us", "request_id", "key_prefix"];
    let at: Vec<_> = order.iter().chain(["target"].iter()).map(|k| raw.find(&format!("\"{k}\":")).unwrap()).collect();
    assert!(
        raw.starts_with("{\"timestamp\":") && at.is_sorted() && raw.ends_with("\"target\":\"mds::access\"}"),
        "{raw}"
    );
    let lines = access_json(&json);
    let kept = lines.iter().find(|l| l["path"] == "/v1/companies").unwrap();
    recent(kept["timestamp"].as_str().unwrap());
    assert_eq!((&kept["level"], &kept["message"], &kept["status"]), (&"INFO".into(), &"request".into(), &200.into()));
    assert!(kept["latency_us"].is_u64() && kept["request_id"].as_str().is_some_and(|r| r.len() >= 20));
    assert_eq!(kept["key_prefix"], &key[..17]);
    assert!(
        lines.iter().any(|l| l["message"] == "admin request" && l["admin_token"] == "ops" && l["listener"] == "admin")
    );
    assert!(!lines.iter().any(|l| l["path"] == "/healthz"), "a probe at info:\n{json}");

    // `warn`, and the access log's target off: not one line.
    let warn = served(&dir, "warn", "text", &key, &token).await;
    assert!(!warn.lines().any(|l| l.contains("latency_us")), "access lines at warn:\n{warn}");
    let off = served(&dir, "info,mds::access=off", "json", &key, &token).await;
    assert!(off.contains("\"serving\""), "the other lines are written:\n{off}");
    assert!(!off.contains("mds::access"), "access lines with mds::access=off:\n{off}");

    // `debug` (all of it, or the access log's target): the probes' lines too.
    let debug = served(&dir, "debug", "text", &key, &token).await;
    let probe = debug.lines().filter_map(text_access).find(|l| value(l, "path") == "/healthz");
    assert_eq!(probe.map(|l| (l.1, l.2)), Some(("DEBUG", "request")), "no probe line at debug");
    let debug = served(&dir, "info,mds::access=debug", "json", &key, &token).await;
    let lines = access_json(&debug);
    assert!(lines.iter().any(|l| l["path"] == "/healthz" && l["level"] == "DEBUG"), "no probe line:\n{debug}");
    assert!(lines.iter().any(|l| l["path"] == "/v1/companies" && l["level"] == "INFO"), "{debug}");
}
