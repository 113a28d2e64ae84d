//! `GET /v1/usage/daily` (API.md section 8) through the real server, on the
//! backend `MDS_TEST_BACKEND` names: the days add up to what `/v1/usage`
//! says of the same month before a flush (counts in the node's memory),
//! after one (in the store), after a restart and across two nodes sharing
//! limits through Redis (`MDS_TEST_REDIS_URL`); `304`s are counted apart,
//! refused and failed requests not at all; every data route is in every
//! day; bad months are refused naming `month`; a store outlives the node
//! that filled its pool. The SIGTERM of a real process is in
//! [`sigterm_keeps_the_days_and_the_month_equal`].

use crate::common;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use common::{Node, Options, TestApp, TestDatabase, assert_problem, new_key_at};
use mds_domain::time::parse_rfc3339;
use mds_domain::{AccountName, ApiKey, Environment, Tier, TierName};
use mds_http::HttpConfig;
use mds_limits::{ManualClock, SharedConfig};
use mds_store::{Store, UsageBatch, UsageDelta};
use serde_json::{Value, json};

fn t(s: &str) -> DateTime<Utc> {
    parse_rfc3339(s).unwrap()
}

/// Every data route of the route table (those whose requests count).
fn data_routes() -> Vec<&'static str> {
    mds_http::routes::data_routes().to_vec()
}

/// Settings with the clock at `clock` and no periodic flush within a test
/// (the flush task's first tick is at start, when there is nothing to
/// write): counts stay in the node's memory until it stops.
fn frozen(clock: &Arc<ManualClock>) -> HttpConfig {
    let mut config = common::reloading_every(Duration::from_millis(50));
    config.node.clock = clock.clone();
    config.node.flush_interval = Duration::from_secs(3600);
    config
}

/// A store of its own with the demo data and account `acme`.
async fn store() -> (Arc<dyn Store>, TestDatabase) {
    let (url, db) = TestDatabase::create().await;
    let store = mds_store::open(&url).await.expect("open store");
    store.migrate().await.expect("migrate");
    store.upsert_companies(&mds_import::demo_companies()).await.unwrap();
    store.upsert_articles(&mds_import::demo_articles()).await.unwrap();
    store.create_account(&AccountName::parse("acme").unwrap(), t("2026-01-01T00:00:00Z")).await.unwrap();
    (store, db)
}

/// A key of `acme` on a new tier `name`, created at `created`.
async fn key_on(store: &dyn Store, name: &str, rate: u32, quota: u64, created: &str) -> String {
    let tier = Tier { name: TierName::parse(name).unwrap(), rate_limit_per_minute: rate, monthly_quota: quota };
    store.set_tier(&tier, t(created)).await.unwrap();
    new_key_at(store, "acme", name, Environment::Live, t(created)).await
}

fn client() -> reqwest::Client {
    reqwest::Client::builder().no_proxy().build().unwrap()
}

async fn get(base: &str, path: &str, key: &str) -> reqwest::Response {
    client().get(format!("{base}{path}")).bearer_auth(key).send().await.unwrap()
}

async fn json_of(base: &str, path: &str, key: &str) -> Value {
    let r = get(base, path, key).await;
    assert_eq!(r.status(), 200, "GET {path}");
    assert_eq!(r.headers()["cache-control"], "no-store");
    r.json().await.unwrap()
}

