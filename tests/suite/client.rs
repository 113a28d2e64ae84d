//! The Rust client (`mds-client`) and the consumer CLI (`mds get`) against
//! the real server on a loopback port: filters, pagination, decoding,
//! problem errors, retries honouring `Retry-After`, timeouts, every output
//! format of `mds get companies`, company details, and the change feed and
//! the sync helper across a real import (client and `mds get changes`).

use crate::common;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chrono::Utc;
use common::faults::Fault;
use common::{TestApp, spawn, spawn_faulty};
use mds_client::{
    ArticleSummary, Client, Company, CompanyDetail, Error, ErrorCode, Exchange, Isin, MarketCapBand, Page, RetryEvent,
    Stream,
};
use mds_domain::news::Exact;
use mds_domain::query::fold;
use mds_domain::{CompanyFilter, Environment, Letter, NewsFilter, SearchTerm, Tier, TierName};
use mds_http::HttpConfig;
use mds_testkit::fixtures::news_list;

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

/// The demo companies as the store holds them (with their details), in API
/// order (ticker, then ISIN).
fn demo() -> Vec<Company> {
    let mut all = mds_import::demo_companies();
    all.sort_by(|a, b| (&a.ticker, &a.isin).cmp(&(&b.ticker, &b.isin)));
    all.dedup_by(|a, b| a.isin == b.isin);
    all
}

/// The demo companies matching `filter` as the list serves them (without
/// details), in API order.
fn expected(filter: &CompanyFilter) -> Vec<Company> {
    demo()
        .into_iter()
        .filter(|c| filter.matches(c, &fold(&c.name), &fold(c.ticker.as_str())))
        .map(|c| Company { details: Default::default(), ..c })
        .collect()
}

/// Collects a stream without a futures dependency.
async fn collect<T, S: Stream<Item = mds_client::Result<T>>>(s: S) -> Vec<mds_client::Result<T>> {
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
            // By ticker, as `expected` orders (a search's default order is
            // by relevance).
            c.companies().letter('a').search("bank").sort(mds_domain::CompanySort::Ticker).limit(200),
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
    let hint = mds_client::Hint { param: "industry".into(), nearest: vec![] };
    assert_eq!(none, Page { hint: Some(hint), ..Page::new(vec![], None, false) });

    // Everything, unfiltered.
    let everything = c.companies().limit(200).all().await.unwrap();
    assert_eq!(everything, expected(&CompanyFilter::default()));
}

#[tokio::test]
async fn article_and_usage_decode() {
    let app = spawn().await;
    let c = client(&app);
    let article = &mds_import::demo_articles()[0];
    let got = c.article(article.slug.as_str()).await.unwrap();
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
    assert_eq!(u.current_month.requests, 1, "the article read counts; usage reads do not");
    assert!(u.history.is_empty(), "a key made this month has no history");
}

#[tokio::test]
async fn an_article_slug_is_checked_before_sending() {
    let app = spawn().await;
    let c = client(&app);
    // Not slugs: nothing is sent, so nothing counts (a hand-built URL would
    // send `a/b` as a 404 that counts, and let `..` climb to another route).
    for slug in ["", ".", "..", "a/b", "Upper-Case", "a b", "../usage", &"a".repeat(201)] {
        assert!(matches!(c.article(slug).await, Err(Error::InvalidArgument(_))), "{slug:?}");
    }
    assert_eq!(c.usage().await.unwrap().current_month.requests, 0, "nothing was sent");
    let (status, p) = api_error(c.article("no-such-article").await.unwrap_err());
    assert_eq!((status, p.code.as_str()), (404, "not_found"), "a well-formed unknown slug is asked for");
}

#[tokio::test]
async fn news_list_pages_filters_and_errors() {
    let app = spawn().await;
    let c = client(&app);
    let articles = mds_import::demo_articles();
    let all = news_list(&articles, &NewsFilter::default());
    assert_eq!(c.news_list().limit(7).all().await.unwrap(), all);
    let first = c.news_list().limit(3).send().await.unwrap();
    assert_eq!((&first.data[..], first.has_more), (&all[..3], true));
    let next = c.news_list().limit(4).cursor(first.next_cursor.unwrap()).send().await.unwrap();
    assert_eq!(next.data, all[3..7]);
    let streamed: Vec<ArticleSummary> =
        collect(c.news_list().limit(20).stream()).await.into_iter().map(Result::unwrap).collect();
    assert_eq!(streamed, all);
    let mut pages = c.news_list().limit(30).pages();
    assert_eq!(pages.next_page().await.unwrap().unwrap().data.len(), 30);
    assert!(pages.cursor().is_some());
    assert_eq!(pages.next_page().await.unwrap().unwrap().data.len(), 20);
    assert!(pages.next_page().await.unwrap().is_none());

    // Filters, typed instants included; then the article itself, with its body.
    let a = articles.iter().find(|a| a.isin.is_some() && a.category.is_some()).unwrap();
    let isin = a.isin.clone().unwrap();
    let got = c.news_list().isin(isin.as_str().to_lowercase()).all().await.unwrap();
    assert_eq!(got, news_list(&articles, &NewsFilter { isin: Some(isin), ..NewsFilter::default() }));
    let t = mds_domain::time::parse_rfc3339("2026-01-15T00:00:00+05:30").unwrap();
    let category = a.category.clone().unwrap();
    let got = c.news_list().category(&category).published_after(t).all().await.unwrap();
    let f = NewsFilter {
        category: Some(Exact::category(&category).unwrap()),
        published_after: Some(t),
        ..NewsFilter::default()
    };
    assert_eq!(got, news_list(&articles, &f));
    let full = c.article(got[0].slug.as_str()).await.unwrap();
    assert_eq!(full.clone().into_parts().0, got[0]);
    assert!(full.body.is_some());

    let (status, p) = api_error(c.news_list().isin("not-an-isin").send().await.unwrap_err());
    assert_eq!((status, p.code.as_str(), p.param.as_deref()), (400, "invalid_parameter", Some("isin")));
    let (_, p) = api_error(c.news_list().published_after(t).published_before(t).send().await.unwrap_err());
    assert_eq!(p.param.as_deref(), Some("published_before"));
    let (_, p) = api_error(c.news_list().cursor("forged").send().await.unwrap_err());
    assert_eq!((p.code.as_str(), p.param.as_deref()), ("invalid_cursor", Some("cursor")));
}

