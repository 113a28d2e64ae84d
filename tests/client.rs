//! The Rust client (`mds-client`) and the consumer CLI (`mds get`) against
//! the real server on a loopback port: filters, pagination, decoding,
//! problem errors, retries honouring `Retry-After`, timeouts, and every
//! output format of `mds get companies`.

mod common;

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chrono::Utc;
use common::faults::Fault;
use common::{TestApp, spawn, spawn_faulty};
use mds_client::{Client, Company, Error, Exchange, MarketCapBand, Page, RetryEvent, Stream};
use mds_domain::query::fold;
use mds_domain::{CompanyFilter, Environment, Letter, SearchTerm, Tier, TierName};
use mds_http::HttpConfig;

fn client(app: &TestApp) -> Client {
    client_with(app, &app.key, |b| b)
}

fn client_with(
    app: &TestApp,
    key: &str,
    f: impl FnOnce(mds_client::ClientBuilder) -> mds_client::ClientBuilder,
) -> Client {
    f(Client::builder().base_url(&app.base).api_key(key).no_proxy()).build().expect("client")
}

/// A client that records every retry it makes.
fn recording(
    app: &TestApp,
    key: &str,
    f: impl FnOnce(mds_client::ClientBuilder) -> mds_client::ClientBuilder,
) -> (Client, Arc<Mutex<Vec<RetryEvent>>>) {
    let events = Arc::new(Mutex::new(Vec::new()));
    let e2 = events.clone();
    let c = client_with(app, key, |b| f(b.on_retry(move |e| e2.lock().unwrap().push(e.clone()))));
    (c, events)
}

/// The demo companies matching `filter`, in API order (ticker, then ISIN).
fn expected(filter: &CompanyFilter) -> Vec<Company> {
    let mut all = mds_import::demo_companies();
    all.sort_by(|a, b| (&a.ticker, &a.isin).cmp(&(&b.ticker, &b.isin)));
    all.dedup_by(|a, b| a.isin == b.isin);
    all.into_iter().filter(|c| filter.matches(c, &fold(&c.name), &fold(c.ticker.as_str()))).collect()
}

/// Collects a stream without a futures dependency.
async fn collect<S: Stream<Item = mds_client::Result<Company>>>(s: S) -> Vec<mds_client::Result<Company>> {
    let mut s = std::pin::pin!(s);
    let mut out = Vec::new();
    while let Some(item) = std::future::poll_fn(|cx| Pin::as_mut(&mut s).poll_next(cx)).await {
        out.push(item);
    }
    out
}

fn api_error(e: Error) -> (u16, mds_domain::Problem) {
    match e {
        Error::Api { status, problem } => (status, *problem),
        other => panic!("expected Error::Api, got {other:?}"),
    }
}

