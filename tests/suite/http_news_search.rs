//! `GET /v1/news?q=` through the real server (contract section 15): words
//! (all required), phrases, prefixes, case and accents folded, ranking by
//! relevance (BM25) or `sort=published_at`, combined with the other
//! filters, cursor walks that meet each hit once and are bound to the
//! query, bad `q` refused naming it, counting as the list, and an article
//! imported while serving found within a reload. Runs on SQLite, and on
//! PostgreSQL with `MDS_TEST_BACKEND=postgres`.

use crate::common;

use std::time::{Duration, Instant};

use common::{Options, TestApp, assert_problem, new_key, spawn_with};
use mds_domain::time::parse_rfc3339;
use mds_domain::{Article, ArticleSummary, Environment, Isin};
use mds_testkit::fixtures::bare_article;
use serde_json::Value;

/// `/v1/news` with `pairs` as its query string, percent-encoded.
fn path(pairs: &[(&str, &str)]) -> String {
    let url = reqwest::Url::parse_with_params("http://x/v1/news", pairs).unwrap();
    format!("/v1/news?{}", url.query().unwrap())
}

/// One page: its slugs, `next_cursor`.
async fn page(app: &TestApp, pairs: &[(&str, &str)]) -> (Vec<String>, Option<String>) {
    let p = path(pairs);
    let r = app.get(&p).await;
    assert_eq!(r.status(), 200, "GET {p}");
    let v: Value = r.json().await.unwrap();
    let data: Vec<ArticleSummary> = serde_json::from_value(v["data"].clone()).unwrap();
    let next = v["next_cursor"].as_str().map(str::to_owned);
    assert_eq!(next.is_some(), v["has_more"].as_bool().unwrap(), "{v}");
    (data.into_iter().map(|a| a.slug.as_str().to_owned()).collect(), next)
}

/// Every hit of a search, following `next_cursor` `limit` at a time.
async fn walk(app: &TestApp, pairs: &[(&str, &str)], limit: usize) -> Vec<String> {
    let limit = limit.to_string();
    let (mut out, mut cursor) = (Vec::new(), None::<String>);
    loop {
        let mut q = pairs.to_vec();
        q.push(("limit", &limit));
        if let Some(c) = &cursor {
            q.push(("cursor", c));
        }
        let (slugs, next) = page(app, &q).await;
        out.extend(slugs);
        match next {
            Some(c) => cursor = Some(c),
            None => return out,
        }
    }
}

/// Every slug of one page of `q` (at most 200).
async fn hits(app: &TestApp, q: &str) -> Vec<String> {
    page(app, &[("q", q), ("limit", "200")]).await.0
}

const RELIANCE: &str = "INE002A01018";

/// An article dated `day` of January 2026.
fn article(slug: &str, day: u32, headline: &str, body: &str) -> Article {
    Article {
        body: Some(body.to_owned()),
        published_at: Some(parse_rfc3339(&format!("2026-01-{day:02}T09:00:00Z")).unwrap()),
        ..bare_article(slug, headline)
    }
}

/// Articles made for the searches below, and 40 about markets for walks
/// (the word once to four times, a few sharing an instant, some undated).
fn corpus() -> Vec<Article> {
    let mut out = vec![
        Article {
            isin: Some(Isin::parse(RELIANCE).unwrap()),
            ticker: Some("RELIANCE".into()),
            category: Some("earnings".into()),
            ..article("reliance-profit", 20, "Reliance Industries net profit rises", "Refining margins held up.")
        },
        article("jio-subscribers", 21, "Jio adds subscribers", "Its parent, Reliance, said net profit at Jio rose."),
        article("profit-net", 22, "Margins and volumes", "A profit, net of one-offs, that Reliance called modest."),
        Article {
            subheadline: Some("La Société Générale ouvre un bureau".into()),
            ..article("societe-generale", 5, "French bank opens a Mumbai desk", "Hiring traders.")
        },
        article("infra-push", 6, "Government infrastructure push", "Roads and ports first."),
        article("infra-word", 7, "Infra funds raise money", "Infra is short for infrastructure."),
        article("operators", 8, "Tata OR Mahindra", "NOT a merger, NEAR a deal."),
    ];
    for i in 0..40u32 {
        let mut a = article(
            &format!("market-{i:02}"),
            1 + i % 4,
            &format!("Session {i}"),
            &"market moves ".repeat(1 + (i % 4) as usize),
        );
        if i % 9 == 0 {
            a.published_at = None;
        }
        out.push(a);
    }
    out
}

async fn spawn_corpus() -> TestApp {
    spawn_with(Options { articles: corpus(), ..Options::default() }).await
}