#[tokio::test]
async fn api_errors_carry_the_problem_and_are_not_retried() {
    let app = spawn().await;
    let (c, events) = recording(&app, &app.key, |b| b);

    let (status, p) = api_error(c.article("no-such-article").await.unwrap_err());
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
    let (status, p) = api_error(c.article(slug.as_str()).await.unwrap_err());
    let took = t.elapsed();
    assert_eq!((status, p.code.as_str()), (503, "unavailable"));
    let events = events.lock().unwrap().clone();
    let seen: Vec<(u32, u16, Duration)> = events.iter().map(|e| (e.attempt, e.status, e.delay)).collect();
    assert_eq!(seen, vec![(1, 503, Duration::from_secs(1)), (2, 503, Duration::from_secs(1))], "3 attempts in all");
    assert!(took >= Duration::from_secs(2) && took < Duration::from_secs(4), "{took:?}");

    // Retries off: one attempt.
    let (c, events) = recording(&app, &app.key, |b| b.max_retries(0));
    assert_eq!(c.article(slug.as_str()).await.unwrap_err().status(), Some(503));
    assert!(events.lock().unwrap().is_empty());

    // And once the store is back, the same client gets through.
    f.set(Fault::None);
    assert_eq!(c.article(slug.as_str()).await.unwrap().slug, slug);
}

