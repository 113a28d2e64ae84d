//! Rate limits, monthly quotas, entitlement and usage (API.md sections 2.2
//! and 3), against the real server with a frozen, injectable clock.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use common::{Options, TestApp, assert_problem, new_key_at, spawn_with};
use mds_domain::time::parse_rfc3339;
use mds_domain::usage::BillingMonth;
use mds_domain::{AccountName, ApiKey, Environment, Tier, TierName};
use mds_limits::ManualClock;
use mds_store::{UsageBatch, UsageDelta};
use serde_json::Value;

fn t(s: &str) -> DateTime<Utc> {
    parse_rfc3339(s).unwrap()
}

/// The app with its clock frozen at `at`.
async fn spawn_at(at: &str) -> (TestApp, Arc<ManualClock>) {
    let clock = Arc::new(ManualClock::new(t(at)));
    let config = {
        let mut config = common::reloading_every(Duration::from_millis(50));
        config.node.clock = clock.clone();
        config
    };
    (spawn_with(Options { config, ..Options::default() }).await, clock)
}

/// Adds a tier and a key on it (account `acme`), created at `created`.
async fn key_on(app: &TestApp, tier: &str, rate: u32, quota: u64, created: &str) -> String {
    let tier_name = TierName::parse(tier).unwrap();
    let tier = Tier { name: tier_name, rate_limit_per_minute: rate, monthly_quota: quota };
    app.store.set_tier(&tier, t(created)).await.unwrap();
    let key = new_key_at(&*app.store, "acme", tier.name.as_str(), Environment::Live, t(created)).await;
    app.wait_for_status("/healthz", &key, 200).await;
    wait_known(app, &key).await;
    key
}

