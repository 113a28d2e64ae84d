//! Identity over time (contract 10.2) against the real server: `status`,
//! `superseded_by` and `supersedes` on the detail, the `status` and
//! `as_of` filters of the list, `as_of` on the detail, `GET
//! /v1/companies/{isin}/history` and `GET /v1/symbols/{symbol}`, their bad
//! input and their counting.
//!
//! These run on companies the store holds no identity events for (loaded
//! as `mds import companies` loads them), a few of them superseded or
//! delisted by their status. The cases with events are written as tables
//! (`Case`), so the suites of the importer's events add rows, not code.

use crate::common;

use chrono::{Days, Utc};
use common::{Options, TestApp, assert_problem, spawn_with};
use mds_domain::{Company, CompanyStatus};
use mds_testkit::fixtures::company;
use serde_json::Value;

/// Companies of every status: 0..6 active, 6..8 superseded, 8..10 delisted.
fn companies() -> Vec<Company> {
    (0..10)
        .map(|i| {
            let mut c = company(i, &format!("T{}", 9 - i));
            c.is_nse = i % 2 == 0;
            c.details.status = match i {
                6 | 7 => CompanyStatus::Superseded,
                8 | 9 => CompanyStatus::Delisted,
                _ => CompanyStatus::Active,
            };
            c
        })
        .collect()
}

async fn app() -> TestApp {
    spawn_with(Options { companies: companies(), articles: Vec::new(), ..Options::default() }).await
}

/// The ISINs of a list page's rows, in order.
fn isins(page: &Value) -> Vec<String> {
    page["data"].as_array().unwrap().iter().map(|r| r["isin"].as_str().unwrap().to_owned()).collect()
}

/// The ISINs of `companies()` whose status passes `keep`, in list order
/// (ticker, then ISIN).
fn expected(keep: impl Fn(CompanyStatus) -> bool) -> Vec<String> {
    let mut cs: Vec<Company> = companies().into_iter().filter(|c| keep(c.details.status)).collect();
    cs.sort_by(|a, b| (&a.ticker, &a.isin).cmp(&(&b.ticker, &b.isin)));
    cs.into_iter().map(|c| c.isin.as_str().to_owned()).collect()
}

/// One request and what its answer must hold.
struct Case {
    path: String,
    status: u16,
    /// Checks the JSON body of a `200`.
    check: fn(&str, &Value),
}

async fn run(app: &TestApp, cases: &[Case]) {
    for c in cases {
        let r = app.get(&c.path).await;
        assert_eq!(r.status().as_u16(), c.status, "GET {}", c.path);
        if c.status == 200 {
            let body: Value = r.json().await.unwrap();
            (c.check)(&c.path, &body);
        }
    }
}

#[tokio::test]
async fn the_detail_carries_status_and_links() {
    let app = app().await;
    for (i, c) in companies().iter().enumerate() {
        let d = app.get_json(&format!("/v1/companies/{}", c.isin), 200).await;
        assert_eq!(d["status"], c.details.status.as_str(), "{i}: superseded and delisted ones are answered too");
        assert_eq!(d["superseded_by"], Value::Null);
        assert_eq!(d["supersedes"], serde_json::json!([]));
        let text = app.get(&format!("/v1/companies/{}", c.isin)).await.text().await.unwrap();
        let at = |k: &str| text.rfind(&format!("\"{k}\":")).unwrap();
        let order = ["market_cap", "status", "superseded_by", "supersedes", "updated_at"].map(at);
        assert!(order.is_sorted(), "the identity fields stand between market_cap and updated_at: {text}");
    }
    // The change feed carries the same record.
    let feed = app.get_json("/v1/companies/changes?limit=200", 200).await;
    for row in feed["data"].as_array().unwrap() {
        let detail = app.get_json(&format!("/v1/companies/{}", row["isin"].as_str().unwrap()), 200).await;
        assert_eq!(*row, detail, "the feed's record is the detail");
    }
}

#[tokio::test]
async fn the_list_filters_by_status_active_by_default() {
    let app = app().await;
    let all = |_: CompanyStatus| true;
    for (q, want) in [
        ("", expected(|s| s == CompanyStatus::Active)),
        ("status=active", expected(|s| s == CompanyStatus::Active)),
        ("status=superseded", expected(|s| s == CompanyStatus::Superseded)),
        ("status=delisted", expected(|s| s == CompanyStatus::Delisted)),
        ("status=any", expected(all)),
        ("status=any&exchange=nse", {
            let mut cs: Vec<Company> = companies().into_iter().filter(|c| c.is_nse).collect();
            cs.sort_by(|a, b| (&a.ticker, &a.isin).cmp(&(&b.ticker, &b.isin)));
            cs.into_iter().map(|c| c.isin.as_str().to_owned()).collect()
        }),
    ] {
        let (rows, _) = app.walk_pages(&format!("/v1/companies?limit=3&{q}"), 3, |_| {}).await;
        let got: Vec<String> = rows.iter().map(|r| r["isin"].as_str().unwrap().to_owned()).collect();
        assert_eq!(got, want, "{q}");
    }
    // A cursor is bound to the status it was issued for.
    let p = app.get_json("/v1/companies?limit=1&status=any", 200).await;
    let c = p["next_cursor"].as_str().unwrap();
    let b = assert_problem(app.get(&format!("/v1/companies?limit=1&cursor={c}")).await, 400, "invalid_cursor").await;
    assert_eq!(b["param"], "cursor");
}

