//! The news index against the store it was built from: for random articles
//! in a real SQLite store, every page of every filter, walked with the
//! cursor positions of the list, is the same rows (and the same JSON) from
//! the index as from the store's query, which the store's own tests hold to
//! `NewsFilter::matches` and `list_order`; and a page's bytes from the
//! index are the bytes the store path writes, for articles of any text.
//! The index read back from its snapshot's bytes makes the same pages.

use chrono::{DateTime, TimeZone, Utc};
use mds_domain::news::NewsKey;
use mds_domain::news::{Exact, NewsFilter};
use mds_domain::{Article, ArticleSummary, Isin, Page, Slug, Ticker};
use mds_node::news_index::NewsIndex;
use mds_store::DatabaseUrl;
use mds_store::prelude::*;
use mds_store::sqlite::SqliteStore;
use proptest::prelude::*;

const ISINS: [&str; 3] = ["INE002A01018", "INE467B01029", "INE040A01034"];
const TICKERS: [&str; 3] = ["RELIANCE", "reliance", "TCS"];
const WORDS: [&str; 4] = ["results", "orders", "bank", "Bank"];

/// An article: few distinct values, so filters select something, and few
/// instants, so ties on the date are ordered by slug.
fn article() -> impl Strategy<Value = Article> {
    (
        "[a-z0-9-]{1,6}",
        prop::option::of(0i64..6),
        prop::option::of(0usize..3),
        prop::option::of(0usize..3),
        prop::option::of(0usize..4),
        prop::collection::vec(0usize..4, 0..3),
    )
        .prop_map(|(slug, at, isin, ticker, category, tags)| {
            let mut a: Article = serde_json::from_str(r#"{"slug":"x","headline":"H"}"#).unwrap();
            a.slug = Slug::parse(&slug).unwrap();
            a.published_at = at.map(instant);
            a.isin = isin.map(|i| Isin::parse(ISINS[i]).unwrap());
            a.ticker = ticker.map(|t| TICKERS[t].to_owned());
            a.category = category.map(|c| WORDS[c].to_owned());
            a.tags = tags.into_iter().map(|t| WORDS[t].to_owned()).collect();
            a
        })
}

/// The `h`-th instant of a small set (some with nanoseconds).
fn instant(h: i64) -> DateTime<Utc> {
    Utc.timestamp_opt(1_767_225_600 + h * 3_600, if h % 2 == 0 { 0 } else { 500_000_000 }).unwrap()
}

fn filter() -> impl Strategy<Value = NewsFilter> {
    (
        prop::option::of(0usize..3),
        prop::option::of(0usize..3),
        prop::option::of(0usize..4),
        prop::option::of(0usize..4),
        prop::option::of(-1i64..7),
        prop::option::of(-1i64..7),
    )
        .prop_map(|(isin, ticker, category, tag, after, before)| NewsFilter {
            isin: isin.map(|i| Isin::parse(ISINS[i]).unwrap()),
            ticker: ticker.map(|t| Ticker::parse(TICKERS[t]).unwrap()),
            category: category.map(|c| Exact::category(WORDS[c]).unwrap()),
            tag: tag.map(|t| Exact::tag(WORDS[t]).unwrap()),
            published_after: after.map(instant),
            published_before: before.map(instant),
            ..NewsFilter::default()
        })
}

/// The rows of a page from the index, as summaries.
fn index_page(index: &NewsIndex, filter: &NewsFilter, after: Option<&NewsKey>, limit: usize) -> Vec<ArticleSummary> {
    let rows = index.page_rows(filter, after, limit);
    rows.iter().map(|&r| serde_json::from_slice(&index.row_json(r)).unwrap()).collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn every_page_is_the_stores(
        articles in prop::collection::vec(article(), 0..40),
        filters in prop::collection::vec(filter(), 1..6),
        limit in 1usize..5,
    ) {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async {
            let store = SqliteStore::connect(&DatabaseUrl::new("sqlite::memory:")).await.unwrap();
            store.migrate().await.unwrap();
            if !articles.is_empty() {
                store.upsert_articles(&articles).await.unwrap();
            }
            let generation = store.generations().await.unwrap().news;
            let index = NewsIndex::build(&store, generation).await.unwrap();
            let loaded = NewsIndex::from_bytes(index.to_bytes()).unwrap();
            let everything = store.news_page(&NewsFilter::default(), None, 1_000).await.unwrap();
            prop_assert_eq!(index.len(), everything.len());
            for filter in filters.iter().chain([&NewsFilter::default()]) {
                // Walk the list page by page, from the index and from the
                // store, from the same positions.
                let mut after: Option<NewsKey> = None;
                loop {
                    let from_store = store.news_page(filter, after.as_ref(), limit + 1).await.unwrap();
                    let from_index = index_page(&index, filter, after.as_ref(), limit);
                    prop_assert_eq!(&from_index, &from_store, "filter {:?} after {:?}", filter, after);
                    prop_assert_eq!(&index_page(&loaded, filter, after.as_ref(), limit), &from_store);
                    for (r, a) in index.page_rows(filter, after.as_ref(), limit).iter().zip(&from_store) {
                        let json = serde_json::to_vec(a).unwrap();
                        prop_assert_eq!(index.row_json(*r), json);
                        prop_assert_eq!(index.row_key(*r), NewsKey::of(a));
                    }
                    if from_store.len() <= limit {
                        break;
                    }
                    after = Some(NewsKey::of(&from_store[limit - 1]));
                }
                // And from every article's position, listed or not.
                for a in &everything {
                    let at = NewsKey::of(a);
                    let from_store = store.news_page(filter, Some(&at), limit + 1).await.unwrap();
                    prop_assert_eq!(&index_page(&loaded, filter, Some(&at), limit), &from_store);
                    prop_assert_eq!(index_page(&index, filter, Some(&at), limit), from_store);
                }
            }
            Ok(())
        })?;
    }
}