#[tokio::test]
async fn filters_pages_stream_and_all_return_the_same_rows() {
    let app = spawn().await;
    let c = client(&app);
    let nse_large =
        CompanyFilter { exchange: Some(Exchange::Nse), market_cap: Some(MarketCapBand::Large), ..Default::default() };
    let want = expected(&nse_large);
    assert!(want.len() > 20, "enough rows for several pages: {}", want.len());

    // By hand, page after page.
    let req = c.companies().exchange(Exchange::Nse).market_cap(MarketCapBand::Large).limit(7);
    let mut by_hand = Vec::new();
    let mut page: Page<Company> = req.send().await.unwrap();
    let mut pages = 1;
    loop {
        assert!(page.data.len() <= 7);
        by_hand.extend(page.data.clone());
        match (page.has_more, page.next_cursor.clone()) {
            (true, Some(cur)) => {
                page = req.clone().cursor(cur).send().await.unwrap();
                pages += 1;
            }
            (false, None) => break,
            other => panic!("has_more and next_cursor disagree: {other:?}"),
        }
    }
    assert_eq!(pages, want.len().div_ceil(7));
    assert_eq!(by_hand, want);

    // stream(), pages() and all() see exactly the same rows.
    let streamed: Vec<Company> = collect(req.clone().stream()).await.into_iter().map(Result::unwrap).collect();
    assert_eq!(streamed, want);
    assert_eq!(req.clone().all().await.unwrap(), want);
    let mut p = req.clone().pages();
    let mut via_pages = Vec::new();
    let mut n = 0;
    while let Some(pg) = p.next_page().await.unwrap() {
        via_pages.extend(pg.data);
        n += 1;
    }
    assert_eq!((n, via_pages), (pages, want.clone()));
    assert!(p.next_page().await.unwrap().is_none(), "stays finished");

    // Other filters, each against the same rule applied to the demo data.
    let cases: Vec<(mds_client::CompaniesRequest, CompanyFilter)> = vec![
        (
            c.companies().letter('a').search("bank").limit(200),
            CompanyFilter {
                letter: Some(Letter::parse("A").unwrap()),
                search: Some(SearchTerm::parse("bank").unwrap()),
                ..Default::default()
            },
        ),
        (
            c.companies().exchange(Exchange::Bse).letter('7'),
            CompanyFilter {
                exchange: Some(Exchange::Bse),
                letter: Some(Letter::parse("7").unwrap()),
                ..Default::default()
            },
        ),
        (
            c.companies().ticker("reliance"),
            CompanyFilter { ticker: Some(mds_domain::Ticker::parse("RELIANCE").unwrap()), ..Default::default() },
        ),
    ];
    for (req, filter) in cases {
        let want = expected(&filter);
        assert!(!want.is_empty(), "{filter:?} matches something");
        assert_eq!(req.all().await.unwrap(), want, "{filter:?}");
    }
    let industry = want[0].industry.clone().expect("an industry");
    let f = CompanyFilter { industry: mds_domain::Industry::parse(&industry).ok(), ..Default::default() };
    assert_eq!(c.companies().industry(&industry).limit(3).all().await.unwrap(), expected(&f));
    let none = c.companies().industry("No Such Industry").send().await.unwrap();
    assert_eq!(none, Page { data: vec![], next_cursor: None, has_more: false });

    // Everything, unfiltered.
    let everything = c.companies().limit(200).all().await.unwrap();
    assert_eq!(everything, expected(&CompanyFilter::default()));
}

#[tokio::test]
async fn news_and_usage_decode() {
    let app = spawn().await;
    let c = client(&app);
    let article = &mds_import::demo_articles()[0];
    let got = c.news(article.slug.as_str()).await.unwrap();
    assert_eq!(got.slug, article.slug);
    assert_eq!(got.headline, article.headline);
    assert_eq!(got.body, article.body);
    assert_eq!(got.tags, article.tags);

    let u = c.usage().await.unwrap();
    assert_eq!(u.key_prefix, app.key[..17]);
    assert_eq!((u.tier.as_str(), u.plan_tier.as_str(), u.entitled), ("pro", "pro", true));
    assert_eq!(u.environment, "live");
    assert_eq!(u.rate_limit_per_minute, 600);
    assert_eq!(u.current_month.quota, 1_000_000);
    assert_eq!(u.current_month.requests, 1, "the news read counts; usage reads do not");
    assert!(u.history.is_empty(), "a key made this month has no history");
}

#[tokio::test]
async fn api_errors_carry_the_problem_and_are_not_retried() {
    let app = spawn().await;
    let (c, events) = recording(&app, &app.key, |b| b);

    let (status, p) = api_error(c.news("no-such-article").await.unwrap_err());
    assert_eq!((status, p.code.as_str(), p.status), (404, "not_found", 404));
    assert!(p.request_id.as_deref().is_some_and(|r| !r.is_empty()));

    let e = c.companies().limit(500).send().await.unwrap_err();
    assert_eq!(e.code(), Some(mds_domain::ErrorCode::InvalidParameter));
    assert_eq!(e.status(), Some(400));
    let (_, p) = api_error(e);
    assert_eq!(p.param.as_deref(), Some("limit"));
    assert_eq!(p.detail, "limit must be an integer from 1 to 200");

    let (status, p) = api_error(c.companies().search(" a ").send().await.unwrap_err());
    assert_eq!((status, p.code.as_str(), p.param.as_deref()), (400, "invalid_parameter", Some("search")));

    let (status, p) = api_error(c.companies().cursor("not-a-cursor").send().await.unwrap_err());
    assert_eq!((status, p.code.as_str()), (400, "invalid_cursor"));

    let bad_key = "mds_live_0000000000000000000000000000000000000";
    let e = client_with(&app, bad_key, |b| b).usage().await.unwrap_err();
    let shown = format!("{e} {e:?}");
    assert!(!shown.contains(bad_key), "{shown}");
    let (status, p) = api_error(e);
    assert_eq!((status, p.code.as_str()), (401, "invalid_api_key"));

    // A stream yields the error once, then ends.
    let items = collect(c.companies().search("x").stream()).await;
    assert_eq!(items.len(), 1);
    assert!(matches!(&items[0], Err(Error::Api { status: 400, .. })));

    assert!(events.lock().unwrap().is_empty(), "no 4xx is retried: {:?}", events.lock().unwrap());
}

