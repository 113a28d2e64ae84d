//! The news index's snapshot in the store, through the real binary: `mds
//! import news` leaves the snapshot of the news generation it made; a node
//! started on that store loads it (and says so: it does not build) and
//! serves news pages byte for byte as the store path writes them; a
//! damaged snapshot is refused with a warning, the node builds the index
//! instead, serves the same pages and saves a good snapshot, which the
//! next node loads. The snapshot carries the search index (`q`) too: one
//! loaded from it answers every search as one built from the store, and
//! a node that loaded it serves them. On the backend `MDS_TEST_BACKEND`
//! names.

use crate::common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{TimeZone, Utc};
use common::TestDatabase;
use common::process::{Proc, mds};
use mds_domain::news::{Exact, NewsKey};
use mds_domain::news_search::{NewsSort, NewsText};
use mds_domain::{AccountName, Article, ArticleSummary, Environment, Isin, NewsFilter, Page, Ticker, Tier, TierName};
use mds_node::news_index::SearchPosition;
use mds_node::news_load::{self, decode};
use mds_store::{DatabaseUrl, Store};
use mds_testkit::rng::Rng;
use tempfile::TempDir;

const ISINS: [&str; 3] = ["INE002A01018", "INE467B01029", "INE040A01034"];
const TICKERS: [&str; 3] = ["RELIANCE", "TCS", "HDFCBANK"];
const WORDS: [&str; 4] = ["results", "deals", "bank \"q2\"", "बैंक"];

/// The demo articles and `n` more of every shape: dated (some sharing an
/// instant, some with a fraction) or not, with or without each field.
fn articles(n: usize) -> Vec<Article> {
    let mut rng = Rng(0x5EED_0F4E_3D00);
    let mut out = mds_import::demo_articles();
    for i in 0..n {
        let mut a = mds_testkit::fixtures::bare_article(&format!("gen-{i:04}"), &format!("Story \"{i}\" — ünïcödé"));
        if !rng.chance(15) {
            let at = 1_767_225_600 + (rng.below(40) as i64) * 3_600;
            a.published_at = Some(Utc.timestamp_opt(at, if rng.chance(50) { 0 } else { 250_000_000 }).unwrap());
        }
        if rng.chance(30) {
            a.updated_at = Some(Utc.timestamp_opt(1_767_400_000 + i as i64, 7).unwrap());
        }
        if rng.chance(70) {
            a.excerpt = Some(format!("An excerpt of story {i}, with a \\ and a tab\t."));
        }
        if rng.chance(80) {
            a.isin = Some(Isin::parse(rng.pick::<&str>(&ISINS)).unwrap());
            a.ticker = Some(rng.pick(&TICKERS).to_string());
        }
        if rng.chance(70) {
            a.category = Some(rng.pick(&WORDS).to_string());
        }
        for _ in 0..rng.below(3) {
            a.tags.push(rng.pick(&WORDS).to_string());
        }
        a.url = rng.chance(60).then(|| format!("https://news.example/gen-{i}"));
        out.push(a);
    }
    out
}

/// A migrated store on the test backend, with a key of account `acme` on
/// a tier whose limits the walks never reach.
async fn store_with_key() -> (Arc<dyn Store>, DatabaseUrl, TestDatabase, String) {
    let (url, db) = TestDatabase::create().await;
    let store = mds_store::open(&url).await.expect("open");
    store.migrate().await.expect("migrate");
    let tier =
        Tier { name: TierName::parse("walks").unwrap(), rate_limit_per_minute: 1_000_000, monthly_quota: 1 << 40 };
    store.set_tier(&tier, Utc::now()).await.unwrap();
    store.create_account(&AccountName::parse("acme").unwrap(), Utc::now()).await.unwrap();
    let key = common::new_key(&*store, "acme", "walks", Environment::Live).await;
    (store, url, db, key)
}

/// Runs `mds import news` of `articles` on the store at `url`; asserts it
/// succeeds without a warning.
fn import(url: &DatabaseUrl, dir: &TempDir, articles: &[Article]) {
    let file = dir.path().join("news.jsonl");
    let lines: Vec<String> = articles.iter().map(|a| serde_json::to_string(a).unwrap()).collect();
    std::fs::write(&file, lines.join("\n")).unwrap();
    let out = mds()
        .env("MDS_DATABASE_URL", url.expose())
        .env("MDS_LOG", "warn")
        .args(["import", "news"])
        .arg(&file)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("warning") && !stderr.contains("WARN"), "{stderr}");
}

/// `mds serve` on the store at `url`.
fn serve(url: &DatabaseUrl, dir: &TempDir) -> Proc {
    let mut cmd = mds();
    cmd.env("MDS_DATABASE_URL", url.expose()).current_dir(dir.path()).arg("serve");
    Proc::start(cmd)
}