#[tokio::test]
async fn a_slow_response_times_out() {
    let (app, f) = spawn_faulty(HttpConfig::default()).await;
    let slug = mds_import::demo_articles()[0].slug.clone();
    f.set(Fault::Slow); // 2 s per store call
    let c = client_with(&app, &app.key, |b| b.timeout(Duration::from_millis(300)));
    let t = Instant::now();
    let e = c.article(slug.as_str()).await.unwrap_err();
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

// ---- company details, the change feed and the sync helper ----

/// An ISIN the demo data does not hold (Apple's), for a company an import adds.
const ADDED: &str = "US0378331005";

/// Polls the company route until `isin` is served with `name`: the import
/// has reached the node's catalog.
async fn wait_for_name(c: &Client, isin: &str, name: &str) {
    let t = Instant::now();
    loop {
        if c.company(isin).await.is_ok_and(|d| d.company.name == name) {
            return;
        }
        assert!(t.elapsed() < Duration::from_secs(5), "the import never reached the catalog");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A real import into the served store that renames one demo company,
/// reclassifies another, adds one, and leaves 300 others exactly as they
/// were; returns once the node serves it, with the three it changed.
async fn import_three_changes(app: &TestApp) -> [Company; 3] {
    let demo = demo();
    assert!(demo.iter().all(|c| c.isin.as_str() != ADDED));
    let mut renamed = demo[10].clone();
    renamed.name.push_str(" (renamed)");
    let mut reclassified = demo[1000].clone();
    reclassified.details.classification.macro_sector = Some("Services".into());
    let added = mds_testkit::fixtures::detailed_company(ADDED, "ZZADDED");
    let mut import: Vec<Company> =
        demo.iter().filter(|c| c.isin != renamed.isin && c.isin != reclassified.isin).take(300).cloned().collect();
    import.extend([renamed.clone(), reclassified.clone(), added.clone()]);
    let summary = app.store.upsert_companies(&import).await.unwrap();
    assert_eq!((summary.inserted, summary.updated, summary.unchanged), (1, 2, 300), "{summary:?}");
    wait_for_name(&client(app), ADDED, &added.name).await;
    [renamed, reclassified, added]
}

/// A genuine sync token (sealed with the store's secret) for a generation
/// the store never reached: what a client holds after the store's history
/// was replaced by an older backup.
async fn expired_token(app: &TestApp) -> String {
    let codec = mds_catalog::CursorCodec::new(&app.store.cursor_secret().await.unwrap());
    codec.seal(b"mds changes token", &1_000_000_000i64.to_le_bytes())
}

#[tokio::test]
async fn company_detail_is_the_list_row_and_more() {
    let app = spawn().await;
    let c = client(&app);
    let page = c.companies().letter('R').limit(40).send().await.unwrap();
    for row in page.data.iter().step_by(7) {
        let d = c.company(&row.isin.as_str().to_lowercase()).await.unwrap();
        assert_eq!(d.company, *row, "the list fields, with the same values");
        let exchanges: Vec<Exchange> = d.listings.iter().map(|l| l.exchange).collect();
        let want: Vec<Exchange> = [(row.is_nse, Exchange::Nse), (row.is_bse, Exchange::Bse)]
            .into_iter()
            .filter(|x| x.0)
            .map(|x| x.1)
            .collect();
        assert_eq!(exchanges, want, "one listing per exchange, NSE first");
    }

    // Details an import carries come back as typed values.
    let added = mds_testkit::fixtures::detailed_company(ADDED, "ZZADDED");
    app.store.upsert_companies(std::slice::from_ref(&added)).await.unwrap();
    wait_for_name(&c, ADDED, &added.name).await;
    let d = c.company(ADDED).await.unwrap();
    assert_eq!(d.listings, added.details.listings);
    assert_eq!(d.listings[1].scrip_code.as_deref(), Some("533022"));
    assert_eq!(d.classification, added.details.classification);
    assert_eq!(d.market_cap, added.details.market_cap);
    assert!(d.updated_at <= Utc::now() && d.updated_at > Utc::now() - chrono::Duration::minutes(5));

    // Unknown and malformed ISINs are the API's 404; what cannot be a path
    // segment is refused before sending.
    let before = c.usage().await.unwrap().current_month.requests;
    for isin in ["US88160R1014", "INE117A01023", "nope", "a/b"] {
        let (status, p) = api_error(c.company(isin).await.unwrap_err());
        assert_eq!((status, p.code.as_str()), (404, "not_found"), "{isin}");
    }
    for isin in ["", ".", ".."] {
        assert!(matches!(c.company(isin).await, Err(Error::InvalidArgument(_))), "{isin:?}");
    }
    let after = c.usage().await.unwrap().current_month.requests;
    assert_eq!(after, before + 4, "the four 404s count; nothing was sent for the rest");
}

#[tokio::test]
async fn the_change_feed_pages_to_a_sync_token() {
    let app = spawn().await;
    let c = client(&app);
    let demo: BTreeSet<Isin> = expected(&CompanyFilter::default()).into_iter().map(|c| c.isin).collect();

    let all = c.changes(None).limit(200).all().await.unwrap();
    let isins: Vec<Isin> = all.data.iter().map(|d| d.company.isin.clone()).collect();
    assert_eq!(isins.iter().cloned().collect::<BTreeSet<_>>(), demo, "every company");
    assert_eq!(isins.len(), demo.len(), "each once");

    // By hand: the token only on the last page, and the same rows.
    let mut pages = c.changes(None).limit(150).pages();
    let (mut rows, mut n) = (Vec::new(), 0);
    while let Some(page) = pages.next_page().await.unwrap() {
        n += 1;
        assert_eq!(page.sync_token.is_some(), !page.has_more, "page {n}");
        assert_eq!(pages.sync_token().is_some(), !page.has_more);
        rows.extend(page.data);
    }
    assert_eq!(n, demo.len().div_ceil(150));
    assert_eq!(rows, all.data);
    assert!(pages.next_page().await.unwrap().is_none() && pages.cursor().is_none(), "stays finished");

    // One page, then the next from its cursor.
    let first = c.changes(None).limit(3).send().await.unwrap();
    assert!(first.has_more && first.sync_token.is_none());
    let second = c.changes(None).limit(3).cursor(first.next_cursor.clone().unwrap()).send().await.unwrap();
    assert_eq!(second.data, all.data[3..6]);

    // From the token: nothing changed yet.
    let none = c.changes(Some(&all.sync_token)).all().await.unwrap();
    assert!(none.data.is_empty());

    // Bad input is the server's 400, naming the parameter.
    for (req, code, param) in [
        (c.changes(None).limit(0), "invalid_parameter", "limit"),
        (c.changes(None).limit(201), "invalid_parameter", "limit"),
        (c.changes(Some("garbage")), "invalid_cursor", "since"),
        (c.changes(Some(&all.sync_token)).cursor(first.next_cursor.clone().unwrap()), "invalid_cursor", "cursor"),
    ] {
        let (status, p) = api_error(req.send().await.unwrap_err());
        assert_eq!((status, p.code.as_str(), p.param.as_deref()), (400, code, Some(param)));
    }
    let e = c.changes(Some(&expired_token(&app).await)).send().await.unwrap_err();
    assert_eq!((e.status(), e.code()), (Some(410), Some(ErrorCode::SyncTokenExpired)));
    assert_eq!(e.problem().unwrap().param.as_deref(), Some("since"));
}

#[tokio::test]
async fn sync_keeps_a_replica_up_to_date_across_a_real_import() {
    let app = spawn().await;
    let c = client(&app);
    let demo = demo();

    // The first sync fills the replica with every company.
    let mut replica: BTreeMap<Isin, CompanyDetail> = BTreeMap::new();
    let first = c.sync(&mut replica, None).await.unwrap();
    assert!(first.from_scratch && !first.token_expired);
    assert_eq!((first.changed.len(), replica.len()), (demo.len(), demo.len()));
    for company in &demo {
        let record = &replica[&company.isin];
        assert_eq!(record.company, Company { details: Default::default(), ..company.clone() });
        assert_eq!(record.classification, company.details.classification, "{}", company.isin);
    }
    for company in demo.iter().step_by(400) {
        assert_eq!(replica[&company.isin], c.company(company.isin.as_str()).await.unwrap(), "the detail record");
    }

    // Nothing changed: nothing to do.
    let quiet = c.sync(&mut replica, Some(&first.sync_token)).await.unwrap();
    assert!(quiet.changed.is_empty() && !quiet.from_scratch && !quiet.token_expired);
    let before = replica.clone();

    // A real import changes two rows, adds one, and leaves 300 as they were;
    // in a later second than the load (stamps are whole seconds).
    let since_load = Utc::now() - before[&demo[10].isin].updated_at;
    tokio::time::sleep((chrono::Duration::seconds(1) - since_load).to_std().unwrap_or_default()).await;
    let [renamed, reclassified, added] = import_three_changes(&app).await;
    let delta = c.sync(&mut replica, Some(&quiet.sync_token)).await.unwrap();
    assert!(!delta.from_scratch && !delta.token_expired);
    let changed: BTreeSet<Isin> = delta.changed.iter().cloned().collect();
    let want: BTreeSet<Isin> = [&renamed, &reclassified, &added].map(|c| c.isin.clone()).into();
    assert_eq!((delta.changed.len(), &changed), (3, &want), "exactly what the import changed");
    assert_eq!(replica.len(), demo.len() + 1);
    assert_eq!(replica[&renamed.isin].company.name, renamed.name);
    assert!(replica[&renamed.isin].updated_at > before[&renamed.isin].updated_at);
    assert_eq!(replica[&reclassified.isin].classification.macro_sector.as_deref(), Some("Services"));
    assert_eq!(replica[&added.isin].listings, added.details.listings);
    assert_eq!(replica[&added.isin].market_cap, added.details.market_cap);
    for isin in &want {
        assert_eq!(replica[isin], c.company(isin.as_str()).await.unwrap(), "{isin}: the latest form");
    }
    for (isin, record) in &before {
        if !want.contains(isin) {
            assert_eq!(&replica[isin], record, "{isin} was left as it was");
        }
    }
    // The new token is past every change; the older one still works.
    assert!(c.sync(&mut replica, Some(&delta.sync_token)).await.unwrap().changed.is_empty());
    let mut hashed: HashMap<Isin, CompanyDetail> = before.clone().into_iter().collect();
    let again = c.sync(&mut hashed, Some(&first.sync_token)).await.unwrap();
    assert_eq!(again.changed.len(), 3);
    assert_eq!(hashed, replica.clone().into_iter().collect::<HashMap<_, _>>(), "a HashMap replica too");

    // A token the store's history no longer reaches: the replica is cleared
    // (a record the service does not hold goes) and filled from scratch.
    let stale = Isin::parse("US88160R1014").unwrap();
    let mut ghost = replica[&added.isin].clone();
    ghost.company.isin = stale.clone();
    replica.insert(stale.clone(), ghost);
    let restarted = c.sync(&mut replica, Some(&expired_token(&app).await)).await.unwrap();
    assert!(restarted.token_expired && restarted.from_scratch);
    assert_eq!((restarted.changed.len(), replica.len()), (demo.len() + 1, demo.len() + 1));
    assert!(!replica.contains_key(&stale), "cleared first");
    assert!(c.sync(&mut replica, Some(&restarted.sync_token)).await.unwrap().changed.is_empty());

    // Any other error is returned, not a restart.
    let e = c.sync(&mut replica, Some("garbage")).await.unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::InvalidCursor));
    assert_eq!(replica.len(), demo.len() + 1, "left as it was");
}

// ---- the CLI, as a process ----

struct Run {
    ok: bool,
    code: Option<i32>,
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
        code: o.status.code(),
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
    let news = ok(&app, &["article", article.slug.as_str()]).await;
    let v: serde_json::Value = serde_json::from_str(&news.stdout).unwrap();
    assert_eq!(v["slug"], article.slug.as_str());
    assert_eq!(v["headline"], article.headline.as_str());

    let usage = ok(&app, &["usage"]).await;
    let v: serde_json::Value = serde_json::from_str(&usage.stdout).unwrap();
    assert_eq!(v["key_prefix"], &app.key[..17]);
    assert_eq!(v["tier"], "pro");
}

#[tokio::test]
async fn cli_news_list() {
    let app = spawn().await;
    let articles = mds_import::demo_articles();
    let all = news_list(&articles, &NewsFilter::default());
    let a = articles.iter().find(|a| a.isin.is_some() && a.ticker.is_some()).unwrap();
    let (isin, ticker) = (a.isin.clone().unwrap(), a.ticker.clone().unwrap());

    let r = ok(&app, &["news", "--isin", isin.as_str(), "--ticker", &ticker.to_lowercase(), "--format", "jsonl"]).await;
    let got: Vec<ArticleSummary> = r.stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let f = NewsFilter {
        isin: Some(isin.clone()),
        ticker: Some(mds_domain::Ticker::parse(&ticker).unwrap()),
        ..NewsFilter::default()
    };
    assert_eq!(got, news_list(&articles, &f));
    assert!(!got.is_empty());
    assert!(!r.stdout.contains("\"body\""), "no bodies in the list");

    let r = ok(&app, &["news", "--limit", "2"]).await;
    let got: Vec<ArticleSummary> = serde_json::from_str(&r.stdout).expect("a JSON array");
    assert_eq!(got, all[..2]);
    assert!(r.stderr.contains("more articles follow: add --all, or --cursor "), "{}", r.stderr);
    let cursor = r.stderr.trim().rsplit(' ').next().unwrap().to_owned();
    let r = ok(&app, &["news", "--limit", "3", "--cursor", &cursor, "--format", "jsonl"]).await;
    let got: Vec<ArticleSummary> = r.stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(got, all[2..5]);

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("news.json");
    let r = ok(&app, &["news", "--all", "--limit", "20", "--output", path.to_str().unwrap()]).await;
    let got: Vec<ArticleSummary> = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(got, all);
    assert!(r.stderr.contains("\r50 articles written to "), "{:?}", r.stderr);

    let r = ok(&app, &["news", "--category", "no-such-category"]).await;
    assert_eq!(r.stdout, "[]\n");

    // One article, by slug, with its body.
    let r = ok(&app, &["article", all[0].slug.as_str()]).await;
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert!(v["body"].is_string());

    for (args, needle) in [
        (vec!["article", all[0].slug.as_str(), "--isin", isin.as_str()], "unexpected argument '--isin'"),
        (vec!["news", all[0].slug.as_str()], "unexpected argument"),
        (vec!["news", "--published-after", "yesterday"], "RFC 3339"),
        (vec!["news", "--isin", "INE002A01019"], "error: invalid_parameter (HTTP 400): "),
    ] {
        let r = mds_get(&app, Some(&app.key), &args).await;
        assert!(!r.ok, "{args:?} should fail");
        assert!(r.stderr.contains(needle), "{args:?}: {}", r.stderr);
    }
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
        (Some(app.key.as_str()), vec!["article", "no-such-article"], "error: not_found (HTTP 404): "),
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

#[tokio::test]
async fn cli_company_prints_the_detail_record() {
    let app = spawn().await;
    let c = client(&app);
    let isin = expected(&CompanyFilter::default())[42].isin.clone();
    let r = ok(&app, &["company", &isin.as_str().to_lowercase()]).await;
    let got: CompanyDetail = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(got, c.company(isin.as_str()).await.unwrap());
    assert!(r.stdout.contains("\n  \"listings\": ["), "pretty, like news and usage: {}", r.stdout);

    let before = c.usage().await.unwrap().current_month.requests;
    for (arg, needle) in [
        ("nope", "error: not a valid ISIN ("),
        ("INE117A01023", "error: not a valid ISIN ("),
        ("US88160R1014", "error: not_found (HTTP 404): "),
    ] {
        let r = mds_get(&app, Some(&app.key), &["company", arg]).await;
        assert!(!r.ok && r.stdout.is_empty(), "{arg}");
        assert_eq!(r.stderr.lines().count(), 1, "one line: {:?}", r.stderr);
        assert!(r.stderr.starts_with(needle), "{arg}: {:?}", r.stderr);
    }
    let after = c.usage().await.unwrap().current_month.requests;
    assert_eq!(after, before + 1, "malformed ISINs are refused without a request");
}

/// The companies of a `--format jsonl` run.
fn jsonl(r: &Run) -> Vec<CompanyDetail> {
    r.stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

#[tokio::test]
async fn cli_changes_syncs_nightly_with_a_token_file() {
    let app = spawn().await;
    let c = client(&app);
    let everything = c.changes(None).all().await.unwrap().data;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("token");
    let token_file = file.to_str().unwrap();
    let token = || std::fs::read_to_string(&file).unwrap().trim().to_owned();

    // The first night: no token yet, every company; the token saved.
    let r = ok(&app, &["changes", "--token-file", token_file, "--format", "jsonl"]).await;
    assert_eq!(jsonl(&r), everything);
    // The records import back (a copy kept by `mds import companies`) as
    // exactly what the store holds.
    let back = mds_import::parse_companies(r.stdout.as_bytes()).expect("mds import companies reads it");
    let summary = app.store.upsert_companies(&back).await.unwrap();
    assert_eq!((summary.inserted, summary.updated, summary.unchanged), (0, 0, back.len() as u64), "{summary:?}");
    assert_eq!(
        r.stderr,
        format!("{} companies (every company)\nsync token written to {token_file}\n", everything.len())
    );
    let t1 = token();
    assert!(c.changes(Some(&t1)).all().await.unwrap().data.is_empty(), "a token the API takes");

    // Nothing changed: no rows, a token again.
    let r = ok(&app, &["changes", "--token-file", token_file, "--format", "jsonl", "--limit", "2"]).await;
    assert_eq!(r.stdout, "");
    assert!(r.stderr.starts_with("0 companies changed since the token\n"), "{}", r.stderr);

    // After a real import: exactly what changed, in its latest form.
    let changed = import_three_changes(&app).await;
    let r = ok(&app, &["changes", "--token-file", token_file, "--format", "jsonl", "--limit", "2"]).await;
    let rows = jsonl(&r);
    let got: BTreeSet<&Isin> = rows.iter().map(|d| &d.company.isin).collect();
    assert_eq!(got, changed.iter().map(|c| &c.isin).collect());
    for d in &rows {
        assert_eq!(*d, c.company(d.company.isin.as_str()).await.unwrap());
    }
    let t3 = token();
    assert!(c.changes(Some(&t3)).all().await.unwrap().data.is_empty(), "past every change");

    // --since, and the token on the last line of stderr; json is one array.
    let r = ok(&app, &["changes", "--since", &t1]).await;
    let array: Vec<CompanyDetail> = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(array, rows);
    let last = r.stderr.lines().last().unwrap();
    let printed = last.strip_prefix("sync_token: ").expect("the token, last on stderr");
    assert!(c.changes(Some(printed)).all().await.unwrap().data.is_empty());
    let r = ok(&app, &["changes", "--since", printed]).await;
    assert_eq!(r.stdout, "[]\n");

    // An expired token: its own exit status, one line, nothing written, the
    // token file left as it was.
    std::fs::write(&file, expired_token(&app).await).unwrap();
    let expired = token();
    let r = mds_get(&app, Some(&app.key), &["changes", "--token-file", token_file, "--format", "jsonl"]).await;
    assert_eq!((r.code, r.stdout.as_str()), (Some(3), ""), "{}", r.stderr);
    assert_eq!(r.stderr.lines().count(), 1, "{:?}", r.stderr);
    assert!(r.stderr.starts_with("error: sync_token_expired (HTTP 410): "), "{:?}", r.stderr);
    assert!(r.stderr.contains(&format!("delete {token_file} and run again")), "{:?}", r.stderr);
    assert_eq!(token(), expired);
    let r = mds_get(&app, Some(&app.key), &["changes", "--since", &expired]).await;
    assert_eq!(r.code, Some(3));
    assert!(r.stderr.contains("run again without --since"), "{:?}", r.stderr);

    // Other bad input: one line, exit 1, the token file untouched.
    std::fs::write(&file, &t3).unwrap();
    for (args, needle) in [
        (vec!["changes", "--since", "garbage"], "error: invalid_cursor (HTTP 400): "),
        (vec!["changes", "--limit", "0"], "error: invalid_parameter (HTTP 400): "),
        (vec!["changes", "--token-file", "/no/such/dir/token"], "error: token file /no/such/dir/token: no directory"),
    ] {
        let r = mds_get(&app, Some(&app.key), &args).await;
        assert_eq!((r.code, r.stdout.as_str()), (Some(1), ""), "{args:?}: {}", r.stderr);
        assert_eq!(r.stderr.lines().count(), 1, "{args:?}: {:?}", r.stderr);
        assert!(r.stderr.starts_with(needle), "{args:?}: {:?}", r.stderr);
    }
    let r = mds_get(&app, Some(&app.key), &["changes", "--since", &t3, "--token-file", token_file]).await;
    assert!(!r.ok && r.stderr.contains("cannot be used with"), "{}", r.stderr);
    assert_eq!(token(), t3);
}

/// Identity over time through the client and `mds get`: status and
/// `as_of` on the list, the detail's new fields and `as_of`, the history,
/// the symbol lookup (on the demo companies, which have no events).
#[tokio::test]
async fn client_and_cli_ask_for_identity_over_time() {
    let app = spawn().await;
    let c = client(&app);
    let day = chrono::NaiveDate::from_ymd_opt(2024, 1, 31).unwrap();
    let today = c.companies().limit(20).send().await.unwrap();
    let then = c.companies().as_of(day).status(mds_client::StatusFilter::Any).limit(20).send().await.unwrap();
    assert_eq!(then.data, today.data, "without history, the master of a day is today's active one");
    let gone = c.companies().status(mds_client::StatusFilter::Only(mds_client::CompanyStatus::Superseded)).all().await;
    assert!(gone.unwrap().is_empty(), "no demo company is superseded");
    let isin = today.data[0].isin.as_str().to_owned();
    let d = c.company(&isin).await.unwrap();
    assert_eq!(
        (d.status, d.superseded_by.clone(), d.supersedes.clone()),
        (mds_client::CompanyStatus::Active, None, vec![])
    );
    assert_eq!(c.company_as_of(&isin, day).await.unwrap(), d);
    let h = c.history(&isin).await.unwrap();
    assert_eq!((h.isin.as_str(), h.events.len()), (isin.as_str(), 0));
    let e = c.symbol(today.data[0].ticker.as_str(), Exchange::Nse).await.unwrap_err();
    assert!(matches!(&e, mds_client::Error::Api { status: 404, .. }), "{e:?}");
    let e = c.companies().as_of(Utc::now().date_naive() + chrono::Days::new(3)).send().await.unwrap_err();
    assert!(format!("{e}").contains("as_of"), "{e}");

    let r = ok(&app, &["company", &isin, "--history"]).await;
    assert_eq!(serde_json::from_str::<serde_json::Value>(&r.stdout).unwrap()["events"], serde_json::json!([]));
    let r = ok(&app, &["company", &isin, "--as-of", "2024-01-31"]).await;
    assert_eq!(serde_json::from_str::<mds_client::CompanyDetail>(&r.stdout).unwrap(), d);
    let r = ok(&app, &["companies", "--as-of", "2024-01-31", "--status", "any", "--limit", "20"]).await;
    let rows: Vec<Company> = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(rows, today.data);
    for (args, needle) in [
        (vec!["companies", "--as-of", "1989-12-31"], "1990-01-01"),
        (vec!["companies", "--status", "gone"], "status must be one of"),
        (vec!["company", &isin, "--history", "--as-of", "2024-01-01"], "cannot be used with"),
    ] {
        let r = mds_get(&app, Some(&app.key), &args).await;
        assert!(!r.ok && r.stderr.contains(needle), "{args:?}: {}", r.stderr);
    }
    let r = mds_get(&app, Some(&app.key), &["symbol", "NEVERSEEN"]).await;
    assert!(!r.ok && r.stderr.starts_with("error: not_found (HTTP 404)"), "{}", r.stderr);
}

/// The client walks the event log with its filters and positions, and
/// follows the stream to a new event.
#[tokio::test]
async fn the_client_reads_the_event_log_and_follows_the_stream() {
    use mds_client::EventFilters as _;
    let app = spawn().await;
    let c = client(&app);
    let all = c.events().limit(200).all().await.unwrap();
    assert!(!all.is_empty());
    let published = c.events().types(&["article.published"]).all().await.unwrap();
    assert!(published.iter().all(|e| e.kind == mds_client::EventType::ArticlePublished));
    let last = all.last().unwrap().id.to_string();
    assert!(c.events().since(&last).all().await.unwrap().is_empty());

    let mut events = std::pin::pin!(c.event_stream().types(&["article.published"]).follow());
    let store = app.store.clone();
    let writer = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(500)).await;
        store.upsert_articles(&[mds_testkit::fixtures::bare_article("client-one", "One")]).await.unwrap();
    });
    let next = std::future::poll_fn(|cx| events.as_mut().poll_next(cx));
    let e = tokio::time::timeout(Duration::from_secs(5), next).await.unwrap().unwrap().unwrap();
    assert_eq!(e.data["slug"], "client-one");
    writer.await.unwrap();
    let err = c.events().since("evt_7fffffffffffffff").send().await.unwrap_err();
    assert_eq!(err.code(), Some(ErrorCode::InvalidCursor));
}