/// A key on a new tier of `per_minute` requests a minute (quota ample).
async fn key_on_tier(app: &TestApp, name: &str, per_minute: u32) -> String {
    let tier =
        Tier { name: TierName::parse(name).unwrap(), rate_limit_per_minute: per_minute, monthly_quota: 1_000_000 };
    app.store.set_tier(&tier, Utc::now()).await.unwrap();
    let key = common::new_key(&*app.store, "acme", name, Environment::Live).await;
    app.wait_for_status("/v1/usage", &key, 200).await;
    key
}

#[tokio::test]
async fn a_429_is_retried_after_retry_after_then_succeeds() {
    let app = spawn().await;
    let key = key_on_tier(&app, "burst120", 120).await;
    // Use the burst up; the next request is 0.5 s away, said as `Retry-After: 1`.
    let mut n = 0;
    loop {
        let r = app.get_with_key("/v1/usage", &key).await;
        if r.status() == 429 {
            assert_eq!(r.headers()["retry-after"], "1");
            break;
        }
        n += 1;
        assert!(n <= 200, "never rate limited");
    }
    let (c, events) = recording(&app, &key, |b| b.max_retries(3).max_delay(Duration::from_secs(5)));
    let t = Instant::now();
    let u = c.usage().await.expect("succeeds after waiting");
    let waited = t.elapsed();
    assert_eq!(u.tier, "burst120");
    let events = events.lock().unwrap().clone();
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!((events[0].attempt, events[0].status), (1, 429));
    assert_eq!(events[0].delay, Duration::from_secs(1));
    assert_eq!(events[0].code.as_deref(), Some("rate_limited"));
    assert!(waited >= Duration::from_secs(1), "waited Retry-After: {waited:?}");
    assert!(waited < Duration::from_secs(3), "{waited:?}");
}

#[tokio::test]
async fn a_retry_after_beyond_max_delay_is_not_retried_early() {
    let app = spawn().await;
    let key = key_on_tier(&app, "slow1", 1).await; // the one request a minute is used up
    let (c, events) = recording(&app, &key, |b| b.max_retries(5).max_delay(Duration::from_secs(2)));
    let t = Instant::now();
    let (status, p) = api_error(c.usage().await.unwrap_err());
    assert_eq!((status, p.code.as_str()), (429, "rate_limited"));
    assert_eq!(p.violated_policies, Some(vec!["minute".to_owned()]));
    assert!(events.lock().unwrap().is_empty(), "Retry-After ~60 s > max_delay: gave up at once");
    assert!(t.elapsed() < Duration::from_secs(1), "{:?}", t.elapsed());
}