#[tokio::test]
async fn words_phrases_prefixes_case_and_accents() {
    let app = spawn_corpus().await;
    let sorted = |mut v: Vec<String>| {
        v.sort();
        v
    };
    // Every word must match, wherever it is.
    assert_eq!(sorted(hits(&app, "reliance profit").await), ["jio-subscribers", "profit-net", "reliance-profit"]);
    assert_eq!(hits(&app, "reliance subscribers").await, ["jio-subscribers"]);
    // A phrase: the words next to each other, in order.
    assert_eq!(sorted(hits(&app, "\"net profit\"").await), ["jio-subscribers", "reliance-profit"]);
    assert_eq!(hits(&app, "\"net profit\" refining").await, ["reliance-profit"]);
    // A word is whole; a prefix is any word beginning so.
    assert_eq!(hits(&app, "infra").await, ["infra-word"]);
    assert_eq!(sorted(hits(&app, "infra*").await), ["infra-push", "infra-word"]);
    assert_eq!(sorted(hits(&app, "INFRASTRUCTURE").await), ["infra-push", "infra-word"]);
    // Accents and case folded both ways.
    for q in ["societe", "Société", "SOCIETE generale", "soci*"] {
        assert_eq!(hits(&app, q).await, ["societe-generale"], "{q}");
    }
    // Operators and punctuation are words and separators, not syntax.
    assert_eq!(hits(&app, "tata OR mahindra").await, ["operators"]);
    assert_eq!(hits(&app, "NEAR deal").await, ["operators"]);
    assert_eq!(hits(&app, "body:roads").await, Vec::<String>::new(), "a phrase body+roads: not in the text");
    assert_eq!(hits(&app, "roads & ports").await, ["infra-push"]);
    assert!(hits(&app, "nowhere").await.is_empty());
}

#[tokio::test]
async fn ranked_by_relevance_unless_sorted_by_date() {
    let app = spawn_corpus().await;
    // "Reliance" in the headline outranks it in a body; the shorter body
    // of the two others ranks first.
    let ranked = hits(&app, "reliance").await;
    assert_eq!(ranked[0], "reliance-profit", "{ranked:?}");
    assert_eq!(ranked.len(), 3);
    let (by_date, _) = page(&app, &[("q", "reliance"), ("sort", "published_at")]).await;
    assert_eq!(by_date, ["profit-net", "jio-subscribers", "reliance-profit"], "newest first");
    // More occurrences of the word rank higher (the bodies differ only in
    // how often it occurs), and an explicit sort=relevance is the default.
    let markets = hits(&app, "market").await;
    assert_eq!(markets.len(), 40);
    let times = |slug: &str| 1 + slug[7..].parse::<u32>().unwrap() % 4;
    assert!(markets.windows(2).all(|w| times(&w[0]) >= times(&w[1])), "{markets:?}");
    assert_eq!(page(&app, &[("q", "market"), ("sort", "relevance"), ("limit", "200")]).await.0, markets);
    // In date order: the list's order, undated last.
    let dated = page(&app, &[("q", "market"), ("sort", "published_at"), ("limit", "200")]).await.0;
    let list = page(&app, &[("limit", "200")]).await.0;
    let want: Vec<String> = list.into_iter().filter(|s| s.starts_with("market-")).collect();
    assert_eq!(dated, want);
}

#[tokio::test]
async fn combined_with_the_filters() {
    let app = spawn_corpus().await;
    assert_eq!(page(&app, &[("q", "\"net profit\""), ("isin", RELIANCE)]).await.0, ["reliance-profit"]);
    assert_eq!(
        page(&app, &[("q", "reliance"), ("ticker", "reliance"), ("category", "earnings")]).await.0,
        ["reliance-profit"]
    );
    assert!(page(&app, &[("q", "jio"), ("isin", RELIANCE)]).await.0.is_empty());
    let window = [("q", "reliance"), ("published_after", "2026-01-20T12:00:00Z"), ("sort", "published_at")];
    assert_eq!(page(&app, &window).await.0, ["profit-net", "jio-subscribers"]);
    let window = [("q", "market"), ("published_before", "2026-01-02T00:00:00Z"), ("limit", "200")];
    let early = page(&app, &window).await.0;
    assert!(!early.is_empty() && early.iter().all(|s| s.starts_with("market-")));
    let v = app.get_json(&path(&[("q", "reliance"), ("tag", "no-such-tag")]), 200).await;
    assert_eq!(v["data"], serde_json::json!([]));
}