/// Waits up to 60 s for a log line holding `needle`.
fn wait_for_log(node: &Proc, needle: &str) {
    let t = Instant::now();
    while !node.logs().contains(needle) {
        assert!(t.elapsed() < Duration::from_secs(60), "no {needle:?} in the log:\n{}", node.logs());
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Filters that select something of `articles`, and none.
fn filters() -> Vec<NewsFilter> {
    let one = NewsFilter::default;
    let at = |h: i64| Some(Utc.timestamp_opt(1_767_225_600 + h * 3_600, 0).unwrap());
    vec![
        one(),
        NewsFilter { isin: Some(Isin::parse(ISINS[1]).unwrap()), ..one() },
        NewsFilter { ticker: Some(Ticker::parse("tcs").unwrap()), ..one() },
        NewsFilter { category: Some(Exact::category(WORDS[2]).unwrap()), ..one() },
        NewsFilter { tag: Some(Exact::tag(WORDS[3]).unwrap()), isin: Some(Isin::parse(ISINS[0]).unwrap()), ..one() },
        NewsFilter { published_after: at(10), published_before: at(30), ..one() },
        NewsFilter { published_before: at(20), ..one() },
    ]
}

/// The query string of `filter` and `limit`, percent-encoded.
fn query(filter: &NewsFilter, limit: usize, cursor: Option<&str>) -> String {
    let mut pairs: Vec<(&str, String)> = vec![("limit", limit.to_string())];
    pairs.extend(mds_testkit::fixtures::news_filter_pairs(filter));
    if let Some(c) = cursor {
        pairs.push(("cursor", c.to_owned()));
    }
    reqwest::Url::parse_with_params("http://x/v1/news", &pairs).unwrap().query().unwrap().to_owned()
}

/// Walks every filter's pages on `node`, a few sizes each, and asserts
/// that each page is, byte for byte, the page the store path writes
/// (`serde_json` of a `Page` of the store's summaries after the same
/// position) with the cursor the node gave, which the next page then
/// checks; returns how many pages.
async fn pages_are_the_store_paths(node: &Proc, store: &dyn Store, key: &str) -> usize {
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let mut pages = 0;
    for filter in filters() {
        for limit in [3, 50] {
            let (mut cursor, mut after): (Option<String>, Option<NewsKey>) = (None, None);
            loop {
                let url = format!("{}/v1/news?{}", node.base(), query(&filter, limit, cursor.as_deref()));
                let r = client.get(&url).bearer_auth(key).send().await.unwrap();
                assert_eq!(r.status(), 200, "{url}");
                let served = r.bytes().await.unwrap();
                let mut data: Vec<ArticleSummary> = store.news_page(&filter, after.as_ref(), limit + 1).await.unwrap();
                let has_more = data.len() > limit;
                data.truncate(limit);
                let next_cursor = serde_json::from_slice::<serde_json::Value>(&served).unwrap()["next_cursor"]
                    .as_str()
                    .map(str::to_owned);
                let last = data.last().map(NewsKey::of);
                let want = serde_json::to_vec(&Page::new(data, next_cursor.clone(), has_more)).unwrap();
                assert!(
                    served[..] == want[..],
                    "{url}:\nserved {}\nstore  {}",
                    String::from_utf8_lossy(&served),
                    String::from_utf8_lossy(&want)
                );
                pages += 1;
                match next_cursor {
                    Some(c) => (cursor, after) = (Some(c), last),
                    None => break,
                }
            }
        }
    }
    pages
}

#[tokio::test]
async fn an_import_leaves_a_snapshot_that_a_node_loads_and_serves() {
    let (store, url, _db, key) = store_with_key().await;
    let dir = tempfile::tempdir().unwrap();
    let articles = articles(300);
    import(&url, &dir, &articles);

    let generation = store.generations().await.unwrap().news;
    let bytes = store.news_snapshot(generation).await.unwrap().expect("the import saved a news index snapshot");
    let index = decode(bytes).await.expect("a valid snapshot");
    assert_eq!(index.generation(), generation);
    assert_eq!(index.len() as u64, store.article_count().await.unwrap());
    assert_eq!(index.len(), articles.len());

    let node = serve(&url, &dir);
    wait_for_log(&node, "news index loaded");
    let logs = node.logs();
    assert!(!logs.contains("news index built"), "a node with a snapshot does not build:\n{logs}");
    assert!(!logs.contains("news index snapshot refused"), "{logs}");
    let pages = pages_are_the_store_paths(&node, &*store, &key).await;
    assert!(pages > 100, "{pages} pages");
}

#[tokio::test]
async fn a_damaged_snapshot_is_refused_and_the_node_builds_and_replaces_it() {
    let (store, url, _db, key) = store_with_key().await;
    let dir = tempfile::tempdir().unwrap();
    import(&url, &dir, &articles(120));
    let generation = store.generations().await.unwrap().news;
    let good = store.news_snapshot(generation).await.unwrap().expect("the import saved a snapshot");
    let mut bad = good.clone();
    let middle = bad.len() / 2;
    bad[middle] ^= 0x10;
    store.save_news_snapshot(generation, &bad).await.unwrap();

    let node = serve(&url, &dir);
    wait_for_log(&node, "news index built");
    let logs = node.logs();
    assert!(logs.contains("news index snapshot refused: checksum mismatch (damaged)"), "{logs}");
    assert!(logs.contains("WARN"), "the refusal is a warning:\n{logs}");
    assert!(!logs.contains("news index loaded"), "{logs}");
    pages_are_the_store_paths(&node, &*store, &key).await;

    // The node saved the snapshot of what it built, over the damaged one.
    let t = Instant::now();
    loop {
        let saved = store.news_snapshot(generation).await.unwrap().expect("a snapshot");
        if saved != bad {
            let index = decode(saved).await.expect("the node saved a valid snapshot");
            assert_eq!(index.len(), decode(good.clone()).await.unwrap().len());
            break;
        }
        assert!(t.elapsed() < Duration::from_secs(30), "the damaged snapshot was not replaced");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    drop(node);
    let next = serve(&url, &dir);
    wait_for_log(&next, "news index loaded");
    pages_are_the_store_paths(&next, &*store, &key).await;
}

#[tokio::test]
async fn a_node_without_a_snapshot_builds_and_saves_one() {
    let (store, url, _db, key) = store_with_key().await;
    let dir = tempfile::tempdir().unwrap();
    store.upsert_articles(&articles(50)).await.unwrap();
    let generation = store.generations().await.unwrap().news;
    assert_eq!(store.news_snapshot(generation).await.unwrap(), None, "only an import or a node saves one");

    let node = serve(&url, &dir);
    wait_for_log(&node, "news index built");
    pages_are_the_store_paths(&node, &*store, &key).await;
    let t = Instant::now();
    while store.news_snapshot(generation).await.unwrap().is_none() {
        assert!(t.elapsed() < Duration::from_secs(30), "no snapshot saved");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let saved = store.news_snapshot(generation).await.unwrap().unwrap();
    assert_eq!(decode(saved).await.unwrap().len(), 50 + mds_import::demo_articles().len());
}

/// Every page of the search `filter` from `index`, as (slugs, the cursor's
/// position) per page, following the positions.
async fn search_walk(index: &mds_node::news_index::NewsIndex, filter: &NewsFilter, limit: usize) -> Vec<Vec<String>> {
    let mut pages = Vec::new();
    let mut after: Option<SearchPosition> = None;
    loop {
        let mut next = None;
        let json = index.search_page_json(filter, after.as_ref(), limit, |p| {
            next = Some(p.clone());
            "c".into()
        });
        let json = json.await.unwrap();
        let page: Page<ArticleSummary> = serde_json::from_slice(&json).unwrap();
        pages.push(page.data.iter().map(|a| a.slug.as_str().to_owned()).collect());
        match next {
            Some(p) => after = Some(p),
            None => return pages,
        }
    }
}

#[tokio::test]
async fn the_snapshot_carries_the_search_index_whole() {
    let (store, url, _db, key) = store_with_key().await;
    let dir = tempfile::tempdir().unwrap();
    import(&url, &dir, &articles(200));
    let generation = store.generations().await.unwrap().news;
    let loaded = decode(store.news_snapshot(generation).await.unwrap().unwrap()).await.unwrap();
    let built = news_load::build(&*store, generation).await.unwrap().expect("the news did not move");
    assert_eq!(loaded.search().unwrap().len(), built.search().unwrap().len());
    let mut searched = 0;
    for q in ["story", "unicode", "ünïcödé", "excerpt tab", "\"an excerpt\"", "sto*", "results"] {
        for sort in [NewsSort::Relevance, NewsSort::PublishedAt] {
            for base in filters() {
                let filter = NewsFilter { q: Some(NewsText::parse(q).unwrap()), sort: Some(sort), ..base };
                let (a, b) = (search_walk(&loaded, &filter, 7).await, search_walk(&built, &filter, 7).await);
                assert_eq!(a, b, "{filter:?}");
                searched += a.iter().map(Vec::len).sum::<usize>();
            }
        }
    }
    assert!(searched > 1000, "{searched} hits");
    // A node started on the store loads it and serves searches from it.
    let node = serve(&url, &dir);
    wait_for_log(&node, "news index loaded");
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let url = format!("{}/v1/news?q=%C3%BCn%C3%AFc%C3%B6d%C3%A9&limit=200", node.base());
    let r = client.get(&url).bearer_auth(&key).send().await.unwrap();
    assert_eq!(r.status(), 200);
    let page: Page<ArticleSummary> = r.json().await.unwrap();
    assert_eq!(page.data.len(), 200, "every generated story's headline has the word");
}