#[tokio::test]
async fn a_503_is_retried_max_retries_times_then_returned() {
    let (app, f) = spawn_faulty(HttpConfig::default()).await;
    let slug = mds_import::demo_articles()[0].slug.clone();
    f.set(Fault::Unreachable);
    let (c, events) = recording(&app, &app.key, |b| b.max_retries(2).max_delay(Duration::from_secs(5)));
    let t = Instant::now();
    let (status, p) = api_error(c.news(slug.as_str()).await.unwrap_err());
    let took = t.elapsed();
    assert_eq!((status, p.code.as_str()), (503, "unavailable"));
    let events = events.lock().unwrap().clone();
    let seen: Vec<(u32, u16, Duration)> = events.iter().map(|e| (e.attempt, e.status, e.delay)).collect();
    assert_eq!(seen, vec![(1, 503, Duration::from_secs(1)), (2, 503, Duration::from_secs(1))], "3 attempts in all");
    assert!(took >= Duration::from_secs(2) && took < Duration::from_secs(4), "{took:?}");

    // Retries off: one attempt.
    let (c, events) = recording(&app, &app.key, |b| b.max_retries(0));
    assert_eq!(c.news(slug.as_str()).await.unwrap_err().status(), Some(503));
    assert!(events.lock().unwrap().is_empty());

    // And once the store is back, the same client gets through.
    f.set(Fault::None);
    assert_eq!(c.news(slug.as_str()).await.unwrap().slug, slug);
}

#[tokio::test]
async fn a_slow_response_times_out() {
    let (app, f) = spawn_faulty(HttpConfig::default()).await;
    let slug = mds_import::demo_articles()[0].slug.clone();
    f.set(Fault::Slow); // 2 s per store call
    let c = client_with(&app, &app.key, |b| b.timeout(Duration::from_millis(300)));
    let t = Instant::now();
    let e = c.news(slug.as_str()).await.unwrap_err();
    assert!(matches!(e, Error::Timeout(d) if d == Duration::from_millis(300)), "{e:?}");
    assert!(t.elapsed() < Duration::from_millis(1500), "{:?}", t.elapsed());
    f.set(Fault::None);
}

#[tokio::test]
async fn a_closed_port_is_a_transport_error() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let c = Client::builder().base_url(format!("http://{addr}")).api_key("k").no_proxy().build().unwrap();
    assert!(matches!(c.usage().await, Err(Error::Transport(_))));
}

// ---- the CLI, as a process ----

struct Run {
    ok: bool,
    stdout: String,
    stderr: String,
}

async fn mds_get(app: &TestApp, key: Option<&str>, args: &[&str]) -> Run {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_mds"));
    cmd.arg("get").args(args).env("MDS_BASE_URL", &app.base).env_remove("MDS_API_KEY").env("MDS_LOG", "warn");
    for v in ["HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"] {
        cmd.env_remove(v);
    }
    if let Some(k) = key {
        cmd.env("MDS_API_KEY", k);
    }
    let o = cmd.output().await.expect("run mds");
    Run {
        ok: o.status.success(),
        stdout: String::from_utf8(o.stdout).unwrap(),
        stderr: String::from_utf8(o.stderr).unwrap(),
    }
}

async fn ok(app: &TestApp, args: &[&str]) -> Run {
    let r = mds_get(app, Some(&app.key), args).await;
    assert!(r.ok, "mds get {args:?} failed: {}", r.stderr);
    r
}

fn nse_large() -> Vec<Company> {
    expected(&CompanyFilter {
        exchange: Some(Exchange::Nse),
        market_cap: Some(MarketCapBand::Large),
        ..Default::default()
    })
}

