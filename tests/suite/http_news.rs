//! `GET /v1/news` through the real server: the order (undated articles
//! last), every filter, keyset pages and their cursors, every bad input,
//! `ETag`/`304`, `HEAD`, compression, counting, imports while a client
//! pages, and a randomised comparison with the plain rule
//! (`mds_testkit::fixtures::news_list`). Runs on SQLite, and on PostgreSQL
//! with `MDS_TEST_BACKEND=postgres`.

use crate::common;

use mds_testkit::rng::Rng;
use std::io::Read as _;
use std::time::{Duration, Instant};

use common::{Options, TestApp, assert_problem, naming, new_key, reloading_every, spawn, spawn_with};
use mds_domain::news::{Exact, NewsKey};
use mds_domain::time::parse_rfc3339;
use mds_domain::{Article, ArticleSummary, Environment, Isin, NewsFilter, Ticker};
use mds_testkit::fixtures::{bare_article, news_after, news_filter_pairs, news_list};
use serde_json::Value;

/// `/v1/news` with `pairs` as its query string, percent-encoded.
fn path(pairs: &[(&str, &str)]) -> String {
    let url = reqwest::Url::parse_with_params("http://x/v1/news", pairs).unwrap();
    match url.query() {
        Some(q) if !q.is_empty() => format!("/v1/news?{q}"),
        _ => "/v1/news".to_owned(),
    }
}

/// One page: `data` (as summaries), `next_cursor`, `has_more`, checking
/// the envelope and that no article carries a body.
async fn page(app: &TestApp, key: &str, q: &[(&str, &str)]) -> (Vec<ArticleSummary>, Option<String>, bool) {
    let p = path(q);
    let r = app.get_with_key(&p, key).await;
    assert_eq!(r.status(), 200, "GET {p}");
    let v: Value = r.json().await.unwrap();
    // `hint` only on an empty page (of an unknown category or tag).
    let hinted = v["data"].as_array().unwrap().is_empty() && v.get("hint").is_some();
    assert_eq!(v.as_object().unwrap().len(), 3 + usize::from(hinted), "{v}");
    for a in v["data"].as_array().unwrap() {
        let a = a.as_object().unwrap();
        assert!(!a.contains_key("body"), "a listed article has no body key");
        assert_eq!(a.len(), 14, "every other field is present: {a:?}");
    }
    let next = v["next_cursor"].as_str().map(str::to_owned);
    let more = v["has_more"].as_bool().unwrap();
    assert_eq!(next.is_some(), more, "a cursor exactly when more follow: {v}");
    (serde_json::from_value(v["data"].clone()).unwrap(), next, more)
}

/// Every article of a filter, following `next_cursor` with the page sizes
/// `limits` (cycled).
async fn walk(app: &TestApp, key: &str, filter: &[(&str, String)], limits: &[usize]) -> Vec<ArticleSummary> {
    let mut out = Vec::new();
    let mut cursor: Option<String> = None;
    for n in 0.. {
        let limit = limits[n % limits.len()].to_string();
        let mut q: Vec<(&str, &str)> = filter.iter().map(|(k, v)| (*k, v.as_str())).collect();
        q.push(("limit", &limit));
        if let Some(c) = &cursor {
            q.push(("cursor", c));
        }
        let (data, next, more) = page(app, key, &q).await;
        assert!(data.len() <= limits[n % limits.len()]);
        assert!(!more || !data.is_empty(), "a page before the end holds rows");
        out.extend(data);
        if !more {
            break;
        }
        cursor = next;
    }
    out
}

fn at(s: &str) -> chrono::DateTime<chrono::Utc> {
    parse_rfc3339(s).unwrap()
}

/// The demo articles and three undated ones.
fn with_undated() -> Vec<Article> {
    let mut articles = mds_import::demo_articles();
    for s in ["undated-b", "undated-a", "undated-c"] {
        articles.push(Article { tags: vec!["undated".into()], ..bare_article(s, "No date") });
    }
    articles
}

async fn spawn_with_articles(articles: Vec<Article>) -> TestApp {
    spawn_with(Options { articles, ..Options::default() }).await
}