#[tokio::test]
async fn as_of_without_history_is_today_s_active_master() {
    let app = app().await;
    let today = Utc::now().date_naive();
    let active = expected(|s| s == CompanyStatus::Active);
    run(
        &app,
        &[
            Case {
                path: "/v1/companies?as_of=2024-01-31&limit=200".into(),
                status: 200,
                check: |p, b| assert_eq!(isins(b), expected(|s| s == CompanyStatus::Active), "{p}"),
            },
            Case {
                path: "/v1/companies?as_of=1990-01-01&status=any&limit=200".into(),
                status: 200,
                check: |p, b| {
                    assert_eq!(
                        isins(b),
                        expected(|s| s == CompanyStatus::Active),
                        "{p}: listed that day = active that day"
                    )
                },
            },
            Case {
                path: "/v1/companies?as_of=2024-01-31&status=superseded".into(),
                status: 200,
                check: |p, b| assert!(isins(b).is_empty(), "{p}: nobody listed that day was superseded that day"),
            },
            Case {
                path: format!("/v1/companies?as_of={today}&ticker=t9"),
                status: 200,
                check: |p, b| assert_eq!(isins(b).len(), 1, "{p}: today is accepted"),
            },
        ],
    )
    .await;
    // The detail as of a day: active ones as today; others not listed then.
    for c in companies() {
        let path = format!("/v1/companies/{}?as_of=2020-06-30", c.isin);
        if c.details.status == CompanyStatus::Active {
            let d = app.get_json(&path, 200).await;
            assert_eq!((d["ticker"].as_str().unwrap(), d["status"].as_str().unwrap()), (c.ticker.as_str(), "active"));
        } else {
            assert_problem(app.get(&path).await, 404, "not_found").await;
        }
    }
    // The cursor is bound to as_of: another day, or none, refuses it.
    let p = app.get_json("/v1/companies?as_of=2024-01-31&limit=1", 200).await;
    let c = p["next_cursor"].as_str().unwrap().to_owned();
    assert_eq!(active.len() > 1, p["has_more"].as_bool().unwrap());
    for q in [format!("cursor={c}"), format!("as_of=2024-02-01&cursor={c}")] {
        let b = assert_problem(app.get(&format!("/v1/companies?limit=1&{q}")).await, 400, "invalid_cursor").await;
        assert_eq!(b["param"], "cursor", "{q}");
    }
    let next = app.get_json(&format!("/v1/companies?as_of=2024-01-31&limit=1&cursor={c}"), 200).await;
    assert_eq!(isins(&next), active[1..2].to_vec());
}

#[tokio::test]
async fn bad_as_of_and_status_are_refused_naming_them() {
    let app = app().await;
    let tomorrow = Utc::now().date_naive().checked_add_days(Days::new(2)).unwrap();
    let isin = companies()[0].isin.clone();
    for path in ["/v1/companies".to_owned(), format!("/v1/companies/{isin}")] {
        app.assert_params_refused(
            &path,
            [
                ("as_of=2024-1-31".to_owned(), "invalid_parameter", "as_of"),
                ("as_of=31-01-2024".to_owned(), "invalid_parameter", "as_of"),
                ("as_of=2024-02-30".to_owned(), "invalid_parameter", "as_of"),
                ("as_of=1989-12-31".to_owned(), "invalid_parameter", "as_of"),
                (format!("as_of={tomorrow}"), "invalid_parameter", "as_of"),
                ("as_of=2024-01-01&as_of=2024-01-02".to_owned(), "invalid_parameter", "as_of"),
            ],
        )
        .await;
    }
    app.assert_params_refused(
        "/v1/companies",
        [
            ("status=Active", "invalid_parameter", "status"),
            ("status=all", "invalid_parameter", "status"),
            ("status=", "invalid_parameter", "status"),
        ],
    )
    .await;
    let b = assert_problem(app.get(&format!("/v1/companies?as_of={tomorrow}")).await, 400, "invalid_parameter").await;
    assert!(b["detail"].as_str().unwrap().contains("after today"), "{b}");
}