/// Text of any kind: unicode, quotes, backslashes, control characters
/// (escaped as `\n` or `\u0001`), a few values that repeat, empty.
fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => any::<String>(),
        2 => "[a-zé \"\\\\/\u{1}\n\t€😀]{0,12}",
        2 => prop::sample::select(vec!["Desk 1", "Ünïcödé", "a\"b", "", "c\\d"]).prop_map(str::to_owned),
    ]
}

/// An instant with any precision of its fraction.
fn any_instant() -> impl Strategy<Value = DateTime<Utc>> {
    (0i64..4_102_444_800, prop_oneof![Just(0u32), (0u32..1_000).prop_map(|n| n * 1_000_000), 0u32..1_000_000_000])
        .prop_map(|(s, n)| Utc.timestamp_opt(s, n).unwrap())
}

/// An article with any text in every field (its headline without NUL,
/// which PostgreSQL's text cannot hold), any field `null`, no tag or a few.
fn any_article() -> impl Strategy<Value = Article> {
    mds_testkit::arb::article("[^\u{0}]{1,40}".boxed(), text().boxed(), any_instant().boxed(), &ISINS)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, failure_persistence: None, ..ProptestConfig::default() })]

    /// A page made from the index is, byte for byte, the page the store
    /// path writes (`serde_json` of a `Page` of the store's summaries),
    /// for articles of any text, from every position.
    #[test]
    fn a_page_is_the_store_paths_bytes(articles in prop::collection::vec(any_article(), 1..60), limit in 1usize..25) {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async {
            let store = SqliteStore::connect(&DatabaseUrl::new("sqlite::memory:")).await.unwrap();
            store.migrate().await.unwrap();
            store.upsert_articles(&articles).await.unwrap();
            let generation = store.generations().await.unwrap().news;
            let index = NewsIndex::build(&store, generation).await.unwrap();
            let loaded = NewsIndex::from_bytes(index.to_bytes()).unwrap();
            let everything = store.news_page(&NewsFilter::default(), None, 1_000).await.unwrap();
            let cursor = |k: &NewsKey| format!("after-{}", k.slug);
            let filter = NewsFilter::default();
            for after in [None].into_iter().chain(everything.iter().map(|a| Some(NewsKey::of(a)))) {
                let mut data = store.news_page(&filter, after.as_ref(), limit + 1).await.unwrap();
                let has_more = data.len() > limit;
                data.truncate(limit);
                let next_cursor = data.last().filter(|_| has_more).map(|a| cursor(&NewsKey::of(a)));
                let from_store = serde_json::to_vec(&Page::new(data, next_cursor, has_more)).unwrap();
                let from_index = index.page_json(&filter, after.as_ref(), limit, cursor);
                prop_assert!(loaded.page_json(&filter, after.as_ref(), limit, cursor) == from_index);
                prop_assert_eq!(
                    String::from_utf8(from_index).unwrap(),
                    String::from_utf8(from_store).unwrap(),
                    "after {:?}",
                    after
                );
            }
            Ok(())
        })?;
    }
}