/// Polls until the server knows `key` (through `/v1/usage`, which counts
/// nothing).
async fn wait_known(base: &str, key: &str) {
    let t0 = std::time::Instant::now();
    while get(base, "/v1/usage", key).await.status() == 401 {
        assert!(t0.elapsed() < Duration::from_secs(5), "key never became known");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// `/v1/usage/daily` (of `month`, if given) and what `/v1/usage` says of
/// the same month, asserting they agree: the days add up to the month, and
/// each day's routes to the day. Returns the daily report.
async fn daily_agrees(base: &str, key: &str, month: Option<&str>) -> Value {
    let path = match month {
        Some(m) => format!("/v1/usage/daily?month={m}"),
        None => "/v1/usage/daily".to_owned(),
    };
    let daily = json_of(base, &path, key).await;
    let usage = json_of(base, "/v1/usage", key).await;
    let window = match month {
        None => usage["current_month"].clone(),
        Some(m) => usage["history"]
            .as_array()
            .unwrap()
            .iter()
            .find(|w| w["period_start"].as_str().unwrap().starts_with(m))
            .cloned()
            .unwrap_or_else(|| panic!("no history window of {m}: {usage}")),
    };
    let days = daily["days"].as_array().unwrap();
    let sum: u64 = days.iter().map(|d| d["requests"].as_u64().unwrap()).sum();
    assert_eq!(daily["requests"], sum, "{daily}");
    assert_eq!(daily["requests"], window["requests"], "the days add up to /v1/usage's month: {daily} {usage}");
    assert_eq!(daily["quota"], window["quota"]);
    assert_eq!(daily["period_start"], window["period_start"]);
    assert_eq!(daily["key_prefix"], &key[..17]);
    for d in days {
        let by_route = d["by_route"].as_object().unwrap();
        for r in data_routes() {
            assert!(by_route.contains_key(r), "{r} missing on {}", d["date"]);
        }
        assert_eq!(by_route.values().map(|n| n.as_u64().unwrap()).sum::<u64>(), d["requests"].as_u64().unwrap());
    }
    daily
}

/// The day of `daily` dated `date`.
fn day<'a>(daily: &'a Value, date: &str) -> &'a Value {
    daily["days"].as_array().unwrap().iter().find(|d| d["date"] == date).unwrap_or_else(|| panic!("no {date}"))
}

/// A node on a store of its own ([`store`]), its clock frozen at
/// 2026-11-21T10:00Z, and a key of `acme` on tier `gold` (1,000 requests a
/// minute, 5,000 a month) that the node knows.
async fn gold_node() -> (Arc<ManualClock>, Arc<dyn Store>, TestDatabase, String, Node) {
    let clock = Arc::new(ManualClock::new(t("2026-11-21T10:00:00Z")));
    let (store, db) = store().await;
    let key = key_on(&*store, "gold", 1_000, 5_000, "2026-11-02T08:00:00Z").await;
    let node = Node::start(store.clone(), frozen(&clock)).await;
    wait_known(&node.base, &key).await;
    (clock, store, db, key, node)
}

/// `by_route` with the given counts, every other data route at zero.
fn routes(counts: &[(&str, u64)]) -> Value {
    let mut m: BTreeMap<&str, u64> = data_routes().into_iter().map(|r| (r, 0)).collect();
    m.extend(counts.iter().copied());
    json!(m)
}

#[tokio::test]
async fn the_days_add_up_to_the_month_before_and_after_a_flush_and_a_restart() {
    let (clock, store, _db, key, node) = gold_node().await;
    let base = node.base.clone();
    let slug = mds_import::demo_articles()[0].slug.clone();

    let first = get(&base, "/v1/companies?limit=2", &key).await;
    assert_eq!(first.status(), 200);
    let etag = first.headers()["etag"].to_str().unwrap().to_owned();
    for (path, status) in [
        ("/v1/companies?limit=3".to_owned(), 200),
        ("/v1/companies?limit=0".to_owned(), 400),
        ("/v1/news/no-such-article".to_owned(), 404),
        (format!("/v1/news/{slug}"), 200),
    ] {
        assert_eq!(get(&base, &path, &key).await.status(), status, "{path}");
    }
    for _ in 0..2 {
        let r = client().get(format!("{base}/v1/companies?limit=2")).bearer_auth(&key).header("if-none-match", &etag);
        assert_eq!(r.send().await.unwrap().status(), 304);
    }
    // Not admitted: not counted, not recorded.
    assert_eq!(get(&base, &format!("/v1/companies?api_key={key}"), &key).await.status(), 400);
    assert_eq!(client().get(format!("{base}/v1/companies")).send().await.unwrap().status(), 401);

    let before = daily_agrees(&base, &key, None).await;
    let days = before["days"].as_array().unwrap();
    assert_eq!(days.len(), 21, "the 1st to today");
    assert_eq!((days[0]["date"].as_str(), days[20]["date"].as_str()), (Some("2026-11-01"), Some("2026-11-21")));
    assert_eq!(before["requests"], 5, "200, 200, 400, 404, 200; not the 304s, usage reads or refusals");
    assert_eq!(before["quota"], 5_000);
    assert_eq!(before["period_start"], "2026-11-01T00:00:00+00:00");
    assert_eq!(before.as_object().unwrap().len(), 5);
    let today = day(&before, "2026-11-21");
    assert_eq!((today["requests"].as_u64(), today["not_modified"].as_u64()), (Some(5), Some(2)));
    assert_eq!(today["by_route"], routes(&[("/v1/companies", 3), ("/v1/news/{slug}", 2)]));
    assert_eq!(
        day(&before, "2026-11-02"),
        &json!({"date": "2026-11-02", "requests": 0, "not_modified": 0, "by_route": routes(&[])})
    );
    let prefix = ApiKey::parse(&key).unwrap().prefix();
    let nov = (before["days"][0]["date"].as_str().unwrap().parse().unwrap(), "2026-11-30".parse().unwrap());
    assert_eq!(store.usage_days(&prefix, nov.0, nov.1).await.unwrap(), vec![], "all of it unflushed so far");

    // Stopped (the final flush), then served again: the same figures, from
    // the store.
    node.stop().await;
    let stored = store.usage_days(&prefix, nov.0, nov.1).await.unwrap();
    assert_eq!(stored.iter().map(|e| (e.requests, e.not_modified)).fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1)), (5, 2));
    let node = Node::start(store.clone(), frozen(&clock)).await;
    wait_known(&node.base, &key).await;
    let after = daily_agrees(&node.base, &key, None).await;
    assert_eq!(after, before);
    // An ETag like any GET's, so a client can poll cheaply.
    let etag = get(&node.base, "/v1/usage/daily", &key).await.headers()["etag"].to_str().unwrap().to_owned();
    let r = client().get(format!("{}/v1/usage/daily", node.base)).bearer_auth(&key).header("if-none-match", &etag);
    assert_eq!(r.send().await.unwrap().status(), 304);
    assert_eq!(
        daily_agrees(&node.base, &key, None).await["days"][20]["not_modified"],
        2,
        "a usage 304 is not recorded"
    );
    node.stop().await;
}

