//! The real `mds` process: what it logs (never a key), CLI changes seen by a
//! running server, SIGTERM, and `mds demo` from an empty directory and again.

use crate::common;

use std::time::{Duration, Instant};

use common::process::{burst, cli, requests_this_month, start, store_with_key};

#[tokio::test]
async fn keys_never_reach_the_logs_revocation_is_prompt_and_sigterm_is_clean() {
    let (dir, key) = store_with_key("pro");
    let mut server = start(&dir, &["serve"]);
    let base = format!("http://{}", server.addr);
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let get = |path: String, auth: Option<String>, rid: Option<String>| {
        let mut rb = client.get(format!("{base}{path}"));
        if let Some(a) = auth {
            rb = rb.header("authorization", a);
        }
        if let Some(r) = rid {
            rb = rb.header("x-request-id", r);
        }
        async move { rb.send().await.unwrap().status().as_u16() }
    };
    let bearer = Some(format!("Bearer {key}"));
    assert_eq!(get("/v1/companies".into(), bearer.clone(), None).await, 200);
    assert_eq!(get(format!("/v1/companies?api_key={key}"), bearer.clone(), None).await, 400);
    assert_eq!(get(format!("/v1/companies?search={key}"), None, None).await, 400);
    assert_eq!(get(format!("/v1/news/{key}"), bearer.clone(), None).await, 404);
    assert_eq!(get("/v1/companies".into(), bearer.clone(), Some(key.clone())).await, 200);
    // The key with its last character changed (to one it is not).
    let last = if key.ends_with('x') { 'y' } else { 'x' };
    let almost = format!("{}{last}", &key[..key.len() - 1]);
    assert_eq!(get("/v1/companies".into(), Some(format!("Bearer {almost}")), None).await, 401);
    assert_eq!(get("/v1/companies".into(), Some(format!("Basic {key}")), None).await, 401);

    // Revoked with the CLI in another process: refused within 1 s.
    cli(&dir, &["keys", "revoke", &key[..17]]);
    let revoked_at = Instant::now();
    while get("/v1/companies".into(), bearer.clone(), None).await != 401 {
        assert!(revoked_at.elapsed() < Duration::from_secs(1), "revoked key still accepted after 1 s");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }

    let status = server.sigterm();
    assert!(status.success(), "clean exit on SIGTERM: {status:?}");
    let logs = server.logs();
    assert!(logs.contains("request"), "access log lines are there: {logs}");
    assert!(logs.contains(&key[..17]), "the prefix identifies the key in logs");
    let secret_part = &key[12..];
    assert!(!logs.contains(secret_part), "a key reached the logs:\n{logs}");
    assert!(!logs.contains(&almost[12..]), "a presented (bad) key reached the logs");
    assert!(logs.contains("mds_live_[redacted]"), "the key in the path was redacted: {logs}");
}