#[tokio::test]
async fn history_and_symbols_without_events() {
    let app = app().await;
    for c in companies() {
        let h = app.get_json(&format!("/v1/companies/{}/history", c.isin), 200).await;
        assert_eq!(h, serde_json::json!({"isin": c.isin.as_str(), "events": []}));
        let lower = c.isin.as_str().to_lowercase();
        assert_eq!(app.get_json(&format!("/v1/companies/{lower}/history"), 200).await["isin"], c.isin.as_str());
    }
    for path in [
        "/v1/companies/INE000000000/history",
        "/v1/companies/not-an-isin/history",
        "/v1/symbols/T9",
        "/v1/symbols/T9?exchange=bse",
        "/v1/symbols/NEVERSEEN",
    ] {
        assert_problem(app.get(path).await, 404, "not_found").await;
    }
    let isin = companies()[0].isin.clone();
    app.assert_params_refused(
        &format!("/v1/companies/{isin}/history"),
        [("as_of=2024-01-01", "unknown_parameter", "as_of")],
    )
    .await;
    app.assert_params_refused(
        "/v1/symbols/T9",
        [("exchange=lse", "invalid_parameter", "exchange"), ("as_of=x", "unknown_parameter", "as_of")],
    )
    .await;
}

#[tokio::test]
async fn the_new_routes_count_and_answer_conditionally() {
    let app = app().await;
    let before = app.counted().await;
    let isin = companies()[0].isin.clone();
    let r = app.get(&format!("/v1/companies/{isin}/history")).await;
    let etag = r.headers()["etag"].to_str().unwrap().to_owned();
    assert_eq!(r.status(), 200);
    assert_eq!(app.get("/v1/symbols/T9").await.status(), 404);
    assert_eq!(app.get("/v1/companies?as_of=2024-01-01").await.status(), 200);
    assert_eq!(app.get("/v1/companies?as_of=1980-01-01").await.status(), 400);
    let r = app.get_with_headers(&format!("/v1/companies/{isin}/history"), &[("if-none-match", &etag)]).await;
    assert_eq!(r.status(), 304, "a matching tag is a 304, not counted");
    assert_eq!(app.counted().await.since(&before).month, 4, "200, 404 and 400 count; the 304 does not");
}

/// A history or a symbol's holders is made once per catalog version and
/// then served as kept, byte for byte and tag for tag, as a list page is;
/// an unknown one is not kept.
#[tokio::test]
async fn lookups_are_made_once_and_then_kept() {
    let app = app().await;
    let isin = companies()[0].isin.clone();
    let (hits, misses) = ("mds_page_cache_hits_total", "mds_page_cache_misses_total");
    let (h0, m0) = (app.metric(hits).await, app.metric(misses).await);
    let mut answers = Vec::new();
    for path in [format!("/v1/companies/{isin}/history"), format!("/v1/companies/{isin}/history")] {
        let r = app.get(&path).await;
        assert_eq!(r.status(), 200);
        let etag = r.headers()["etag"].clone();
        answers.push((etag, r.bytes().await.unwrap()));
    }
    assert_eq!(answers[0], answers[1], "the kept answer is the made one");
    for _ in 0..2 {
        assert_problem(app.get("/v1/symbols/NEVERSEEN").await, 404, "not_found").await;
    }
    assert_eq!(app.metric(misses).await - m0, 1, "the history, once; no 404 is kept");
    assert_eq!(app.metric(hits).await - h0, 1, "the history asked again");
}

/// "After today" is by the answering node's clock, not the machine's.
#[tokio::test]
async fn today_is_the_node_s_day() {
    let t0 = chrono::DateTime::parse_from_rfc3339("2025-03-10T23:59:59Z").unwrap().to_utc();
    let clock = std::sync::Arc::new(mds_limits::ManualClock::new(t0));
    let mut config = common::reloading_every(std::time::Duration::from_millis(100));
    config.node.clock = clock.clone();
    let app = spawn_with(Options { companies: companies(), articles: Vec::new(), config, ..Options::default() }).await;
    let isin = companies()[0].isin.clone();
    for path in ["/v1/companies?as_of=2025-03-10".to_owned(), format!("/v1/companies/{isin}?as_of=2025-03-10")] {
        assert_eq!(app.get(&path).await.status(), 200, "{path}: the node's today");
    }
    for path in ["/v1/companies?as_of=2025-03-11".to_owned(), format!("/v1/companies/{isin}?as_of=2025-03-11")] {
        let b = assert_problem(app.get(&path).await, 400, "invalid_parameter").await;
        assert_eq!(b["param"], "as_of", "{path}: after the node's today, though before the machine's");
    }
    clock.set(t0 + chrono::Duration::seconds(1));
    assert_eq!(app.get("/v1/companies?as_of=2025-03-11&limit=3").await.status(), 200, "a new day on the node");
}