/// `verify_webhook` passes the Standard Webhooks reference delivery only
/// within five minutes of its time, and refuses a changed body.
#[test]
fn verify_webhook_checks_signature_and_time() {
    use reqwest::header::{HeaderMap, HeaderValue};
    let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    let body = br#"{"test": 2432232314}"#;
    let mut h = HeaderMap::new();
    h.insert("webhook-id", HeaderValue::from_static("msg_p5jXN8AQM9LWM0D4loKWxJek"));
    h.insert("webhook-timestamp", HeaderValue::from_static("1614265330"));
    h.insert("webhook-signature", HeaderValue::from_static("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="));
    // The vector's time is years ago: refused for its age.
    assert_eq!(mds_client::verify_webhook(secret, &h, body), Err(mds_client::VerifyError::Timestamp));
    let now = Utc::now().timestamp();
    let sig = mds_domain::webhook::sign(secret, "msg_p5jXN8AQM9LWM0D4loKWxJek", now, body).unwrap();
    h.insert("webhook-timestamp", HeaderValue::from_str(&now.to_string()).unwrap());
    h.insert("webhook-signature", HeaderValue::from_str(&sig).unwrap());
    assert_eq!(mds_client::verify_webhook(secret, &h, body), Ok(()));
    assert_eq!(mds_client::verify_webhook(secret, &h, b"{}"), Err(mds_client::VerifyError::Signature));
}