#[tokio::test]
async fn cursor_walks_meet_each_hit_once_and_are_bound_to_the_query() {
    let app = spawn_corpus().await;
    for sort in ["relevance", "published_at"] {
        let all = page(&app, &[("q", "market"), ("sort", sort), ("limit", "200")]).await.0;
        assert_eq!(all.len(), 40);
        for limit in [1, 3, 7, 40] {
            assert_eq!(walk(&app, &[("q", "market"), ("sort", sort)], limit).await, all, "{sort} by {limit}");
        }
        let early = [("q", "moves"), ("sort", sort), ("published_before", "2026-01-03T00:00:00Z")];
        let mut all_early = early.to_vec();
        all_early.push(("limit", "200"));
        let filtered = page(&app, &all_early).await.0;
        assert!(filtered.len() > 5);
        assert_eq!(walk(&app, &early, 2).await, filtered);
    }
    let (_, cursor) = page(&app, &[("q", "market"), ("limit", "2")]).await;
    let cursor = cursor.unwrap();
    for other in [
        vec![("q", "moves"), ("cursor", cursor.as_str())],
        vec![("q", "market"), ("sort", "published_at"), ("cursor", cursor.as_str())],
        vec![("cursor", cursor.as_str())],
    ] {
        let body = assert_problem(app.get(&path(&other)).await, 400, "invalid_cursor").await;
        assert_eq!(body["param"], "cursor");
    }
}

#[tokio::test]
async fn a_bad_q_is_refused_naming_it_and_searches_count_as_the_list() {
    let app = spawn_corpus().await;
    let long = "a".repeat(201);
    for bad in ["", "   ", "\"net profit", "& * -", long.as_str()] {
        let body = assert_problem(app.get(&path(&[("q", bad)])).await, 400, "invalid_parameter").await;
        assert_eq!(body["param"], "q", "{bad:?}: {body}");
    }
    let body = assert_problem(app.get("/v1/news?sort=relevance").await, 400, "invalid_parameter").await;
    assert_eq!(body["param"], "sort");
    let body = assert_problem(app.get("/v1/news?q=x&sort=date").await, 400, "invalid_parameter").await;
    assert_eq!(body["param"], "sort");

    let key = new_key(&*app.store, "acme", "pro", Environment::Live).await;
    app.wait_for_status("/v1/usage", &key, 200).await;
    let before = app.requests_of(&key).await;
    assert_eq!(app.get_with_key("/v1/news?q=market&limit=3", &key).await.status(), 200);
    assert_eq!(app.get_with_key("/v1/news?q=%22x", &key).await.status(), 400);
    assert_eq!(app.requests_of(&key).await - before, 2, "a search and a refused one count as the list's requests");
}

#[tokio::test]
async fn an_article_imported_while_serving_becomes_findable() {
    let app = spawn_corpus().await;
    assert!(hits(&app, "zanzibar").await.is_empty());
    let fresh = article("fresh-zanzibar", 28, "Spice exporters eye Zanzibar", "Clove prices.");
    app.store.upsert_articles(&[fresh]).await.unwrap();
    let t = Instant::now();
    while hits(&app, "zanzibar").await.is_empty() {
        assert!(t.elapsed() < Duration::from_secs(20), "the imported article was never found");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(hits(&app, "zanzibar clove").await, ["fresh-zanzibar"]);
    assert_eq!(hits(&app, "market").await.len(), 40, "the rest still found");
}

#[tokio::test]
async fn the_rust_client_and_the_cli_search() {
    let app = spawn_corpus().await;
    let client = app.rust_client();
    let page = client.news_list().q("\"net profit\"").sort(mds_client::NewsSort::PublishedAt).send().await.unwrap();
    let slugs: Vec<&str> = page.data.iter().map(|a| a.slug.as_str()).collect();
    assert_eq!(slugs, ["jio-subscribers", "reliance-profit"]);
    let all = client.news_list().q("market").limit(7).all().await.unwrap();
    assert_eq!(all.len(), 40);
    let out = app.mds_get(&["news", "--q", "Société", "--format", "jsonl"]).await;
    let lines: Vec<Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 1, "{out}");
    assert_eq!(lines[0]["slug"], "societe-generale");
    let out = app.mds_get(&["news", "--q", "reliance", "--sort", "published_at", "--all", "--limit", "1"]).await;
    let listed: Vec<ArticleSummary> = serde_json::from_str(&out).unwrap();
    let slugs: Vec<&str> = listed.iter().map(|a| a.slug.as_str()).collect();
    assert_eq!(slugs, ["profit-net", "jio-subscribers", "reliance-profit"]);
}