#[tokio::test]
async fn the_list_is_newest_first_without_bodies_and_undated_last() {
    let articles = with_undated();
    let app = spawn_with_articles(articles.clone()).await;
    let want = news_list(&articles, &NewsFilter::default());
    assert_eq!(want.len(), 53);

    let (data, next, more) = page(&app, &app.key, &[]).await;
    assert_eq!(data.len(), 50, "50 by default");
    assert!(more && next.is_some());
    assert_eq!(data, want[..50]);
    let (all, next, more) = page(&app, &app.key, &[("limit", "200")]).await;
    assert_eq!((all.len(), next, more), (53, None, false));
    assert_eq!(all, want);
    let tail: Vec<&str> = all[50..].iter().map(|a| a.slug.as_str()).collect();
    assert_eq!(tail, ["undated-a", "undated-b", "undated-c"]);
    let dated: Vec<_> = all.iter().filter_map(|a| a.published_at).collect();
    assert!(dated.windows(2).all(|w| w[0] >= w[1]), "newest first");
    // Each listed article is the article of GET /v1/news/{slug}, less its body.
    let first = &all[0];
    let mut one = app.get_json(&format!("/v1/news/{}", first.slug), 200).await;
    assert!(one.as_object_mut().unwrap().remove("body").is_some());
    assert_eq!(one, serde_json::to_value(first).unwrap());
    // Times on the wire are UTC with an explicit offset.
    let raw = app.get_json("/v1/news?limit=1", 200).await;
    assert!(raw["data"][0]["published_at"].as_str().unwrap().ends_with("+00:00"), "{raw}");
    // Any page size adds up to the same list.
    for limits in [&[1][..], &[7], &[50, 3, 1, 200]] {
        assert_eq!(walk(&app, &app.key, &[], limits).await, want, "{limits:?}");
    }
}

#[tokio::test]
async fn each_filter_selects_what_it_says() {
    let articles = with_undated();
    let app = spawn_with_articles(articles.clone()).await;
    let demo = mds_import::demo_articles();
    let some = demo.iter().find(|a| a.isin.is_some() && a.ticker.is_some() && !a.tags.is_empty()).unwrap();
    let mid = at("2026-01-15T00:00:00Z");
    let cases = [
        NewsFilter { isin: some.isin.clone(), ..NewsFilter::default() },
        NewsFilter { ticker: Some(Ticker::parse(some.ticker.as_deref().unwrap()).unwrap()), ..NewsFilter::default() },
        NewsFilter { category: some.category.as_deref().map(|c| Exact::category(c).unwrap()), ..NewsFilter::default() },
        NewsFilter { tag: Some(Exact::tag(&some.tags[0]).unwrap()), ..NewsFilter::default() },
        NewsFilter { tag: Some(Exact::tag("undated").unwrap()), ..NewsFilter::default() },
        NewsFilter { published_after: Some(mid), ..NewsFilter::default() },
        NewsFilter { published_before: Some(mid), ..NewsFilter::default() },
        NewsFilter {
            published_after: Some(at("2026-01-08T00:00:00Z")),
            published_before: Some(at("2026-01-22T00:00:00Z")),
            category: some.category.as_deref().map(|c| Exact::category(c).unwrap()),
            ..NewsFilter::default()
        },
        NewsFilter { isin: Some(Isin::parse("US0378331005").unwrap()), ..NewsFilter::default() },
        NewsFilter { category: Some(Exact::category("no-such-category").unwrap()), ..NewsFilter::default() },
    ];
    for f in &cases {
        let want = news_list(&articles, f);
        let got = walk(&app, &app.key, &news_filter_pairs(f), &[200]).await;
        assert_eq!(got, want, "{f:?}");
        assert_eq!(walk(&app, &app.key, &news_filter_pairs(f), &[2]).await, want, "{f:?} in pages of 2");
    }
    // The rule itself, on the demo data.
    assert!(!news_list(&articles, &cases[0]).is_empty());
    assert_eq!(news_list(&articles, &cases[4]).len(), 3, "undated articles have a tag, and no date");
    let dated = |f: &NewsFilter| news_list(&articles, f).len();
    assert_eq!(dated(&cases[5]) + dated(&cases[6]), 50, "no demo article is at the bound; undated ones pass neither");
    assert!(news_list(&articles, &cases[8]).is_empty() && news_list(&articles, &cases[9]).is_empty());
    // An unencoded '+' in the offset arrives as a space: refused, with a hint.
    let r = app.get("/v1/news?published_after=2026-01-01T00:00:00+05:30").await;
    let b = assert_problem(r, 400, "invalid_parameter").await;
    assert_eq!(b["param"], "published_after");
    assert!(b["detail"].as_str().unwrap().contains("%2B"), "{b}");
    // Encoded, it is the instant it says.
    let (data, _, _) =
        page(&app, &app.key, &[("published_after", "2026-01-15T05:30:00+05:30"), ("limit", "200")]).await;
    assert_eq!(data, news_list(&articles, &cases[5]));
}