#[tokio::test]
async fn refused_and_failed_requests_are_not_in_the_ledger() {
    let clock = Arc::new(ManualClock::new(t("2026-11-21T10:00:00Z")));
    let mut config = frozen(&clock);
    config.request_timeout = Duration::from_millis(300);
    let (app, faults) = common::spawn_faulty(config).await;
    let key = key_on(&*app.store, "tiny", 4, 3, "2026-11-02T08:00:00Z").await;
    wait_known(&app.base, &key).await; // one of the minute's four
    let slugs: Vec<String> = mds_import::demo_articles().iter().map(|a| a.slug.as_str().to_owned()).collect();
    assert_eq!(get(&app.base, &format!("/v1/news/{}", slugs[0]), &key).await.status(), 200);
    // A store outage: the article's read fails (503), not billed.
    faults.set(common::faults::Fault::Unreachable);
    assert_problem(get(&app.base, &format!("/v1/news/{}", slugs[1]), &key).await, 503, "unavailable").await;
    faults.set(common::faults::Fault::None);
    assert_eq!(get(&app.base, "/v1/companies?limit=1", &key).await.status(), 200);
    // The minute is spent (usage, 200, 503, 200): refused, not counted.
    assert_problem(get(&app.base, "/v1/companies?limit=1", &key).await, 429, "rate_limited").await;
    clock.advance(chrono::Duration::seconds(60));
    assert_eq!(get(&app.base, "/v1/companies?limit=1", &key).await.status(), 200);
    // The quota (3) is spent: refused, not counted.
    assert_problem(get(&app.base, "/v1/companies?limit=1", &key).await, 429, "quota_exceeded").await;
    let bad = "mds_live_0000000000000000000000000000000000000";
    assert_eq!(get(&app.base, "/v1/companies?limit=1", bad).await.status(), 401);

    let daily = daily_agrees(&app.base, &key, None).await;
    assert_eq!(daily["requests"], 3);
    let today = day(&daily, "2026-11-21");
    assert_eq!(today["not_modified"], 0);
    assert_eq!(today["by_route"], routes(&[("/v1/companies", 2), ("/v1/news/{slug}", 1)]));
    // The daily report stays readable when the quota is spent.
    assert_eq!(get(&app.base, "/v1/usage/daily", &key).await.status(), 200);
    drop(app);
}