/// Waits until the server knows `key` (reload). Uses /v1/usage, which does
/// not count against the quota but does take from the minute.
async fn wait_known(app: &TestApp, key: &str) {
    let t0 = std::time::Instant::now();
    while app.get_with_key("/v1/usage", key).await.status() == 401 {
        assert!(t0.elapsed() < Duration::from_secs(5), "key never became known");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn usage(app: &TestApp, key: &str) -> Value {
    let r = app.get_with_key("/v1/usage", key).await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["cache-control"], "no-store");
    r.json().await.unwrap()
}

fn header(r: &reqwest::Response, name: &str) -> String {
    r.headers().get(name).unwrap_or_else(|| panic!("no {name}")).to_str().unwrap().to_owned()
}

#[tokio::test]
async fn usage_record_of_a_new_key() {
    let (app, _clock) = spawn_at("2026-11-21T10:00:00Z").await;
    let key = key_on(&app, "gold", 120, 5_000, "2026-11-02T08:00:00Z").await;
    let u = usage(&app, &key).await;
    assert_eq!(u["key_prefix"], &key[..17]);
    assert_eq!(u["tier"], "gold");
    assert_eq!(u["plan_tier"], "gold");
    assert_eq!(u["entitled"], true);
    assert_eq!(u["environment"], "live");
    assert_eq!(u["rate_limit_per_minute"], 120);
    assert_eq!(
        u["current_month"],
        serde_json::json!({"period_start": "2026-11-01T00:00:00+00:00", "requests": 0, "quota": 5000, "remaining": 5000})
    );
    assert_eq!(u["history"], serde_json::json!([]));
    assert_eq!(u.as_object().unwrap().len(), 8);
    // A test key says so.
    let test_key = new_key_at(&*app.store, "acme", "gold", Environment::Test, t("2026-11-02T08:00:00Z")).await;
    wait_known(&app, &test_key).await;
    assert_eq!(usage(&app, &test_key).await["environment"], "test");
}

#[tokio::test]
async fn what_counts_and_what_takes_from_the_minute() {
    let (app, _clock) = spawn_at("2026-11-21T10:00:00Z").await;
    let key = key_on(&app, "gold", 100, 5_000, "2026-11-02T08:00:00Z").await;
    let slug = mds_import::demo_articles()[0].slug.clone();
    let mut remaining = Vec::new();
    let mut go = |r: reqwest::Response, status: u16| {
        assert_eq!(r.status().as_u16(), status);
        remaining.push(header(&r, "x-ratelimit-remaining").parse::<u64>().unwrap());
        r
    };
    let r = go(app.get_with_key("/v1/companies?limit=2", &key).await, 200);
    let etag = header(&r, "etag");
    go(app.get_with_key("/v1/companies?limit=3", &key).await, 200);
    go(app.get_with_key("/v1/companies?limit=0", &key).await, 400);
    go(app.get_with_key("/v1/news/no-such-article", &key).await, 404);
    go(app.get_with_key(&format!("/v1/news/{slug}"), &key).await, 200);
    let r =
        app.client.get(format!("{}/v1/companies?limit=2", app.base)).bearer_auth(&key).header("if-none-match", &etag);
    go(r.send().await.unwrap(), 304);
    go(app.get_with_key("/v1/usage", &key).await, 200);
    // Not admitted, so not counted and not taken from the minute.
    assert_eq!(app.get_with_key(&format!("/v1/companies?api_key={key}"), &key).await.status(), 400);
    assert_eq!(app.client.get(format!("{}/v1/companies", app.base)).send().await.unwrap().status(), 401);
    // Every admitted request took one from the minute (the clock is frozen, nothing refills).
    let steps: Vec<i64> = remaining.windows(2).map(|w| w[0] as i64 - w[1] as i64).collect();
    assert_eq!(steps, vec![1; 6], "{remaining:?}");
    let u = usage(&app, &key).await;
    assert_eq!(u["current_month"]["requests"], 5, "200, 200, 400, 404, 200 count; 304 and usage do not");
    assert_eq!(u["current_month"]["remaining"], 4_995);
}

#[tokio::test]
async fn the_minute_limit_refuses_with_429_and_refills() {
    let (app, clock) = spawn_at("2026-11-21T10:00:00Z").await;
    let key = key_on(&app, "tiny", 5, 1_000, "2026-11-02T08:00:00Z").await;
    // wait_known used one request of the minute.
    clock.advance(chrono::Duration::seconds(60));
    for i in 0..5 {
        let r = app.get_with_key("/v1/companies?limit=1", &key).await;
        assert_eq!(r.status(), 200, "request {i}");
        assert_eq!(header(&r, "x-ratelimit-limit"), "5");
        assert_eq!(header(&r, "x-ratelimit-remaining"), (4 - i).to_string());
        assert_eq!(header(&r, "ratelimit-policy"), "\"minute\";q=5;w=60, \"month\";q=1000");
    }
    let r = app.get_with_key("/v1/companies?limit=1", &key).await;
    assert_eq!(header(&r, "retry-after"), "12", "one request refills every 60/5 s");
    assert_eq!(header(&r, "ratelimit"), "\"minute\";r=0;t=60");
    assert_eq!(header(&r, "x-ratelimit-remaining"), "0");
    let b = assert_problem(r, 429, "rate_limited").await;
    assert_eq!(b["violated_policies"], serde_json::json!(["minute"]));
    // Usage is refused too: it takes from the minute.
    assert_problem(app.get_with_key("/v1/usage", &key).await, 429, "rate_limited").await;
    clock.advance(chrono::Duration::seconds(11));
    assert_eq!(app.get_with_key("/v1/companies?limit=1", &key).await.status(), 429);
    clock.advance(chrono::Duration::seconds(1));
    assert_eq!(app.get_with_key("/v1/companies?limit=1", &key).await.status(), 200);
    clock.advance(chrono::Duration::seconds(60));
    let u = usage(&app, &key).await;
    assert_eq!(u["current_month"]["requests"], 6, "429s are not counted");
}

#[tokio::test]
async fn the_monthly_quota_refuses_until_next_month_and_usage_stays_readable() {
    let (app, clock) = spawn_at("2026-11-30T23:00:00Z").await;
    let key = key_on(&app, "trial", 100, 3, "2026-11-02T08:00:00Z").await;
    for _ in 0..3 {
        assert_eq!(app.get_with_key("/v1/companies?limit=1", &key).await.status(), 200);
    }
    let r = app.get_with_key("/v1/companies?limit=1", &key).await;
    assert_eq!(header(&r, "retry-after"), "3600", "until 2026-12-01T00:00:00Z");
    assert!(header(&r, "ratelimit").starts_with("\"month\";r=0;t=3600"), "{}", header(&r, "ratelimit"));
    let b = assert_problem(r, 429, "quota_exceeded").await;
    assert_eq!(b["violated_policies"], serde_json::json!(["month"]));
    let u = usage(&app, &key).await;
    assert_eq!(u["current_month"]["requests"], 3);
    assert_eq!(u["current_month"]["remaining"], 0);
    // Next month the quota is back, and November is history.
    clock.set(t("2026-12-01T00:00:00Z"));
    assert_eq!(app.get_with_key("/v1/companies?limit=1", &key).await.status(), 200);
    let u = usage(&app, &key).await;
    assert_eq!(u["current_month"]["period_start"], "2026-12-01T00:00:00+00:00");
    assert_eq!(u["current_month"]["requests"], 1);
    assert_eq!(
        u["history"][0],
        serde_json::json!({"period_start": "2026-11-01T00:00:00+00:00", "requests": 3, "quota": 3, "remaining": 0})
    );
}

#[tokio::test]
async fn month_boundaries_are_exact() {
    let (app, clock) = spawn_at("2026-11-30T23:59:59.999Z").await;
    let key = key_on(&app, "gold", 1_000, 5_000, "2026-10-15T08:00:00Z").await;
    assert_eq!(app.get_with_key("/v1/companies?limit=1", &key).await.status(), 200);
    clock.set(t("2026-12-01T00:00:00Z"));
    for _ in 0..2 {
        assert_eq!(app.get_with_key("/v1/companies?limit=1", &key).await.status(), 200);
    }
    // Once flushed, the store has each request in its own month.
    let t0 = std::time::Instant::now();
    let prefix = ApiKey::parse(&key).unwrap().prefix();
    loop {
        let stored = app
            .store
            .usage(&prefix, BillingMonth { year: 2026, month: 11 }, BillingMonth { year: 2026, month: 12 })
            .await
            .unwrap();
        if stored == vec![(BillingMonth { year: 2026, month: 11 }, 1), (BillingMonth { year: 2026, month: 12 }, 2)] {
            break;
        }
        assert!(t0.elapsed() < Duration::from_secs(3), "not flushed within 3 s: {stored:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let u = usage(&app, &key).await;
    assert_eq!(u["current_month"]["requests"], 2);
    let h = u["history"].as_array().unwrap();
    assert_eq!(h.len(), 2, "November and October (created in October)");
    assert_eq!(h[0]["period_start"], "2026-11-01T00:00:00+00:00");
    assert_eq!(h[0]["requests"], 1);
    assert_eq!(h[1]["period_start"], "2026-10-01T00:00:00+00:00");
    assert_eq!(h[1]["requests"], 0, "months without requests are included");
}

#[tokio::test]
async fn history_holds_twelve_months_with_the_quota_in_force_then() {
    let (app, _clock) = spawn_at("2026-11-21T10:00:00Z").await;
    // An account opened in January 2025, a key issued in March 2025.
    let gold = |q| Tier { name: TierName::parse("gold").unwrap(), rate_limit_per_minute: 1_000, monthly_quota: q };
    app.store.set_tier(&gold(5_000), t("2025-01-01T00:00:00Z")).await.unwrap();
    let acme = AccountName::parse("oldco").unwrap();
    app.store.create_account(&acme, t("2025-01-01T00:00:00Z")).await.unwrap();
    let key = new_key_at(&*app.store, "oldco", "gold", Environment::Live, t("2025-03-10T00:00:00Z")).await;
    // The tier's quota changed in June 2026; the account lost its plan in August.
    app.store.set_tier(&gold(8_000), t("2026-06-15T00:00:00Z")).await.unwrap();
    app.store.set_account_entitled(&acme, false, t("2026-08-10T00:00:00Z")).await.unwrap();
    app.store.set_account_entitled(&acme, true, t("2026-09-01T00:00:00Z")).await.unwrap();
    let prefix = ApiKey::parse(&key).unwrap().prefix();
    let delta = |m: u32, n: u64| {
        UsageDelta::counted(prefix.clone(), BillingMonth { year: 2026, month: m }.first_day(), "/v1/companies", n)
    };
    app.store.apply_usage(&UsageBatch { id: "test:1".into(), deltas: vec![delta(10, 42), delta(5, 7)] }).await.unwrap();
    wait_known(&app, &key).await;
    let u = usage(&app, &key).await;
    let h = u["history"].as_array().unwrap();
    assert_eq!(h.len(), 12, "at most twelve");
    let starts: Vec<&str> = h.iter().map(|w| w["period_start"].as_str().unwrap()).collect();
    assert_eq!(starts[0], "2026-10-01T00:00:00+00:00");
    assert_eq!(starts[11], "2025-11-01T00:00:00+00:00");
    let by_start = |s: &str| h.iter().find(|w| w["period_start"] == s).unwrap().clone();
    assert_eq!(
        by_start("2026-10-01T00:00:00+00:00"),
        serde_json::json!({"period_start": "2026-10-01T00:00:00+00:00", "requests": 42, "quota": 8000, "remaining": 7958})
    );
    assert_eq!(by_start("2026-05-01T00:00:00+00:00")["quota"], 5_000);
    assert_eq!(by_start("2026-05-01T00:00:00+00:00")["requests"], 7);
    assert_eq!(by_start("2026-06-01T00:00:00+00:00")["quota"], 8_000);
    let evaluation = mds_domain::account::DEFAULT_TIERS[0].2;
    assert_eq!(by_start("2026-08-01T00:00:00+00:00")["quota"], evaluation, "not entitled when August closed");
    assert_eq!(by_start("2026-07-01T00:00:00+00:00")["requests"], 0);
}

#[tokio::test]
async fn entitlement_and_tier_changes_apply_within_a_second() {
    let (app, _clock) = spawn_at("2026-11-21T10:00:00Z").await;
    let key = key_on(&app, "gold", 300, 9_000, "2026-11-02T08:00:00Z").await;
    let acme = AccountName::parse("acme").unwrap();
    let (eval_rate, eval_quota) = (mds_domain::account::DEFAULT_TIERS[0].1, mds_domain::account::DEFAULT_TIERS[0].2);
    app.store.set_account_entitled(&acme, false, Utc::now()).await.unwrap();
    let t0 = std::time::Instant::now();
    loop {
        let u = usage(&app, &key).await;
        if u["entitled"] == false {
            assert_eq!(u["tier"], "evaluation");
            assert_eq!(u["plan_tier"], "gold");
            assert_eq!(u["rate_limit_per_minute"], eval_rate);
            assert_eq!(u["current_month"]["quota"], eval_quota);
            break;
        }
        assert!(t0.elapsed() < Duration::from_secs(1), "entitlement not applied within 1 s");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let r = app.get_with_key("/v1/companies?limit=1", &key).await;
    assert_eq!(header(&r, "x-ratelimit-limit"), eval_rate.to_string());
    app.store.set_account_entitled(&acme, true, Utc::now()).await.unwrap();
    app.store
        .set_tier(
            &Tier { name: TierName::parse("gold").unwrap(), rate_limit_per_minute: 450, monthly_quota: 9_500 },
            Utc::now(),
        )
        .await
        .unwrap();
    let t0 = std::time::Instant::now();
    loop {
        let u = usage(&app, &key).await;
        if u["entitled"] == true && u["rate_limit_per_minute"] == 450 {
            assert_eq!(u["tier"], "gold");
            assert_eq!(u["current_month"]["quota"], 9_500);
            break;
        }
        assert!(t0.elapsed() < Duration::from_secs(1), "plan and tier change not applied within 1 s");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn usage_takes_no_parameters_and_needs_a_key() {
    let (app, _clock) = spawn_at("2026-11-21T10:00:00Z").await;
    assert_problem(app.client.get(format!("{}/v1/usage", app.base)).send().await.unwrap(), 401, "missing_api_key")
        .await;
    assert_problem(app.get("/v1/usage?month=2026-10").await, 400, "unknown_parameter").await;
    let r = app.client.post(format!("{}/v1/usage", app.base)).send().await.unwrap();
    assert_problem(r, 405, "method_not_allowed").await;
}

#[tokio::test]
async fn counts_wait_through_a_store_outage_and_land_when_it_returns() {
    let (app, f) = common::spawn_faulty(common::reloading_every(Duration::from_millis(50))).await;
    let prefix = ApiKey::parse(&app.key).unwrap().prefix();
    let month = BillingMonth::of(Utc::now());
    for _ in 0..5 {
        assert_eq!(app.get("/v1/companies?limit=1").await.status(), 200);
    }
    f.set(common::faults::Fault::Unreachable);
    // The key is known to this node: it keeps being served and counted.
    for _ in 0..7 {
        assert_eq!(app.get("/v1/companies?limit=1").await.status(), 200);
    }
    tokio::time::sleep(Duration::from_millis(2_500)).await; // flushes fail meanwhile
    let metrics = app.client.get(format!("{}/metrics", app.base)).send().await.unwrap().text().await.unwrap();
    assert!(metrics.contains("mds_usage_flush_failures_total "), "{metrics}");
    assert!(!metrics.contains("mds_usage_flush_failures_total 0"), "flushes failed during the outage");
    f.set(common::faults::Fault::None);
    let t0 = std::time::Instant::now();
    loop {
        let stored: u64 = app.store.usage(&prefix, month, month).await.unwrap().iter().map(|(_, n)| n).sum();
        if stored == 12 {
            break;
        }
        assert!(stored <= 12, "counted twice: {stored}");
        assert!(t0.elapsed() < Duration::from_secs(5), "counts not written after the store returned: {stored}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The store's count of the key this month, once it is `want` (this
/// node's flush landed).
async fn wait_stored(app: &TestApp, want: u64) {
    let prefix = ApiKey::parse(&app.key).unwrap().prefix();
    let month = BillingMonth::of(Utc::now());
    let t0 = std::time::Instant::now();
    loop {
        let stored: u64 = app.store.usage(&prefix, month, month).await.unwrap().iter().map(|(_, n)| n).sum();
        if stored == want {
            return;
        }
        assert!(t0.elapsed() < Duration::from_secs(5), "stored {stored}, not {want}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// What another node's flush of `n` requests of the key today puts in the
/// store.
async fn another_nodes_flush(app: &TestApp, id: &str, n: u64) {
    let prefix = ApiKey::parse(&app.key).unwrap().prefix();
    let delta = UsageDelta::counted(prefix, Utc::now().date_naive(), "/v1/news", n);
    assert!(app.store.apply_usage(&UsageBatch { id: id.into(), deltas: vec![delta] }).await.unwrap());
}

/// The app on the demo data, following the store every `interval`.
async fn spawn_reloading_every(interval: Duration) -> TestApp {
    spawn_with(Options { config: common::reloading_every(interval), ..Options::default() }).await
}

/// `/v1/usage` keeps what it read of the store until that may have moved,
/// so a key polling its usage costs no store read: it is answered through
/// a store outage, exact for this node's own traffic, and this node's flush
/// makes it read again (the same total), without waiting for a reload.
#[tokio::test]
async fn usage_is_kept_from_the_store_until_this_node_flushes() {
    let (app, f) = common::spawn_faulty(common::reloading_every(Duration::from_secs(3600))).await;
    for _ in 0..3 {
        assert_eq!(app.get("/v1/companies?limit=1").await.status(), 200);
    }
    wait_stored(&app, 3).await;
    assert_eq!(usage(&app, &app.key).await["current_month"]["requests"], 3);
    f.set(common::faults::Fault::Unreachable);
    assert_eq!(usage(&app, &app.key).await["current_month"]["requests"], 3, "kept: no store read");
    for _ in 0..2 {
        assert_eq!(app.get("/v1/companies?limit=1").await.status(), 200);
    }
    assert_eq!(usage(&app, &app.key).await["current_month"]["requests"], 5, "kept, and what is not flushed");
    f.set(common::faults::Fault::None);
    wait_stored(&app, 5).await;
    assert_eq!(usage(&app, &app.key).await["current_month"]["requests"], 5, "after this node's flush");
}

/// Another node's flush reaches `/v1/usage` within the reload interval.
#[tokio::test]
async fn usage_sees_another_nodes_flush_within_the_reload_interval() {
    let app = spawn_reloading_every(Duration::from_millis(50)).await;
    assert_eq!(usage(&app, &app.key).await["current_month"]["requests"], 0);
    another_nodes_flush(&app, "other-node:1", 4).await;
    let t0 = std::time::Instant::now();
    while usage(&app, &app.key).await["current_month"]["requests"] != 4 {
        assert!(t0.elapsed() < Duration::from_secs(5), "another node's flush not seen");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// What `/v1/usage/daily` read, `/v1/usage` reports from then on: never
/// less than a daily report answered before it, even before the node's
/// reload sees the store move.
#[tokio::test]
async fn usage_is_never_behind_a_daily_report_before_it() {
    let app = spawn_reloading_every(Duration::from_secs(3600)).await;
    assert_eq!(usage(&app, &app.key).await["current_month"]["requests"], 0);
    another_nodes_flush(&app, "other-node:1", 4).await;
    assert_eq!(usage(&app, &app.key).await["current_month"]["requests"], 0, "kept until the reload sees it");
    let daily: Value = app.get_json("/v1/usage/daily", 200).await;
    assert_eq!(daily["requests"], 4);
    assert_eq!(usage(&app, &app.key).await["current_month"]["requests"], 4);
}

#[tokio::test]
async fn server_errors_are_not_billed() {
    let config = mds_http::HttpConfig {
        request_timeout: Duration::from_millis(300),
        ..common::reloading_every(Duration::from_secs(3600))
    };
    let (app, f) = common::spawn_faulty(config).await;
    let slugs: Vec<String> = mds_import::demo_articles().iter().map(|a| a.slug.as_str().to_owned()).collect();
    assert_eq!(app.get(&format!("/v1/news/{}", slugs[0])).await.status(), 200);
    // An article not yet read: its store read fails (503), or outlasts the
    // request timeout (503).
    f.set(common::faults::Fault::Unreachable);
    let r = app.get(&format!("/v1/news/{}", slugs[1])).await;
    assert!(r.headers().contains_key("ratelimit"), "a 5xx after admission still says where the caller stands");
    assert_problem(r, 503, "unavailable").await;
    f.set(common::faults::Fault::Slow);
    assert_problem(app.get(&format!("/v1/news/{}", slugs[2])).await, 503, "unavailable").await;
    f.set(common::faults::Fault::None);
    assert_eq!(usage(&app, &app.key).await["current_month"]["requests"], 1, "only the 200 counts");
}
