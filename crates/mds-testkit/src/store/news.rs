//! Suite functions for the news list ([`NewsStore::news_page`]): its order,
//! its keyset positions and its filters, each held to the plain rule
//! ([`news_list`](crate::fixtures::news_list)).

use mds_domain::news::{Exact, NewsKey};
use mds_domain::{ArticleSummary, NewsFilter};

use super::*;
use crate::fixtures::{news_after, news_list};

/// A full article published at `t` (`None`: undated).
fn dated(s: &str, t: Option<&str>) -> Article {
    Article { published_at: t.map(at), ..full_article(s) }
}

/// Every row of `filter`, a page of `limit` at a time, each page asked for
/// with one row more to learn whether another follows (as the server does).
async fn walk(store: &dyn Store, filter: &NewsFilter, limit: usize) -> Vec<ArticleSummary> {
    let mut out: Vec<ArticleSummary> = Vec::new();
    let mut after: Option<NewsKey> = None;
    loop {
        let page = store.news_page(filter, after.as_ref(), limit + 1).await.expect("news page");
        assert!(page.len() <= limit + 1, "at most what was asked for");
        let more = page.len() > limit;
        out.extend(page.into_iter().take(limit));
        if !more {
            return out;
        }
        after = out.last().map(NewsKey::of);
    }
}

/// Articles at instants that differ in offset, fractional digits and
/// slugs, and undated ones, in the order of the list.
fn ordered_articles() -> Vec<Article> {
    vec![
        dated("a-late", Some("2026-03-01T10:00:00.5+00:00")),
        dated("b-late", Some("2026-03-01T10:00:00.500Z")),
        dated("frac", Some("2026-03-01T10:00:00.000001Z")),
        // The same instant as "whole", written at another offset.
        dated("offset", Some("2026-03-01T15:30:00+05:30")),
        dated("whole", Some("2026-03-01T10:00:00Z")),
        dated("old", Some("2025-12-31T23:59:59Z")),
        dated("y2k", Some("1999-12-31T23:59:59.999999999Z")),
        dated("a-undated", None),
        dated("m-undated", None),
        dated("z-undated", None),
    ]
}

/// The list is newest first, then by slug; undated articles come last, by
/// slug; instants compare as instants whatever their offset or fractional
/// digits. A listed article is every field of the article but its body.
/// Walked a page at a time, any page size gives the same list.
pub async fn news_pages_follow_the_list_order(store: &dyn Store) {
    migrated(store).await;
    let all = NewsFilter::default();
    assert!(store.news_page(&all, None, 10).await.expect("empty").is_empty());
    let want = ordered_articles();
    let mut shuffled = want.clone();
    shuffled.reverse();
    shuffled.swap(0, 4);
    store.upsert_articles(&shuffled).await.expect("insert");

    let got = store.news_page(&all, None, 100).await.expect("page");
    let slugs: Vec<&str> = got.iter().map(|a| a.slug.as_str()).collect();
    let want_slugs: Vec<&str> = want.iter().map(|a| a.slug.as_str()).collect();
    assert_eq!(slugs, want_slugs);
    assert_eq!(got, want.iter().map(Article::summary).collect::<Vec<_>>(), "every field but the body");
    assert_eq!(got, news_list(&want, &all), "the plain rule agrees");
    for limit in [1, 2, 3, 7, 9, 10] {
        assert_eq!(walk(store, &all, limit).await, got, "pages of {limit}");
    }
    assert!(store.news_page(&all, None, 0).await.expect("no rows").is_empty());
    assert_eq!(store.news_page(&all, None, 3).await.expect("page").len(), 3);
}