#[tokio::test]
async fn the_month_is_the_current_one_or_one_of_the_twelve_before() {
    let clock = Arc::new(ManualClock::new(t("2026-11-21T10:00:00Z")));
    let app = common::spawn_with(Options { config: frozen(&clock), ..Options::default() }).await;
    wait_known(&app.base, &app.key).await;
    for bad in ["2026-13", "2026-1", "11-2026", "", "2026-11-01", "2026-12", "2025-10", "1999-01", "%FF"] {
        let b = assert_problem(app.get(&format!("/v1/usage/daily?month={bad}")).await, 400, "invalid_parameter").await;
        assert_eq!(b["param"], "month", "{bad:?}");
    }
    let b =
        assert_problem(app.get("/v1/usage/daily?month=2026-10&month=2026-09").await, 400, "invalid_parameter").await;
    assert_eq!(b["param"], "month");
    let b = assert_problem(app.get("/v1/usage/daily?months=2026-10").await, 400, "unknown_parameter").await;
    assert!(b["detail"].as_str().unwrap().contains("did you mean \"month\""), "{b}");
    assert_problem(app.get_open("/v1/usage/daily").await, 401, "missing_api_key").await;
    let r = app.client.post(format!("{}/v1/usage/daily", app.base)).bearer_auth(&app.key).send().await.unwrap();
    assert_problem(r, 405, "method_not_allowed").await;

    // The oldest month that may be asked for: whole, all zeros.
    let oldest = json_of(&app.base, "/v1/usage/daily?month=2025-11", &app.key).await;
    let days = oldest["days"].as_array().unwrap();
    assert_eq!(days.len(), 30);
    assert_eq!((days[0]["date"].as_str(), days[29]["date"].as_str()), (Some("2025-11-01"), Some("2025-11-30")));
    assert_eq!(oldest["requests"], 0);
    assert_eq!(oldest["period_start"], "2025-11-01T00:00:00+00:00");
    assert_eq!(
        json_of(&app.base, "/v1/usage/daily?month=2026-11", &app.key).await["days"].as_array().unwrap().len(),
        21
    );
}