#[tokio::test]
async fn bad_input_is_refused_naming_the_parameter() {
    let app = spawn().await;
    let invalid: &[(&str, &[&str])] = &[
        ("isin", &["isin=not-an-isin", "isin=INE002A01019", "isin="]),
        ("ticker", &["ticker=", "ticker=TWO%20WORDS"]),
        ("category", &["category="]),
        ("tag", &["tag=", "tag=a&tag=b"]),
        (
            "published_after",
            &["published_after=2026-01-01", "published_after=2026-01-01T00:00:00", "published_after=yesterday"],
        ),
        (
            "published_before",
            &[
                "published_before=2026-02-30T00:00:00Z",
                "published_after=2026-01-02T00:00:00Z&published_before=2026-01-01T00:00:00Z",
                "published_after=2026-01-01T05:30:00%2B05:30&published_before=2026-01-01T00:00:00Z",
            ],
        ),
        ("limit", &["limit=0", "limit=201", "limit=05"]),
    ];
    let unknown: &[(&str, &[&str])] = &[("tags", &["tags=a"]), ("search", &["search=bank"])];
    let cases = naming("invalid_parameter", invalid)
        .chain(naming("unknown_parameter", unknown))
        .chain(naming("invalid_cursor", &[("cursor", &["cursor=abc", "cursor="])]));
    app.assert_params_refused("/v1/news", cases).await;
    let b = assert_problem(app.get("/v1/news?tags=a").await, 400, "unknown_parameter").await;
    assert!(b["detail"].as_str().unwrap().contains("did you mean \"tag\""), "{b}");
    assert_problem(app.get("/v1/news?api_key=x").await, 400, "api_key_in_query").await;

    // Cursors: of other filters, altered, of the company list, of another store.
    let (_, next, _) = page(&app, &app.key, &[("limit", "2")]).await;
    let next = next.unwrap();
    let (_, tagged, _) = page(&app, &app.key, &[("limit", "1"), ("category", "earnings")]).await;
    let tagged = tagged.expect("more than one earnings article");
    let mut altered = next.clone().into_bytes();
    let i = altered.len() / 2;
    altered[i] = if altered[i] == b'A' { b'B' } else { b'A' };
    let altered = String::from_utf8(altered).unwrap();
    let company = app.get_json("/v1/companies?limit=1", 200).await["next_cursor"].as_str().unwrap().to_owned();
    let other = spawn().await;
    let (_, foreign, _) = page(&other, &other.key, &[("limit", "2")]).await;
    for (q, why) in [
        (vec![("cursor", next.as_str()), ("category", "earnings")], "other filters"),
        (vec![("cursor", tagged.as_str())], "other filters"),
        (vec![("cursor", tagged.as_str()), ("category", "Earnings")], "another category"),
        (vec![("cursor", altered.as_str())], "altered"),
        (vec![("cursor", company.as_str())], "a company cursor"),
        (vec![("cursor", foreign.as_deref().unwrap())], "another store's"),
    ] {
        let b = assert_problem(app.get(&path(&q)).await, 400, "invalid_cursor").await;
        assert_eq!(b["param"], "cursor", "{why}");
    }
    // The company list refuses a news cursor.
    let r = app.get(&format!("/v1/companies?cursor={next}")).await;
    assert_problem(r, 400, "invalid_cursor").await;
    // The same filters spelled otherwise (another offset, lower case) take it.
    let q = [("limit", "1"), ("published_after", "2026-01-01T00:00:00Z"), ("category", "earnings")];
    let (first, c, _) = page(&app, &app.key, &q).await;
    let c = c.expect("more than one earnings article this year");
    let (second, _, _) = page(
        &app,
        &app.key,
        &[("cursor", &c), ("published_after", "2026-01-01T05:30:00+05:30"), ("category", "earnings")],
    )
    .await;
    assert!(!second.is_empty() && second[0].slug != first[0].slug);
}