/// A page resumes after any position: that of each listed article (dated
/// or not), and positions no article holds (an instant between two, an
/// undated slug between two, the key of an article since changed).
pub async fn news_pages_resume_after_any_position(store: &dyn Store) {
    migrated(store).await;
    let articles = ordered_articles();
    store.upsert_articles(&articles).await.expect("insert");
    let all = NewsFilter::default();
    let list = news_list(&articles, &all);
    for (i, a) in list.iter().enumerate() {
        let page = store.news_page(&all, Some(&NewsKey::of(a)), 100).await.expect("page");
        assert_eq!(page, list[i + 1..], "after {}", a.slug);
    }
    let key = |t: Option<&str>, s: &str| NewsKey { published_at: t.map(at), slug: slug(s) };
    for k in [
        key(Some("2026-03-01T10:00:00.2Z"), "zzz"),
        key(Some("2026-03-01T10:00:00Z"), "p"),
        key(Some("2030-01-01T00:00:00Z"), "a"),
        key(Some("1900-01-01T00:00:00Z"), "a"),
        key(None, "b"),
        key(None, "zzzz"),
        key(None, "0"),
    ] {
        let page = store.news_page(&all, Some(&k), 100).await.expect("page");
        assert_eq!(page, news_after(&list, Some(&k)), "after {k:?}");
        assert!(!page.is_empty() || k.published_at.is_none(), "{k:?}");
    }
    // The article a cursor was made from changes date: the position holds.
    let pos = NewsKey::of(&list[3]);
    let moved = dated(list[3].slug.as_str(), Some("2031-01-01T00:00:00Z"));
    store.upsert_articles(std::slice::from_ref(&moved)).await.expect("update");
    let page = store.news_page(&all, Some(&pos), 100).await.expect("page");
    let after: Vec<&str> = page.iter().map(|a| a.slug.as_str()).collect();
    assert_eq!(after, ["whole", "old", "y2k", "a-undated", "m-undated", "z-undated"]);
}