/// `mds events tail` prints each new event as a JSON line; `mds events
/// listen --forward-to` POSTs it to a receiver (an axum server here) signed
/// with the given secret, which `verify_webhook` accepts.
#[tokio::test]
async fn mds_events_tail_and_listen_forward_signed_events() {
    use tokio::io::AsyncBufReadExt as _;
    let app = spawn().await;
    let secret = mds_domain::webhook::new_secret();
    let (tx, mut rx) = tokio::sync::mpsc::channel::<(reqwest::header::HeaderMap, Vec<u8>)>(8);
    let receiver = axum::Router::new().route(
        "/hook",
        axum::routing::post(move |h: axum::http::HeaderMap, body: axum::body::Bytes| {
            let tx = tx.clone();
            async move {
                let mut headers = reqwest::header::HeaderMap::new();
                for (k, v) in &h {
                    headers.insert(k.clone(), v.clone());
                }
                let _ = tx.send((headers, body.to_vec())).await;
                "ok"
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let hook = format!("http://{}/hook", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, receiver).await.unwrap() });
    let spawn_cli = |args: &[&str]| {
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_mds"));
        cmd.args(args)
            .env("MDS_API_KEY", &app.key)
            .env("MDS_BASE_URL", &app.base)
            .env("NO_PROXY", "*")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true);
        cmd.spawn().unwrap()
    };
    let mut tail = spawn_cli(&["events", "tail", "--types", "article.published"]);
    let _listen = spawn_cli(&["events", "listen", "--forward-to", &hook, "--secret", &secret]);
    // Both are following before the change is made.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    app.store.upsert_articles(&[mds_testkit::fixtures::bare_article("cli-one", "One")]).await.unwrap();

    let mut lines = tokio::io::BufReader::new(tail.stdout.take().unwrap()).lines();
    let line = tokio::time::timeout(Duration::from_secs(5), lines.next_line()).await.unwrap().unwrap().unwrap();
    let e: serde_json::Value = serde_json::from_str(&line).unwrap();
    assert_eq!(e["type"], "article.published");
    assert_eq!(e["data"]["slug"], "cli-one");

    let (headers, body) = tokio::time::timeout(Duration::from_secs(5), rx.recv()).await.unwrap().unwrap();
    assert_eq!(mds_client::verify_webhook(&secret, &headers, &body), Ok(()));
    let forwarded: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(forwarded["id"], e["id"]);
    assert_eq!(headers["webhook-id"].to_str().unwrap(), e["id"].as_str().unwrap());
    let other = mds_domain::webhook::new_secret();
    assert!(mds_client::verify_webhook(&other, &headers, &body).is_err());
}

/// The node's `mds_event_streams_open`.
async fn open_streams(app: &TestApp) -> u64 {
    let text = app.client.get(format!("{}/metrics", app.base)).send().await.unwrap().text().await.unwrap();
    text.lines().find_map(|l| l.strip_prefix("mds_event_streams_open ")).unwrap().parse().unwrap()
}

/// Contract 11.5: `mds events listen` waits for a free stream place while
/// the key's two are taken (saying why on stderr) instead of exiting, and
/// a forward that fails prints its cause.
#[tokio::test]
async fn mds_events_listen_waits_for_a_stream_place_and_says_why_a_forward_failed() {
    use tokio::io::AsyncBufReadExt as _;
    let app = spawn().await;
    let open = || app.client.get(format!("{}/v1/events/stream", app.base)).bearer_auth(&app.key).send();
    let one = open().await.unwrap();
    let _two = open().await.unwrap();
    assert_eq!((one.status().as_u16(), _two.status().as_u16()), (200, 200));
    // Nothing listens on port 1: every forward is refused.
    let mut listen = tokio::process::Command::new(env!("CARGO_BIN_EXE_mds"))
        .args(["events", "listen", "--forward-to", "http://127.0.0.1:1/hook"])
        .env("MDS_API_KEY", &app.key)
        .env("MDS_BASE_URL", &app.base)
        .env("NO_PROXY", "*")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stderr = tokio::io::BufReader::new(listen.stderr.take().unwrap()).lines();
    let waiting = async {
        while let Some(line) = stderr.next_line().await.unwrap() {
            if line.starts_with("Waiting for a free stream place") {
                return line;
            }
        }
        panic!("listen ended without waiting");
    };
    let line = tokio::time::timeout(Duration::from_secs(10), waiting).await.expect("listen says it waits");
    assert!(line.contains("too_many_streams"), "{line}");
    // A place comes free: listen takes it.
    drop(one);
    let deadline = Instant::now() + Duration::from_secs(20);
    while open_streams(&app).await != 2 || listen.try_wait().unwrap().is_some() {
        assert!(Instant::now() < deadline, "listen took the free place");
        assert!(listen.try_wait().unwrap().is_none(), "listen exited");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // The count can read 2 before the node has seen the first stream close,
    // with listen not yet on: an article a second until one is forwarded
    // (a stream begins at the events after it opens).
    let mut stdout = tokio::io::BufReader::new(listen.stdout.take().unwrap()).lines();
    let mut articles = 0;
    let line = loop {
        articles += 1;
        let article = mds_testkit::fixtures::bare_article(&format!("listen-{articles}"), "One");
        app.store.upsert_articles(&[article]).await.unwrap();
        // `next_line` is cancel-safe: a line half read is kept.
        match tokio::time::timeout(Duration::from_secs(1), stdout.next_line()).await {
            Ok(line) => break line.unwrap().expect("listen ended"),
            Err(_) => assert!(articles < 20, "no event forwarded in 20 s"),
        }
    };
    assert!(line.contains("article.published -> error: "), "{line}");
    assert!(line.contains("Connection refused"), "the cause is printed: {line}");
}

#[tokio::test]
async fn cli_search_ranks_and_shows_the_match() {
    let app = spawn().await;
    let ranked = ok(&app, &["companies", "--search", "reliance", "--limit", "3"]).await;
    let rows: Vec<serde_json::Value> = serde_json::from_str(&ranked.stdout).unwrap();
    assert_eq!(rows[0]["ticker"], "RELIANCE", "{}", ranked.stdout);
    assert!(rows.iter().all(|r| r["match"]["field"].is_string()), "{}", ranked.stdout);
    let by_ticker = ok(&app, &["companies", "--search", "reliance", "--sort", "ticker", "--all"]).await;
    let rows: Vec<serde_json::Value> = serde_json::from_str(&by_ticker.stdout).unwrap();
    let tickers: Vec<&str> = rows.iter().map(|r| r["ticker"].as_str().unwrap()).collect();
    assert!(tickers.windows(2).all(|w| w[0] <= w[1]) && tickers.len() > 3, "{tickers:?}");
    let table = ok(&app, &["companies", "--search", "reliance", "--limit", "3", "--format", "table"]).await;
    let lines: Vec<&str> = table.stdout.lines().collect();
    assert!(lines[0].ends_with("MATCH"), "{}", table.stdout);
    assert!(lines[1].starts_with("RELIANCE ") && lines[1].contains(": "), "{}", table.stdout);
    let plain = ok(&app, &["companies", "--limit", "3", "--format", "table"]).await;
    assert!(!plain.stdout.contains("MATCH"), "no search, no match column");
    // --sort needs --search: refused before any request.
    let r = mds_get(&app, Some(&app.key), &["companies", "--sort", "relevance"]).await;
    assert!(!r.ok && r.stderr.contains("--search"), "{}", r.stderr);
    let r = mds_get(&app, Some(&app.key), &["companies", "--search", "x1", "--sort", "best"]).await;
    assert!(!r.ok && r.stderr.contains("relevance, ticker"), "{}", r.stderr);
    // An unknown industry: no rows, and the nearest ones on stderr.
    let industry = mds_import::demo_companies().into_iter().find_map(|c| c.industry).unwrap();
    let none = ok(&app, &["companies", "--industry", &industry.to_lowercase()]).await;
    assert_eq!(none.stdout, "[]\n");
    assert!(none.stderr.contains("nearest existing values: ") && none.stderr.contains(&industry), "{}", none.stderr);
}

#[tokio::test]
async fn client_reads_matches_hints_industries_and_facets() {
    let app = spawn().await;
    let client = client_with(&app, &app.key, |b| b);
    let page = client.companies().search("reliance").limit(3).with_match().send().await.unwrap();
    assert_eq!(page.data[0].ticker.as_str(), "RELIANCE");
    assert!(page.data.iter().all(|c| c.matched.is_some()));
    let page = client.companies().industry("No Such Industry").send().await.unwrap();
    assert_eq!(page.hint.as_ref().map(|h| h.param.as_str()), Some("industry"));
    let tree = client.industries().await.unwrap();
    let active =
        mds_import::demo_companies().iter().filter(|c| c.details.status == mds_client::CompanyStatus::Active).count();
    assert_eq!(tree.count as usize, active);
    let facets = client.news_facets().await.unwrap();
    assert!(!facets.categories.is_empty() && !facets.tags.is_empty());
}

// ---- end-of-day prices ----

/// The client's price requests against the real server on five real days
/// around TTL's split: the series as each adjustment and lineage asks,
/// decoded as the route's JSON says, bad input as the route's problem; the
/// market on a day followed page by page to the whole day the CSV form
/// gives in one response.
#[tokio::test]
async fn the_client_reads_a_series_and_the_market_on_a_day() {
    use common::prices::{DAYS, TTL_NEW, TTL_OLD, loaded};
    use mds_client::{Adjust, Bar, CompanyPrices, Series};

    let (app, _dir) = loaded().await;
    let c = client(&app);
    let day = |s: &str| s.parse::<chrono::NaiveDate>().unwrap();
    let (from, to) = (day(DAYS[0]), day(DAYS[4]));
    let span = format!("from={}&to={}", DAYS[0], DAYS[4]);
    for (adjust, q) in [(Adjust::Unadjusted, "none"), (Adjust::Split, "split"), (Adjust::Total, "total")] {
        let got = c.company_prices(TTL_NEW).from(from).to(to).adjust(adjust).send().await.unwrap();
        let route: CompanyPrices = serde_json::from_value(
            app.get_json(&format!("/v1/companies/{TTL_NEW}/prices?{span}&adjust={q}"), 200).await,
        )
        .unwrap();
        assert_eq!(got, route, "adjust={q}");
        assert_eq!(got.adjust, adjust);
        let isins: Vec<&str> = got.bars.iter().map(|b| b.isin.as_str()).collect();
        assert_eq!(isins, [TTL_OLD, TTL_OLD, TTL_OLD, TTL_NEW, TTL_NEW], "adjust={q}: continued through the split");
        assert_eq!(got.adjustments.is_empty(), adjust == Adjust::Unadjusted, "adjust={q}");
    }
    let raw = c.company_prices(TTL_NEW).from(from).to(to).adjust(Adjust::Unadjusted).send().await.unwrap();
    let split = c.company_prices(TTL_NEW).from(from).to(to).send().await.unwrap();
    let factor = split.adjustments.iter().find(|a| a.ex_date == day("2025-02-12")).expect("the split").factor;
    let before = |p: &CompanyPrices| p.bars[2].close.to_f64();
    assert!((before(&split) - before(&raw) * factor).abs() < 1e-4, "the split's factor applied before it");
    let closes = |p: &CompanyPrices| p.bars[3..].iter().map(|b| b.close).collect::<Vec<_>>();
    assert_eq!(closes(&split), closes(&raw), "closes from the ex-date on are as published");
    let own = c.company_prices(TTL_NEW).from(from).to(to).lineage(false).send().await.unwrap();
    assert!(own.bars.iter().all(|b| b.isin.as_str() == TTL_NEW) && own.bars.len() == 2);

    let e = c.company_prices(TTL_NEW).from(to).to(from).send().await.unwrap_err();
    let (status, problem) = api_error(e);
    assert_eq!((status, problem.param.as_deref()), (400, Some("to")));
    let (status, _) = api_error(c.company_prices("INE000000000").send().await.unwrap_err());
    assert_eq!(status, 404);

    // The whole day, a page at a time, is the day the CSV form gives at once.
    let d = DAYS[3];
    let csv = app.get_with_headers(&format!("/v1/prices?date={d}"), &[("accept", "text/csv")]).await;
    let csv = csv.text().await.unwrap();
    let mut pages = c.market_day(day(d)).limit(200).pages();
    let (mut walked, mut n_pages) = (Vec::<Bar>::new(), 0);
    while let Some(page) = pages.next_page().await.unwrap() {
        n_pages += 1;
        walked.extend(page.data);
    }
    assert!(n_pages > 2, "{n_pages} pages");
    let mut text = String::new();
    Bar::csv_header(&mut text);
    walked.iter().for_each(|b| b.write_csv(&mut text));
    assert_eq!(text, csv, "every bar of the day, in order, once");
    let all = c.market_day(day(d)).limit(200).all().await.unwrap();
    assert_eq!(all, walked);
    let eq = c.market_day(day(d)).series(Series::EQ).limit(200).all().await.unwrap();
    assert_eq!(eq, walked.iter().filter(|b| b.series == Series::EQ).cloned().collect::<Vec<_>>());
    let none = c.market_day(day("2025-02-08")).all().await.unwrap();
    assert!(none.is_empty(), "a Saturday has no bars");
}

/// `mds get prices` in each format: JSON is the client's answer, CSV the
/// route's `text/csv` body, the table a chart of the closes naming the
/// split and the ISIN change; bad input fails before a request.
#[tokio::test]
async fn cli_prices_json_csv_and_chart() {
    use common::prices::{DAYS, TTL_NEW, TTL_OLD, loaded};

    let (app, _dir) = loaded().await;
    let span = ["--from", DAYS[0], "--to", DAYS[4]];
    let args = |extra: &[&'static str]| [&["prices", TTL_NEW][..], &span[..], extra].concat();
    let r = ok(&app, &args(&["--adjust", "none"])).await;
    let json: mds_client::CompanyPrices = serde_json::from_str(&r.stdout).unwrap();
    let want = client(&app)
        .company_prices(TTL_NEW)
        .from(DAYS[0].parse().unwrap())
        .to(DAYS[4].parse().unwrap())
        .adjust(mds_client::Adjust::Unadjusted)
        .send()
        .await
        .unwrap();
    assert_eq!(json, want);

    let r = ok(&app, &args(&["--format", "csv"])).await;
    let path = format!("/v1/companies/{TTL_NEW}/prices?from={}&to={}", DAYS[0], DAYS[4]);
    let csv = app.get_with_headers(&path, &[("accept", "text/csv")]).await.text().await.unwrap();
    assert_eq!(r.stdout, csv);

    let r = ok(&app, &args(&["--format", "table"])).await;
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert!(
        lines[0].starts_with(&format!("{TTL_NEW} closes, {} to {}, adjust=split: 5 bars", DAYS[0], DAYS[4])),
        "{}",
        r.stdout
    );
    assert!(lines.iter().any(|l| l.starts_with("adjusted: split ca_")), "{}", r.stdout);
    let rows: Vec<&&str> = lines.iter().filter(|l| DAYS.iter().any(|d| l.starts_with(d))).collect();
    assert_eq!(rows.len(), 5, "{}", r.stdout);
    assert!(rows.iter().all(|l| l.contains('█')), "{}", r.stdout);
    assert!(rows[3].starts_with("2025-02-12") && rows[3].ends_with(&format!("now {TTL_NEW}")), "{}", rows[3]);
    assert!(rows[3].contains("split ×"), "{}", rows[3]);
    let r =
        ok(&app, &["prices", TTL_OLD, "--from", DAYS[0], "--to", DAYS[4], "--no-lineage", "--format", "table"]).await;
    assert_eq!(r.stdout.lines().filter(|l| DAYS.iter().any(|d| l.starts_with(d))).count(), 3, "{}", r.stdout);

    for (args, needle) in [
        (vec!["prices", "NOTANISIN"], "ISIN"),
        (vec!["prices", TTL_NEW, "--adjust", "splits"], "adjust must be one of"),
        (vec!["prices", TTL_NEW, "--from", "2025-02-30"], "from"),
    ] {
        let r = mds_get(&app, Some(&app.key), &args).await;
        assert!(!r.ok && r.stderr.contains(needle), "{args:?}: {}", r.stderr);
    }
    let r = mds_get(&app, Some(&app.key), &["prices", TTL_NEW, "--from", DAYS[4], "--to", DAYS[0]]).await;
    assert!(!r.ok && r.stderr.starts_with("error: invalid_parameter (HTTP 400)"), "{}", r.stderr);
}