#[tokio::test]
async fn etag_304_head_compression_and_caching() {
    let app = spawn().await;
    let p = "/v1/news?limit=5&category=earnings";
    let r = app.get(p).await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "application/json");
    assert_eq!(r.headers()["cache-control"], "private, max-age=60");
    assert!(r.headers().contains_key("ratelimit"));
    let etag = r.headers()["etag"].to_str().unwrap().to_owned();
    assert!(etag.starts_with('"') && !etag.starts_with("W/"), "{etag}");
    let body = r.bytes().await.unwrap();
    let r = app.get_with_headers(p, &[("if-none-match", &etag)]).await;
    assert_eq!(r.status(), 304);
    assert_eq!(r.headers()["etag"].to_str().unwrap(), etag);
    assert!(r.bytes().await.unwrap().is_empty());
    // The same page again (kept) has the same tag and bytes; another page another tag.
    let r = app.get(p).await;
    assert_eq!(r.headers()["etag"].to_str().unwrap(), etag);
    assert_eq!(r.bytes().await.unwrap(), body);
    let other = app.get("/v1/news?limit=6&category=earnings").await;
    assert_ne!(other.headers()["etag"].to_str().unwrap(), etag);
    // HEAD: the same headers, no body.
    let head = app.client.head(format!("{}{p}", app.base)).bearer_auth(&app.key).send().await.unwrap();
    assert_eq!(head.status(), 200);
    assert_eq!(head.headers()["etag"].to_str().unwrap(), etag);
    assert_eq!(head.headers()["content-length"].to_str().unwrap(), body.len().to_string());
    assert!(head.bytes().await.unwrap().is_empty());
    // Compressed on request, with its own strong tag; the same JSON inside.
    let r = app.get_with_headers(p, &[("accept-encoding", "gzip")]).await;
    assert_eq!(r.headers()["content-encoding"], "gzip");
    let gz_tag = r.headers()["etag"].to_str().unwrap().to_owned();
    assert_ne!(gz_tag, etag);
    let mut json = Vec::new();
    flate2::read::GzDecoder::new(&r.bytes().await.unwrap()[..]).read_to_end(&mut json).unwrap();
    assert_eq!(json, body);
    let r = app.get_with_headers(p, &[("accept-encoding", "gzip"), ("if-none-match", &gz_tag)]).await;
    assert_eq!(r.status(), 304);
    // Without a key: 401, before anything else.
    assert_problem(app.get_open(p).await, 401, "missing_api_key").await;
    let r = app.client.post(format!("{}/v1/news", app.base)).bearer_auth(&app.key).send().await.unwrap();
    assert_problem(r, 405, "method_not_allowed").await;
}

#[tokio::test]
async fn counted_like_the_other_data_routes() {
    let app = spawn().await;
    let key = new_key(&*app.store, "acme", "pro", Environment::Live).await;
    app.wait_for_status("/v1/usage", &key, 200).await;
    let before = app.requests_of(&key).await;
    let r = app.get_with_key("/v1/news?limit=3", &key).await;
    assert_eq!(r.status(), 200);
    let etag = r.headers()["etag"].to_str().unwrap().to_owned();
    let r = app.get_with_key_and_headers("/v1/news?limit=3", &key, &[("if-none-match", &etag)]).await;
    assert_eq!(r.status(), 304);
    assert_eq!(app.get_with_key("/v1/news?limit=0", &key).await.status(), 400);
    assert_eq!(app.get_with_key("/v1/news?cursor=x", &key).await.status(), 400);
    assert_eq!(app.get_with_key("/v1/news?api_key=x", &key).await.status(), 400);
    let after = app.requests_of(&key).await;
    assert_eq!(after - before, 3, "the 200 and two 400s count; the 304 and the key in the query do not");
}