#[tokio::test]
async fn demo_starts_from_nothing_and_reuses_its_store() {
    let dir = tempfile::tempdir().unwrap();
    let token = cli(&dir, &["admin-tokens", "create", "ops"]).trim().to_owned();
    let mut first = start(&dir, &["demo", "--admin-listen", "127.0.0.1:0"]);
    let out = first.stdout();
    let key = out
        .lines()
        .find_map(|l| l.trim().strip_prefix("mds_live_").map(|r| format!("mds_live_{r}")))
        .expect("key printed");
    assert!(
        out.contains(&format!(
            "curl -H \"Authorization: Bearer {key}\" \"http://{}/v1/companies?limit=3\"",
            first.addr
        )),
        "{out}"
    );
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let r = client.get(format!("http://{}/v1/companies?limit=3", first.addr)).bearer_auth(&key).send().await.unwrap();
    assert_eq!(r.status(), 200);
    let body: serde_json::Value = r.json().await.unwrap();
    assert_eq!(body["data"].as_array().unwrap().len(), 3);
    // The news list's line, then the newest article's (from the list to an article).
    let list_line = format!("curl -H \"Authorization: Bearer {key}\" \"http://{}/v1/news?limit=3\"", first.addr);
    assert!(out.contains(&list_line), "{out}");
    let r = client.get(format!("http://{}/v1/news?limit=3", first.addr)).bearer_auth(&key).send().await.unwrap();
    assert_eq!(r.status(), 200);
    let body: serde_json::Value = r.json().await.unwrap();
    let slug = body["data"][0]["slug"].as_str().unwrap().to_owned();
    let article_line = format!("curl -H \"Authorization: Bearer {key}\" \"http://{}/v1/news/{slug}\"", first.addr);
    assert!(out.contains(&article_line), "{out}");
    let r = client.get(format!("http://{}/v1/news/{slug}", first.addr)).bearer_auth(&key).send().await.unwrap();
    assert_eq!(r.status(), 200);
    let article: serde_json::Value = r.json().await.unwrap();
    assert!(article["body"].is_string());
    // Identity over time: a history line and an as_of line (routes of
    // contract 10.2).
    // Both answer 200 with what they show: the split's history, and the
    // ticker TATAMOTORS as it stood in 2024 (INE155A01022, TMPV today).
    for (path, shows) in [
        ("/v1/companies/INE296A01024/history", "\"to\":\"INE296A01032\""),
        ("/v1/companies?as_of=2024-06-01&ticker=TATAMOTORS", "\"isin\":\"INE155A01022\""),
        // TTL's prices through its split: the old ISIN's bars and the factor.
        ("/v1/companies/INE592B01024/prices?from=2025-01-27&to=2025-02-25", "\"isin\":\"INE592B01016\""),
    ] {
        let line = format!("curl -H \"Authorization: Bearer {key}\" \"http://{}{path}\"", first.addr);
        assert!(out.contains(&line), "{out}");
        let r = client.get(format!("http://{}{path}", first.addr)).bearer_auth(&key).send().await.unwrap();
        assert_eq!(r.status(), 200, "{path}");
        let body = r.text().await.unwrap();
        assert!(body.contains(shows), "{path}: {body}");
    }
    assert!(first.logged("loaded"), "{}", first.logs());
    // The demo's account and key were made through the audited operations:
    // the admin API's audit log shows them, made by `cli`.
    let logs = first.logs();
    let at = logs.find("admin=").expect("the admin address is logged") + "admin=".len();
    let admin = format!("http://{}", logs[at..].split_whitespace().next().unwrap());
    let r = client.get(format!("{admin}/admin/v1/audit")).bearer_auth(&token).send().await.unwrap();
    assert_eq!(r.status(), 200);
    let audit: serde_json::Value = r.json().await.unwrap();
    let entries: Vec<(&str, &str, &str)> = audit["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["actor"].as_str().unwrap(), e["action"].as_str().unwrap(), e["target"].as_str().unwrap()))
        .collect();
    let key_target = format!("key:{}", &key[..17]);
    assert_eq!(
        entries,
        [
            ("cli", "key.create", key_target.as_str()),
            ("cli", "account.create", "account:demo"),
            ("cli", "admin_token.create", "admin_token:ops")
        ]
    );
    assert!(!audit.to_string().contains(&key[17..]), "the audit log never shows a key");
    assert!(first.sigterm().success());

    let mut second = start(&dir, &["demo"]);
    assert!(second.logged("reusing"), "{}", second.logs());
    // The first run's key still works.
    let r = client.get(format!("http://{}/v1/companies?limit=1", second.addr)).bearer_auth(&key).send().await.unwrap();
    assert_eq!(r.status(), 200);
    let r = client.get(format!("http://{}/readyz", second.addr)).send().await.unwrap();
    let ready: serde_json::Value = r.json().await.unwrap();
    assert!(second.sigterm().success());
    // The second run issued a key of its own, audited; the account was
    // there already, and nothing says it was made again.
    let store =
        mds_store::open(&mds_store::DatabaseUrl::new(dir.path().join("mds.db").to_str().unwrap())).await.unwrap();
    // The demo's lists of 2024 and 2026: every ISIN they showed, 5,559,
    // and 29 that only NSE's ISIN-keyed daily files show (14.1: such as a
    // pre-split ISIN that traded until the day before its split).
    assert_eq!(store.company_count().await.unwrap(), 5_588);
    // The four corporate-action files of data/actions, through the same
    // import as `mds import nse-actions` and `bse-actions`.
    assert!(store.action_count().await.unwrap() > 20_000);
    assert_eq!(ready["companies"].as_u64().unwrap(), 5_588);
    let actions: Vec<String> = store
        .audit_log(None, 10)
        .await
        .unwrap()
        .into_iter()
        .rev()
        .map(|e| format!("{} {}", e.actor, e.action))
        .collect();
    assert_eq!(actions, ["cli admin_token.create", "cli account.create", "cli key.create", "cli key.create"]);
}

#[tokio::test]
async fn sigterm_loses_no_count_and_sigkill_keeps_what_a_flush_wrote() {
    let (dir, key) = store_with_key("enterprise");
    let client = reqwest::Client::builder().no_proxy().build().unwrap();

    // SIGTERM right after the last response: the final flush writes everything.
    let mut server = start(&dir, &["serve"]);
    let base = format!("http://{}", server.addr);
    burst(&client, &base, &key, 300).await;
    assert!(server.sigterm().success());
    drop(server);
    let mut server = start(&dir, &["serve"]);
    let base = format!("http://{}", server.addr);
    assert_eq!(requests_this_month(&client, &base, &key).await, 300, "N requests, SIGTERM, restart: usage says N");

    // SIGKILL: what was counted more than a flush interval (1 s) before the
    // kill is in the store; only the last interval can be lost.
    burst(&client, &base, &key, 120).await;
    tokio::time::sleep(Duration::from_millis(3_000)).await;
    server.kill();
    drop(server);
    let server = start(&dir, &["serve"]);
    let base = format!("http://{}", server.addr);
    assert_eq!(requests_this_month(&client, &base, &key).await, 420);
}

#[tokio::test]
async fn a_key_made_by_another_process_works_on_a_running_server_at_once() {
    let (dir, first) = store_with_key("pro");
    let mut server = start(&dir, &["serve", "--key-cache", "1000", "--key-lookups-per-second", "50"]);
    let base = format!("http://{}", server.addr);
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let status = |key: String| {
        let rb = client.get(format!("{base}/v1/companies?limit=1")).bearer_auth(key);
        async move { rb.send().await.unwrap().status().as_u16() }
    };
    assert_eq!(status(first).await, 200);
    for _ in 0..3 {
        // The first request follows `keys create` at once: no poll of the
        // server (every 250 ms) has had the time to see the key.
        let key = cli(&dir, &["keys", "create", "--account", "acme", "--tier", "pro"]).trim().to_owned();
        assert_eq!(status(key).await, 200, "a key works the moment `keys create` returns");
    }
    assert!(server.sigterm().success());
}

/// The value of the series `name` in the Prometheus text `text`, whatever
/// its type.
fn value(text: &str, name: &str) -> f64 {
    text.lines()
        .find_map(|l| l.strip_prefix(name).and_then(|v| v.strip_prefix(' ')))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no series {name} in\n{text}"))
}

#[tokio::test]
async fn metrics_say_the_build_the_process_and_failed_mirror_pushes() {
    let Some(redis) = mds_testkit::redis::RedisServer::start() else {
        println!("skipped: cannot start redis-server");
        return;
    };
    let (dir, key) = store_with_key("pro");
    let server = start(&dir, &["serve", "--redis", &redis.url()]);
    let client = reqwest::Client::builder().no_proxy().timeout(Duration::from_secs(10)).build().unwrap();
    let metrics =
        || async { client.get(format!("http://{}/metrics", server.addr)).send().await.unwrap().text().await.unwrap() };
    burst(&client, &format!("http://{}", server.addr), &key, 20).await;
    let text = metrics().await;
    // The commit this binary was built from, as git says (build.rs).
    let commit = std::process::Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map_or("unknown".to_owned(), |o| String::from_utf8(o.stdout).unwrap().trim().to_owned());
    let info = format!("mds_build_info{{version=\"{}\",commit=\"{commit}\"}}", env!("CARGO_PKG_VERSION"));
    assert_eq!(value(&text, &info), 1.0);
    // The process, from /proc/self: a node holds the demo catalog (MiBs),
    // its listener, store and Redis connections, and has used some CPU.
    let rss = value(&text, "process_resident_memory_bytes");
    assert!(rss > 16e6 && rss < 16e9, "{rss}");
    let fds = value(&text, "process_open_fds");
    assert!((5.0..10_000.0).contains(&fds), "{fds}");
    assert!(value(&text, "process_cpu_seconds_total") > 0.0);
    assert_eq!(value(&text, "mds_usage_mirror_push_failures_total"), 0.0);
    // Redis stalled: every mirror push (every 50 ms) fails at its 1 s
    // timeout, counted.
    redis.signal("STOP");
    tokio::time::sleep(Duration::from_millis(3_500)).await;
    let failed = value(&metrics().await, "mds_usage_mirror_push_failures_total");
    redis.signal("CONT");
    assert!(failed >= 2.0, "{failed} failed pushes in 3.5 s of a stalled Redis");
    // Resumed: the pushes go through again and the count stops.
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    let settled = value(&metrics().await, "mds_usage_mirror_push_failures_total");
    tokio::time::sleep(Duration::from_millis(1_000)).await;
    assert_eq!(value(&metrics().await, "mds_usage_mirror_push_failures_total"), settled);
}

/// Contract section 16: a node one version older keeps serving, and
/// restarting, on the newer schema. This build is the older node here:
/// its store is taken one version ahead by what an expand-only migration
/// may do (`mds_testkit::next_schema`: a column on every table, a new
/// table); the node serves and counts, is killed, starts again and serves.
#[tokio::test]
async fn a_node_serves_and_restarts_on_a_schema_one_version_ahead() {
    use sqlx::Connection;
    let (dir, key) = store_with_key("pro");
    let db = dir.path().join("mds.db");
    let mut raw = sqlx::SqliteConnection::connect(db.to_str().unwrap()).await.unwrap();
    let version = mds_testkit::next_schema::add_expand_only_version(&mut raw).await;
    drop(raw);
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    for round in 0..2 {
        let mut server = start(&dir, &["serve"]);
        let base = format!("http://{}", server.addr);
        burst(&client, &base, &key, 3).await;
        assert!(server.logs().contains("serving"), "round {round}: {}", server.logs());
        if round == 0 {
            // As a crash would: SIGKILL, then the same binary again.
            server.kill();
        } else {
            assert!(server.sigterm().success());
        }
    }
    let out = cli(&dir, &["migrate"]);
    assert!(out.contains(&format!("version {version}")), "migrate leaves a usable newer schema as it is: {out}");
    let usage = cli(&dir, &["keys", "list"]);
    assert!(usage.contains(&key[..17]), "{usage}");
}