#[tokio::test]
async fn cli_formats() {
    let app = spawn().await;
    let want: Vec<Company> = nse_large().into_iter().take(5).collect();
    let args = ["companies", "--exchange", "nse", "--market-cap", "large_cap", "--limit", "5"];

    let json = ok(&app, &args).await;
    let got: Vec<Company> = serde_json::from_str(&json.stdout).expect("a JSON array");
    assert_eq!(got, want);
    assert!(json.stderr.contains("more companies follow: add --all, or --cursor "), "{}", json.stderr);

    let jsonl = ok(&app, &[&args[..], &["--format", "jsonl"]].concat()).await;
    let got: Vec<Company> = jsonl.stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(got, want);

    let csv = ok(&app, &[&args[..], &["--format", "csv"]].concat()).await;
    let mut lines = csv.stdout.lines();
    assert_eq!(lines.next(), Some("isin,ticker,name,industry,sector,is_bse,is_nse,market_cap_band,logo_url"));
    assert_eq!(lines.count(), 5);
    // The CSV is what `mds import companies` reads.
    assert_eq!(mds_import::parse_companies(csv.stdout.as_bytes()).unwrap(), want);

    let table = ok(&app, &[&args[..], &["--format", "table"]].concat()).await;
    let lines: Vec<&str> = table.stdout.lines().collect();
    assert_eq!(lines.len(), 6, "{}", table.stdout);
    assert!(lines[0].starts_with("TICKER  "), "{}", lines[0]);
    for (line, c) in lines[1..].iter().zip(&want) {
        let cols: Vec<&str> = line.split("  ").filter(|s| !s.is_empty()).map(str::trim).collect();
        assert_eq!((cols[0], cols[1], cols[2]), (c.ticker.as_str(), c.isin.as_str(), c.name.as_str()), "{line}");
        assert_eq!(cols[4], "large_cap");
    }

    let none = ok(&app, &["companies", "--industry", "No Such Industry"]).await;
    assert_eq!(none.stdout, "[]\n");
    let none = ok(&app, &["companies", "--industry", "No Such Industry", "--format", "csv"]).await;
    assert_eq!(none.stdout.lines().count(), 1);

    let article = &mds_import::demo_articles()[0];
    let news = ok(&app, &["news", article.slug.as_str()]).await;
    let v: serde_json::Value = serde_json::from_str(&news.stdout).unwrap();
    assert_eq!(v["slug"], article.slug.as_str());
    assert_eq!(v["headline"], article.headline.as_str());

    let usage = ok(&app, &["usage"]).await;
    let v: serde_json::Value = serde_json::from_str(&usage.stdout).unwrap();
    assert_eq!(v["key_prefix"], &app.key[..17]);
    assert_eq!(v["tier"], "pro");
}

#[tokio::test]
async fn cli_all_to_a_file_writes_every_company() {
    let app = spawn().await;
    let dir = tempfile::tempdir().unwrap();
    let want = expected(&CompanyFilter::default());
    let path = dir.path().join("all.jsonl");
    let r =
        ok(&app, &["companies", "--all", "--limit", "200", "--format", "jsonl", "--output", path.to_str().unwrap()])
            .await;
    assert_eq!(r.stdout, "", "nothing on stdout");
    let text = std::fs::read_to_string(&path).unwrap();
    let got: Vec<Company> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(got.len(), want.len());
    assert_eq!(got, want);
    let n = want.len();
    let shown = format!("{},{:03}", n / 1000, n % 1000);
    assert!(r.stderr.contains(&format!("\r{shown} companies written to ")), "{:?}", r.stderr);
    assert!(r.stderr.contains("\r200 companies…"), "progress per page: {:?}", r.stderr);

    // --all on stdout, filtered, as CSV: every page, one header.
    let r = ok(
        &app,
        &["companies", "--all", "--limit", "7", "--exchange", "nse", "--market-cap", "large_cap", "--format", "csv"],
    )
    .await;
    assert_eq!(mds_import::parse_companies(r.stdout.as_bytes()).unwrap(), nse_large());
    assert_eq!(r.stderr, "", "no progress and no hint on stdout runs with --all");
}

#[tokio::test]
async fn cli_errors_are_one_line_with_the_problem_code() {
    let app = spawn().await;
    let bad = "mds_live_0000000000000000000000000000000000000";
    for (key, args, needle) in [
        (Some(bad), vec!["usage"], "error: invalid_api_key (HTTP 401): "),
        (Some(app.key.as_str()), vec!["companies", "--search", "a"], "error: invalid_parameter (HTTP 400): "),
        (Some(app.key.as_str()), vec!["news", "no-such-article"], "error: not_found (HTTP 404): "),
        (None, vec!["usage"], "error: MDS_API_KEY is not set"),
    ] {
        let r = mds_get(&app, key, &args).await;
        assert!(!r.ok, "{args:?} should fail");
        assert_eq!(r.stdout, "");
        assert_eq!(r.stderr.lines().count(), 1, "one line: {:?}", r.stderr);
        assert!(r.stderr.starts_with(needle), "{args:?}: {:?}", r.stderr);
        assert!(!r.stderr.contains(bad), "the key is never echoed");
    }
}