/// Polls until the article `slug` is on the page of `limit` (a kept page
/// is served until the node follows the new news generation); panics after
/// 5 s.
async fn until_listed(app: &TestApp, slug: &str, limit: &str) {
    let t = Instant::now();
    loop {
        let (data, _, _) = page(app, &app.key, &[("limit", limit)]).await;
        if data.iter().any(|a| a.slug.as_str() == slug) {
            return;
        }
        assert!(t.elapsed() < Duration::from_secs(5), "{slug} never listed");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn articles_imported_while_a_client_pages_cause_no_duplicates_or_skips() {
    let articles = with_undated();
    let app = spawn_with_articles(articles.clone()).await;
    let all = news_list(&articles, &NewsFilter::default());
    let mut seen: Vec<ArticleSummary> = Vec::new();
    let (data, mut cursor, _) = page(&app, &app.key, &[("limit", "10")]).await;
    seen.extend(data);
    let mut round = 0;
    while let Some(c) = cursor.take() {
        // Between pages: articles newer than everything (before the
        // position), older ones (after it), undated ones on both sides of
        // any undated position, and an existing one re-imported unchanged.
        round += 1;
        let last = seen.last().unwrap().clone();
        let mut new = Vec::new();
        let mut newer = bare_article(&format!("breaking-{round}"), "Breaking");
        newer.published_at = Some(at("2030-01-01T00:00:00Z") + chrono::Duration::minutes(round));
        new.push(newer);
        if let Some(t) = last.published_at {
            let mut older = bare_article(&format!("older-{round}"), "Older");
            older.published_at = Some(t - chrono::Duration::seconds(1));
            new.push(older);
            let mut same_time = bare_article(&format!("zz-same-time-{round}"), "Same instant, later slug");
            same_time.published_at = Some(t);
            new.push(same_time);
        }
        new.push(bare_article(&format!("undated-0-{round}"), "Undated, early slug"));
        new.push(bare_article(&format!("undated-z-{round}"), "Undated, late slug"));
        new.push(articles.iter().find(|a| a.slug == all[5].slug).unwrap().clone());
        app.store.upsert_articles(&new).await.unwrap();
        until_listed(&app, &format!("breaking-{round}"), "200").await;
        let (data, next, _) = page(&app, &app.key, &[("limit", "10"), ("cursor", &c)]).await;
        assert!(
            data.iter().all(|a| list_order_after(a, &last)),
            "page {round} starts after the position, whatever was imported"
        );
        seen.extend(data);
        cursor = next;
    }
    assert!(round >= 5, "{round} pages");
    let mut slugs: Vec<&str> = seen.iter().map(|a| a.slug.as_str()).collect();
    let walked = slugs.clone();
    slugs.sort_unstable();
    slugs.dedup();
    assert_eq!(slugs.len(), walked.len(), "no duplicates: {walked:?}");
    for a in &all {
        assert!(walked.contains(&a.slug.as_str()), "{} skipped", a.slug);
    }
    let positions: Vec<usize> =
        all.iter().map(|a| walked.iter().position(|s| *s == a.slug.as_str()).unwrap()).collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]), "in list order");
    // Older articles imported after the position were met later on.
    assert!(walked.iter().any(|s| s.starts_with("older-")));
    assert!(walked.iter().any(|s| s.starts_with("undated-z-")));
    assert!(!walked.iter().any(|s| s.starts_with("breaking-")), "newer ones were before every position");
}

/// Whether `a` comes after `last` in the list's order.
fn list_order_after(a: &ArticleSummary, last: &ArticleSummary) -> bool {
    mds_domain::news::list_order(&NewsKey::of(a), &NewsKey::of(last)).is_gt()
}

/// The tag a page hashed whole gets.
fn digest_tag(body: &[u8]) -> String {
    let hex: String = xxhash_rust::xxh3::xxh3_128(body).to_be_bytes().iter().map(|b| format!("{b:02x}")).collect();
    format!("\"{hex}\"")
}