#[tokio::test]
async fn a_past_month_is_whole_and_matches_its_history_window() {
    let clock = Arc::new(ManualClock::new(t("2026-11-30T23:59:00Z")));
    let (store, _db) = store().await;
    let key = key_on(&*store, "gold", 1_000, 5_000, "2026-10-15T08:00:00Z").await;
    // Counts another node flushed in October.
    let prefix = ApiKey::parse(&key).unwrap().prefix();
    let oct = |d: &str, route: &'static str, n: u64| UsageDelta::counted(prefix.clone(), d.parse().unwrap(), route, n);
    let batch = UsageBatch {
        id: "elsewhere:1".into(),
        deltas: vec![oct("2026-10-15", "/v1/companies", 4), oct("2026-10-31", "/v1/news/{slug}", 2)],
    };
    store.apply_usage(&batch).await.unwrap();
    let node = Node::start(store.clone(), frozen(&clock)).await;
    wait_known(&node.base, &key).await;
    for _ in 0..3 {
        assert_eq!(get(&node.base, "/v1/companies?limit=1", &key).await.status(), 200);
    }
    // Midnight: December. November is history, still unflushed here.
    clock.set(t("2026-12-01T00:00:30Z"));
    assert_eq!(get(&node.base, "/v1/companies?limit=1", &key).await.status(), 200);
    // The tier changed in December: November closed under the old quota.
    let gold = Tier { name: TierName::parse("gold").unwrap(), rate_limit_per_minute: 1_000, monthly_quota: 8_000 };
    store.set_tier(&gold, t("2026-12-01T00:00:10Z")).await.unwrap();
    // Wait for the node to see it, so that no reload lands between the two
    // reads of one comparison below.
    let t0 = std::time::Instant::now();
    while json_of(&node.base, "/v1/usage", &key).await["current_month"]["quota"] != 8_000 {
        assert!(t0.elapsed() < Duration::from_secs(5), "the tier change never reached the node");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    let nov = daily_agrees(&node.base, &key, Some("2026-11")).await;
    assert_eq!(nov["days"].as_array().unwrap().len(), 30, "a past month is whole");
    assert_eq!(nov["requests"], 3);
    assert_eq!(nov["quota"], 5_000);
    assert_eq!(day(&nov, "2026-11-30")["by_route"], routes(&[("/v1/companies", 3)]));
    let oct = daily_agrees(&node.base, &key, Some("2026-10")).await;
    assert_eq!(oct["days"].as_array().unwrap().len(), 31);
    assert_eq!(oct["requests"], 6);
    assert_eq!(day(&oct, "2026-10-15")["by_route"], routes(&[("/v1/companies", 4)]));
    assert_eq!(day(&oct, "2026-10-31")["by_route"], routes(&[("/v1/news/{slug}", 2)]));
    let dec = daily_agrees(&node.base, &key, None).await;
    assert_eq!(dec["days"].as_array().unwrap().len(), 1);
    assert_eq!(dec["requests"], 1);
    assert_eq!(dec["quota"], 8_000, "the current month is under the tier now in force");
    node.stop().await;
}

/// Two nodes on one store sharing limits through Redis: each node's days
/// add up to its own `/v1/usage` (its unflushed counts included, and
/// whatever the other has flushed), and once both have flushed every node
/// says the same. The nodes flush only when they stop, so no flush of one
/// lands between the two reads of the other.
#[tokio::test]
async fn with_redis_two_nodes_agree() {
    let Ok(redis) = std::env::var("MDS_TEST_REDIS_URL") else {
        eprintln!("skipped: needs MDS_TEST_REDIS_URL");
        return;
    };
    let (store, _db) = store().await;
    let key = key_on(&*store, "gold", 100_000, 1_000, &Utc::now().to_rfc3339()).await;
    let namespace = format!("mds-test-{:016x}", rand_id());
    let config = || {
        let mut c = common::reloading_every(Duration::from_millis(50));
        c.node.flush_interval = Duration::from_secs(3600);
        c.node.shared =
            Some(SharedConfig { nodes: 2, namespace: namespace.clone(), ..SharedConfig::new(redis.clone()) });
        c
    };
    let [a, b] = [Node::start(store.clone(), config()).await, Node::start(store.clone(), config()).await];
    for n in [&a, &b] {
        wait_known(&n.base, &key).await;
    }
    for i in 0..30 {
        let n = if i % 2 == 0 { &a } else { &b };
        let path = if i % 3 == 0 { "/v1/news/no-such-article" } else { "/v1/companies?limit=1" };
        assert!([200, 404].contains(&get(&n.base, path, &key).await.status().as_u16()));
    }
    // The limit is shared: what a reports left of the month counts b's
    // requests too (as of a's last lease from Redis, so within what b
    // leased since: docs/deploy.md).
    let r = get(&a.base, "/v1/companies?limit=1", &key).await;
    let standing = r.headers()["ratelimit"].to_str().unwrap();
    let left: u64 = standing.split(";r=").nth(1).unwrap().split(';').next().unwrap().parse().unwrap();
    assert!(standing.starts_with("\"month\""), "{standing}");
    assert!((900..1_000 - 16).contains(&left), "a's 16 and some of b's 15 taken: {standing}");
    // Each node alone: its own 15 (16 on a), all unflushed.
    assert_eq!(daily_agrees(&a.base, &key, None).await["requests"], 16);
    assert_eq!(daily_agrees(&b.base, &key, None).await["requests"], 15);
    // a flushes as it stops: b has a's in the store and its own unflushed.
    a.stop().await;
    let on_b = daily_agrees(&b.base, &key, None).await;
    assert_eq!(on_b["requests"], 31);
    let today = on_b["days"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(today["by_route"], routes(&[("/v1/companies", 21), ("/v1/news/{slug}", 10)]));
    b.stop().await;
    let c = Node::start(store.clone(), config()).await;
    wait_known(&c.base, &key).await;
    assert_eq!(daily_agrees(&c.base, &key, None).await, on_b, "every node says the same once flushed");
    c.stop().await;
}

fn rand_id() -> u64 {
    use std::hash::{BuildHasher, RandomState};
    RandomState::new().hash_one(std::time::SystemTime::now())
}

/// The real `mds serve` process: the days add up to `/v1/usage` while it
/// serves, and after SIGTERM and a restart they hold every request.
#[tokio::test]
async fn sigterm_keeps_the_days_and_the_month_equal() {
    use common::process::{burst, start, store_with_key};

    let (dir, key) = store_with_key("enterprise");
    let mut server = start(&dir, &["serve"]);
    let client = client();
    burst(&client, &server.base(), &key, 120).await;
    // No article in this store: a 404, counted like any answer.
    assert_eq!(get(&server.base(), "/v1/news/no-such-article", &key).await.status(), 404);
    let served = daily_agrees(&server.base(), &key, None).await;
    assert_eq!(served["requests"], 121);
    assert!(server.sigterm().success());
    drop(server);

    let server = start(&dir, &["serve"]);
    let after = daily_agrees(&server.base(), &key, None).await;
    assert_eq!(after["requests"], 121, "N requests, SIGTERM, restart: the days hold N");
    let mut by_route: BTreeMap<String, u64> = BTreeMap::new();
    for d in after["days"].as_array().unwrap() {
        for (r, n) in d["by_route"].as_object().unwrap() {
            *by_route.entry(r.clone()).or_default() += n.as_u64().unwrap();
        }
    }
    assert_eq!(by_route["/v1/companies"], 120);
    assert_eq!(by_route["/v1/news/{slug}"], 1);
}

/// The server as the CLI user sees it: `mds get usage --daily` draws the
/// month, one bar a day.
#[tokio::test]
async fn mds_get_usage_daily_draws_the_month() {
    let app: TestApp = common::spawn().await;
    for _ in 0..3 {
        assert_eq!(app.get("/v1/companies?limit=1").await.status(), 200);
    }
    // Async: the server runs on this test's runtime.
    let run = async |args: &[&str]| {
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_mds"));
        cmd.arg("get").args(args).env("MDS_BASE_URL", &app.base).env("MDS_API_KEY", &app.key).env("MDS_LOG", "warn");
        for v in ["HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"] {
            cmd.env_remove(v);
        }
        cmd.output().await.unwrap()
    };
    let o = run(&["usage", "--daily"]).await;
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8(o.stdout).unwrap();
    let today = Utc::now().date_naive();
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines[0].starts_with(&format!(
            "{} in {} (UTC): 3 requests of a monthly quota of ",
            &app.key[..17],
            &today.to_string()[..7]
        )),
        "{out}"
    );
    assert!(lines[1].starts_with("│ marks the quota's daily share"), "{out}");
    let rows: Vec<&&str> = lines.iter().filter(|l| l.starts_with(&today.to_string()[..8])).collect();
    assert_eq!(rows.len() as u32, chrono::Datelike::day(&today), "one row a day up to today: {out}");
    assert!(rows.last().unwrap().starts_with(&format!("{today}            3")), "{out}");

    let o = run(&["usage", "--daily", "--json"]).await;
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["requests"], 3);
    let o = run(&["usage", "--daily", "--month", "1999-01"]).await;
    assert!(!o.status.success());
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(err.starts_with("error: invalid_parameter (HTTP 400): month must be the current month"), "{err}");
    let o = run(&["usage", "--month", "2026-01"]).await;
    assert!(!o.status.success(), "--month needs --daily");
}