/// Each filter selects what its rule says, alone and combined: `isin`,
/// `ticker` (case-insensitive, also against a ticker stored in lower case),
/// `category` (exact), `tag` (exact: not a substring, not another case;
/// tags JSON must escape), the date bounds (exclusive; undated articles
/// never pass one). Each list is the same walked a page at a time.
pub async fn news_pages_filter_by_every_parameter(store: &dyn Store) {
    migrated(store).await;
    let reliance = isin("INE002A0101");
    let tcs = isin("INE467B0102");
    let mut articles = Vec::new();
    for i in 0..40u32 {
        let mut a = dated(&format!("story-{i:02}"), Some(&format!("2026-01-{:02}T09:00:00+05:30", 1 + i % 28)));
        match i % 5 {
            0 => {
                a.isin = Some(tcs.clone());
                a.ticker = Some(if i % 10 == 0 { "tcs".into() } else { "TCS".into() });
                a.category = Some("Earnings".into());
                a.tags = vec!["say \"hi\"".into(), "बैंक".into()];
            }
            1 => {
                a.isin = None;
                a.ticker = None;
                a.category = None;
                a.tags = vec![];
            }
            2 => a.published_at = None,
            3 => a.tags = vec!["alpha-beta".into(), "Alpha".into()],
            _ => {}
        }
        articles.push(a);
    }
    store.upsert_articles(&articles).await.expect("insert");

    let exact = |s: &str| Some(Exact::tag(s).unwrap());
    let category = |s: &str| Some(Exact::category(s).unwrap());
    let cases = [
        NewsFilter { isin: Some(reliance.clone()), ..NewsFilter::default() },
        NewsFilter { isin: Some(tcs.clone()), ..NewsFilter::default() },
        NewsFilter { isin: Some(isin("US037833100")), ..NewsFilter::default() },
        NewsFilter { ticker: Some(ticker("tcs")), ..NewsFilter::default() },
        NewsFilter { ticker: Some(ticker("RELIANCE")), ..NewsFilter::default() },
        NewsFilter { ticker: Some(ticker("RELIANC")), ..NewsFilter::default() },
        NewsFilter { category: category("earnings"), ..NewsFilter::default() },
        NewsFilter { category: category("Earnings"), ..NewsFilter::default() },
        NewsFilter { tag: exact("alpha"), ..NewsFilter::default() },
        NewsFilter { tag: exact("Alpha"), ..NewsFilter::default() },
        NewsFilter { tag: exact("alph"), ..NewsFilter::default() },
        NewsFilter { tag: exact("say \"hi\""), ..NewsFilter::default() },
        NewsFilter { tag: exact("बैंक"), ..NewsFilter::default() },
        NewsFilter { tag: exact("Mid Cap"), ..NewsFilter::default() },
        NewsFilter { published_after: Some(at("2026-01-10T03:30:00Z")), ..NewsFilter::default() },
        NewsFilter { published_before: Some(at("2026-01-10T03:30:00Z")), ..NewsFilter::default() },
        NewsFilter {
            published_after: Some(at("2026-01-05T03:30:00Z")),
            published_before: Some(at("2026-01-20T03:30:00.000000001Z")),
            ..NewsFilter::default()
        },
        NewsFilter {
            isin: Some(reliance.clone()),
            tag: exact("alpha"),
            published_before: Some(at("2026-01-20T00:00:00Z")),
            ..NewsFilter::default()
        },
        NewsFilter { ticker: Some(ticker("TCS")), category: category("Earnings"), ..NewsFilter::default() },
    ];
    let mut seen_empty = false;
    for filter in &cases {
        let want = news_list(&articles, filter);
        seen_empty |= want.is_empty();
        let got = store.news_page(filter, None, 100).await.expect("page");
        assert_eq!(got, want, "{filter:?}");
        assert_eq!(walk(store, filter, 3).await, want, "{filter:?}, pages of 3");
    }
    assert!(seen_empty, "some filter selects nothing");
    // Spot checks of the rule itself, so the plain rule cannot drift with the store.
    let count = |f: &NewsFilter| news_list(&articles, f).len();
    assert_eq!(count(&cases[3]), 8, "both spellings of TCS");
    assert_eq!(count(&cases[8]), 16, "the fixture's tags, \"alpha\" twice, listed once each");
    assert_eq!(count(&cases[9]), 8, "another case is another tag");
    assert_eq!(count(&cases[10]), 0, "a tag is matched whole");
    assert_eq!(count(&cases[11]), 8, "a tag JSON escapes");
    // Exclusive bounds: the article at exactly 2026-01-10T09:00+05:30 is out.
    assert!(news_list(&articles, &cases[14]).iter().all(|a| a.published_at.unwrap() > at("2026-01-10T03:30:00Z")));
    assert_eq!(count(&cases[14]) + count(&cases[15]) + 1 + 8, 40, "one article at the bound, 8 undated");
}

/// Many articles, many pages: the walk of every filter adds up to the plain
/// rule's list, with several articles per instant.
pub async fn news_pages_walk_many_articles(store: &dyn Store) {
    migrated(store).await;
    let articles: Vec<Article> = (0..600u32)
        .map(|i| {
            let t = (i % 7 != 0).then(|| format!("2026-02-{:02}T{:02}:00:00Z", 1 + i % 20, i % 3));
            let mut a = dated(&format!("n-{:04}", (i * 7919) % 1000), t.as_deref());
            a.isin = Some(isin(&format!("INE{:08}", i % 9)));
            a.ticker = Some(format!("T{}", i % 9));
            a.tags = vec![format!("t{}", i % 4), format!("u{}", i % 6)];
            a
        })
        .collect();
    store.upsert_articles(&articles).await.expect("insert");
    let cases = [
        NewsFilter::default(),
        NewsFilter { isin: Some(isin("INE00000003")), ..NewsFilter::default() },
        NewsFilter { ticker: Some(ticker("t5")), tag: Some(Exact::tag("u2").unwrap()), ..NewsFilter::default() },
        NewsFilter { published_after: Some(at("2026-02-10T01:00:00Z")), ..NewsFilter::default() },
    ];
    for filter in &cases {
        let want = news_list(&articles, filter);
        assert!(want.len() > 20, "{filter:?}: {}", want.len());
        assert_eq!(walk(store, filter, 50).await, want, "{filter:?}");
        assert_eq!(walk(store, filter, 7).await, want, "{filter:?}");
    }
}