/// With no page kept, every page is made (from the node's news index once
/// it is held); its tag is the digest of its bytes, on either path: the
/// same page made again has the same tag, and an import that leaves the
/// page's rows as they were leaves its tag (as docs/API-DESIGN.md says).
#[tokio::test]
async fn a_made_page_is_tagged_with_its_digest_across_an_import() {
    let mut config = reloading_every(Duration::from_millis(100));
    config.node.page_cache_bytes = 0;
    let app = spawn_with(Options { config, ..Options::default() }).await;
    let p = "/v1/news?limit=3";
    let get = |path: &'static str| {
        let app = &app;
        async move {
            let r = app.get(path).await;
            assert_eq!(r.status(), 200);
            let etag = r.headers()["etag"].to_str().unwrap().to_owned();
            let body = r.bytes().await.unwrap();
            assert_eq!(etag, digest_tag(&body), "{path}");
            (etag, body)
        }
    };
    let (etag, body) = get(p).await;
    // Through the reloads that build the index, and after.
    for _ in 0..10 {
        assert_eq!(get(p).await, (etag.clone(), body.clone()), "made again: the same tag and bytes");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let r = app.get_with_headers(p, &[("if-none-match", &etag)]).await;
    assert_eq!(r.status(), 304);
    assert_ne!(get("/v1/news?limit=4").await.0, etag);
    let mut old = bare_article("an-old-one", "Old news");
    old.published_at = Some(at("2001-01-01T00:00:00Z"));
    app.store.upsert_articles(&[old]).await.unwrap();
    until_listed(&app, "an-old-one", "200").await;
    for _ in 0..10 {
        assert_eq!(get(p).await, (etag.clone(), body.clone()), "rows unchanged by the import: the same tag");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn an_import_is_listed_within_a_reload_and_changes_the_tag() {
    let app = spawn().await;
    let r = app.get("/v1/news?limit=3").await;
    let etag = r.headers()["etag"].to_str().unwrap().to_owned();
    let mut fresh = bare_article("fresh-off-the-press", "Fresh");
    fresh.published_at = Some(at("2031-01-01T00:00:00Z"));
    app.store.upsert_articles(&[fresh]).await.unwrap();
    until_listed(&app, "fresh-off-the-press", "3").await;
    let (data, _, _) = page(&app, &app.key, &[("limit", "3")]).await;
    assert_eq!(data[0].slug.as_str(), "fresh-off-the-press");
    let r = app.get_with_headers("/v1/news?limit=3", &[("if-none-match", &etag)]).await;
    assert_eq!(r.status(), 200, "the old tag no longer matches");
}

const ISINS: &[&str] = &["INE002A01018", "INE467B01029", "INE040A01034", "INE009A01021"];
const TICKERS: &[&str] = &["RELIANCE", "tcs", "HdfcBank", "INFY", "M&M"];
const CATEGORIES: &[&str] = &["earnings", "Earnings", "deals", "markets", "a \"quoted\" one"];
const TAGS: &[&str] = &["q2", "Q2", "banks", "बैंक", "mid cap", "say \"hi\"", "a\\b", "x"];

/// Random articles: shared instants (several slugs each), offsets and
/// fractional seconds, undated ones, tickers in any case, tags JSON must
/// escape.
fn random_articles(rng: &mut Rng, n: usize) -> Vec<Article> {
    let instants: Vec<String> = (0..40)
        .map(|i| {
            let frac = ["", ".5", ".000001", ".123456789"][i % 4];
            format!("2026-0{}-{:02}T{:02}:{:02}:00{frac}+05:30", 1 + i % 3, 1 + i % 28, i % 24, (i * 7) % 60)
        })
        .collect();
    (0..n)
        .map(|i| {
            let mut a = bare_article(&format!("r-{:03}-{}", (i * 37) % 1000, ["a", "b", "zz"][i % 3]), "Random");
            if !rng.chance(15) {
                a.published_at = Some(at(rng.pick(&instants).as_str()));
            }
            if rng.chance(80) {
                a.isin = Some(Isin::parse(rng.pick::<&str>(ISINS)).unwrap());
            }
            if rng.chance(80) {
                a.ticker = Some(rng.pick::<&str>(TICKERS).to_string());
            }
            if rng.chance(70) {
                a.category = Some(rng.pick::<&str>(CATEGORIES).to_string());
            }
            for _ in 0..rng.below(4) {
                a.tags.push(rng.pick::<&str>(TAGS).to_string());
            }
            a
        })
        .collect()
}

fn random_filter(rng: &mut Rng) -> NewsFilter {
    let instant =
        |rng: &mut Rng| at(&format!("2026-0{}-{:02}T{:02}:00:00Z", 1 + rng.below(3), 1 + rng.below(28), rng.below(24)));
    let mut f = NewsFilter::default();
    if rng.chance(25) {
        f.isin = Some(Isin::parse(if rng.chance(90) { rng.pick::<&str>(ISINS) } else { "US0378331005" }).unwrap());
    }
    if rng.chance(25) {
        f.ticker = Some(Ticker::parse(rng.pick::<&str>(&["reliance", "TCS", "hdfcbank", "m&m", "NOPE"])).unwrap());
    }
    if rng.chance(20) {
        f.category = Some(Exact::category(rng.pick::<&str>(CATEGORIES)).unwrap());
    }
    if rng.chance(25) {
        f.tag = Some(Exact::tag(rng.pick::<&str>(TAGS)).unwrap());
    }
    if rng.chance(25) {
        f.published_after = Some(instant(rng));
    }
    if rng.chance(25) {
        let t = instant(rng);
        if f.published_after.is_none_or(|a| a < t) {
            f.published_before = Some(t);
        }
    }
    f
}

#[tokio::test]
async fn random_filters_limits_and_cursor_walks_match_the_plain_rule() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let articles = random_articles(&mut rng, 400);
    let app = spawn_with_articles(articles.clone()).await;
    // Many requests: a key whose minute allows them.
    let key = new_key(&*app.store, "acme", "enterprise", Environment::Live).await;
    app.wait_for_status("/v1/usage", &key, 200).await;
    let mut nonempty = 0;
    for round in 0..60 {
        let f = random_filter(&mut rng);
        let want = news_list(&articles, &f);
        nonempty += usize::from(!want.is_empty());
        let q = news_filter_pairs(&f);
        // A walk whose page size changes from page to page.
        let limits: Vec<usize> = (0..3)
            .map(|_| {
                let most = if rng.chance(50) { 10 } else { 200 };
                1 + rng.below(most)
            })
            .collect();
        let got = walk(&app, &key, &q, &limits).await;
        assert_eq!(got, want, "round {round}: {f:?}, limits {limits:?}");
        // A page resumed from a random position matches the rule's slice:
        // the cursor of a page ending at the position, then a page of any size.
        if !want.is_empty() {
            let i = rng.below(want.len().min(200));
            let (upto, cursor, _) = {
                let n = (i + 1).to_string();
                let mut cq: Vec<(&str, &str)> = q.iter().map(|(k, v)| (*k, v.as_str())).collect();
                cq.push(("limit", &n));
                page(&app, &key, &cq).await
            };
            assert_eq!(upto, want[..=i]);
            if let Some(c) = cursor {
                let limit = (1 + rng.below(30)).to_string();
                let mut pq: Vec<(&str, &str)> = q.iter().map(|(k, v)| (*k, v.as_str())).collect();
                pq.push(("cursor", &c));
                pq.push(("limit", &limit));
                let (data, _, more) = page(&app, &key, &pq).await;
                let rest = news_after(&want, Some(&NewsKey::of(&want[i])));
                let n: usize = limit.parse().unwrap();
                assert_eq!(data, rest[..rest.len().min(n)], "round {round}: after {}", want[i].slug);
                assert_eq!(more, rest.len() > n);
            }
        }
    }
    assert!(nonempty >= 30, "most filters select something: {nonempty}");
}

/// `{"name", "count"}` facets of `values` (one per article that carries
/// each, a value repeated on one article counted once), ordered by count
/// descending then name: computed here, apart from the server.
fn expected_facets<'a>(values: impl Iterator<Item = Vec<&'a str>>) -> Value {
    let mut counts = std::collections::BTreeMap::<&str, u64>::new();
    for mut v in values {
        v.sort_unstable();
        v.dedup();
        for name in v {
            *counts.entry(name).or_default() += 1;
        }
    }
    let mut v: Vec<(&str, u64)> = counts.into_iter().collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    v.into_iter().map(|(name, count)| serde_json::json!({"name": name, "count": count})).collect()
}