/// A store outlives the node that served it: the connections its pool
/// opened while the node served (on the connection workers' runtimes)
/// still work once the node has stopped, so a node started again on the
/// same store loads. The workers' runtimes, shut down with each server,
/// took the connections opened on them down too (on PostgreSQL, the next
/// use failed: "a Tokio 1.x context was found, but it is being
/// shutdown").
#[tokio::test]
async fn a_store_outlives_the_node_that_filled_its_pool() {
    let (clock, store, _db, key, node) = gold_node().await;
    // Reads of the store at once, each on a connection of its own (a
    // client each), spread over the workers: the pool grows there.
    let mut reads = tokio::task::JoinSet::new();
    for _ in 0..48 {
        let (base, key) = (node.base.clone(), key.clone());
        reads.spawn(async move { get(&base, "/v1/usage/daily", &key).await.status() });
    }
    while let Some(status) = reads.join_next().await {
        assert_eq!(status.unwrap(), 200);
    }
    node.stop().await;

    // As many reads at once as the pool holds connections: each takes one.
    let prefix = ApiKey::parse(&key).unwrap().prefix();
    let nov = ("2026-11-01".parse().unwrap(), "2026-11-30".parse().unwrap());
    let mut reads = tokio::task::JoinSet::new();
    for _ in 0..32 {
        let (store, prefix) = (store.clone(), prefix.clone());
        reads.spawn(async move { store.usage_days(&prefix, nov.0, nov.1).await.map(|d| d.len()) });
    }
    while let Some(read) = reads.join_next().await {
        let read = read.unwrap();
        assert!(read.is_ok(), "a pooled connection broken by the stopped node: {read:?}");
    }
    let node = Node::start(store.clone(), frozen(&clock)).await;
    wait_known(&node.base, &key).await;
    assert_eq!(get(&node.base, "/v1/usage/daily", &key).await.status(), 200);
    node.stop().await;
}