#[tokio::test]
async fn facets_count_the_categories_and_tags_and_are_counted() {
    let mut articles = with_undated();
    articles[0].tags = vec!["twice".into(), "twice".into()];
    let app = spawn_with_articles(articles.clone()).await;
    let key = new_key(&*app.store, "acme", "pro", Environment::Live).await;
    app.wait_for_status("/v1/usage", &key, 200).await;
    let before = app.requests_of(&key).await;
    let r = app.get_with_key("/v1/news/facets", &key).await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["cache-control"], "private, max-age=60");
    let etag = r.headers()["etag"].to_str().unwrap().to_owned();
    let facets: Value = r.json().await.unwrap();
    assert_eq!(facets.as_object().unwrap().len(), 2, "{facets}");
    assert_eq!(
        facets["categories"],
        expected_facets(articles.iter().map(|a| a.category.iter().map(String::as_str).collect()))
    );
    assert_eq!(facets["tags"], expected_facets(articles.iter().map(|a| a.tags.iter().map(String::as_str).collect())));
    assert!(facets["categories"].as_array().unwrap().len() > 1, "{facets}");
    // Each count is what the filter gives.
    for f in facets["categories"].as_array().unwrap() {
        let name = f["name"].as_str().unwrap();
        let (data, _, _) = page(&app, &app.key, &[("category", name), ("limit", "200")]).await;
        assert_eq!(data.len() as u64, f["count"].as_u64().unwrap(), "{name}");
    }
    let r = app.get_with_key_and_headers("/v1/news/facets", &key, &[("if-none-match", &etag)]).await;
    assert_eq!(r.status(), 304);
    let b = assert_problem(app.get_with_key("/v1/news/facets?limit=1", &key).await, 400, "unknown_parameter").await;
    assert_eq!(b["param"], "limit");
    assert_eq!(app.requests_of(&key).await - before, 2, "the 200 and the 400 count; the 304 does not");
    assert_problem(app.get_open("/v1/news/facets").await, 401, "missing_api_key").await;
}

#[tokio::test]
async fn an_unknown_category_or_tag_gives_an_empty_page_with_the_nearest_values() {
    let app = spawn_with_articles(with_undated()).await;
    let facets = app.get_json("/v1/news/facets", 200).await;
    let category = facets["categories"][0]["name"].as_str().unwrap().to_owned();
    let tag = facets["tags"][0]["name"].as_str().unwrap().to_owned();
    // A letter dropped, and a case changed: still a near value.
    let typo: String = category.chars().take(category.chars().count() - 1).collect();
    let v = app.get_json(&path(&[("category", &typo)]), 200).await;
    assert_eq!(v["data"], serde_json::json!([]));
    assert_eq!((v["has_more"].as_bool(), v["next_cursor"].is_null()), (Some(false), true));
    assert_eq!(v["hint"]["param"], "category", "{v}");
    assert_eq!(v["hint"]["nearest"][0], category.as_str(), "{v}");
    assert!(v["hint"]["nearest"].as_array().unwrap().len() <= 5);
    let upper = tag.to_uppercase();
    let v = app.get_json(&path(&[("tag", &upper)]), 200).await;
    assert_eq!(
        (v["hint"]["param"].as_str(), v["hint"]["nearest"][0].as_str()),
        (Some("tag"), Some(tag.as_str())),
        "{v}"
    );
    // The first of the two that is unknown is named.
    let v = app.get_json(&path(&[("tag", &upper), ("category", &typo)]), 200).await;
    assert_eq!(v["hint"]["param"], "category");
    // Nothing near: named, with no value.
    let v = app.get_json(&path(&[("tag", "zzqxv")]), 200).await;
    assert_eq!(v["hint"], serde_json::json!({"param": "tag", "nearest": []}));
    // Known values that select nothing together: an empty page, no hint.
    let v = app.get_json(&path(&[("tag", "undated"), ("published_after", "2026-01-01T00:00:00Z")]), 200).await;
    assert_eq!(v["data"], serde_json::json!([]));
    assert!(v.get("hint").is_none(), "{v}");
    let v = app.get_json(&path(&[("category", &category), ("limit", "1")]), 200).await;
    assert!(v.get("hint").is_none(), "{v}");
}
