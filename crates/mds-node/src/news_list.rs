//! The news list (`GET /v1/news`): a page ([`Node::page`]), kept or
//! made from the store, its cursor, and the pages kept per news generation
//! ([`NewsPages`]).
//!
//! A page is the store's rows after the cursor's position (one more than
//! the page holds, to learn whether another follows), written as a
//! [`Page`] of [`ArticleSummary`](mds_domain::ArticleSummary) and tagged
//! with the digest of its bytes (made from the node's news index or from
//! the store, the same bytes and tag): a page whose rows did not change
//! keeps its tag across imports and on every node.
//! The cursor is the last row's key ([`NewsKey`]) sealed with the node's
//! [`CursorCodec`] under the scope `news` and the filters' canonical form,
//! so it is refused with other filters, on another list, or altered.
//!
//! What a page holds is a function of the store's articles and the query,
//! so a page made once is kept (by query) until the news generation
//! moves: a hot page costs no store read. The reload task follows the
//! generation ([`NewsPages::follow`]); a page made from a read that began
//! before the move lands in the cache it was asked of, the old one, and is
//! never served after the move ([`NewsPages::current`]).

use std::sync::Arc;

use arc_swap::ArcSwap;
use chrono::DateTime;
use mds_catalog::CursorError;
use mds_domain::news::NewsKey;
use mds_domain::news_search::NewsSort;
use mds_domain::{NewsFilter, NewsQueryParams, Page, Slug};
use mds_store::StoreResult;

use crate::catalog::CatalogVersion;
use crate::error::ReadError;
use crate::keyset::{Keyset, cut, scope};
use crate::lists::{KeptList, Shelf};
use crate::news_index::{NewsIndex, SearchPosition};
use crate::node::Node;
use crate::pages::{List, PageCache, PageKey};
use crate::tagged::Tagged;

/// The news list's cursors: the scope `news`, and a position sealed as
/// `0 | slug` for an undated article, `1 | seconds (i64, big-endian) |
/// nanoseconds (u32, big-endian) | slug` for a dated one.
impl Keyset for NewsFilter {
    const LIST: &'static [u8] = b"news";
    type Key = NewsKey;

    fn key_bytes(key: &NewsKey) -> Vec<u8> {
        let mut out = Vec::with_capacity(13 + key.slug.as_str().len());
        match key.published_at {
            None => out.push(0),
            Some(t) => {
                out.push(1);
                out.extend_from_slice(&t.timestamp().to_be_bytes());
                out.extend_from_slice(&t.timestamp_subsec_nanos().to_be_bytes());
            }
        }
        out.extend_from_slice(key.slug.as_str().as_bytes());
        out
    }

    fn key_of(bytes: &[u8]) -> Result<NewsKey, CursorError> {
        let (published_at, slug) = match bytes.split_first() {
            Some((0, slug)) => (None, slug),
            Some((1, rest)) if rest.len() > 12 => {
                let secs = i64::from_be_bytes(rest[..8].try_into().expect("8 bytes"));
                let nanos = u32::from_be_bytes(rest[8..12].try_into().expect("4 bytes"));
                (Some(DateTime::from_timestamp(secs, nanos).ok_or(CursorError::Forged)?), &rest[12..])
            }
            _ => return Err(CursorError::Forged),
        };
        let slug = std::str::from_utf8(slug).ok().and_then(|s| Slug::parse(s).ok()).ok_or(CursorError::Forged)?;
        Ok(NewsKey { published_at, slug })
    }

    fn canonical(&self) -> String {
        NewsFilter::canonical(self)
    }
}

/// A key as sealed ([`Keyset::key_bytes`]).
fn position_bytes(key: &NewsKey) -> Vec<u8> {
    NewsFilter::key_bytes(key)
}

/// The key of sealed bytes ([`Keyset::key_of`]).
fn position_of(bytes: &[u8]) -> Result<NewsKey, CursorError> {
    NewsFilter::key_of(bytes)
}

/// A search's position as sealed: its score (an f64's bits, big-endian)
/// when the order is by relevance, then the key's [`position_bytes`].
fn search_position_bytes(at: &SearchPosition) -> Vec<u8> {
    let mut out = at.score.map(|s| s.to_bits().to_be_bytes().to_vec()).unwrap_or_default();
    out.extend_from_slice(&position_bytes(&at.key));
    out
}

/// The search position of sealed bytes, `ranked` when the order (bound
/// in the cursor's scope) is by relevance.
fn search_position_of(bytes: &[u8], ranked: bool) -> Result<SearchPosition, CursorError> {
    if !ranked {
        return Ok(SearchPosition { score: None, key: position_of(bytes)? });
    }
    let (score, key) = bytes.split_first_chunk::<8>().ok_or(CursorError::Forged)?;
    let score = f64::from_bits(u64::from_be_bytes(*score));
    if !score.is_finite() {
        return Err(CursorError::Forged);
    }
    Ok(SearchPosition { score: Some(score), key: position_of(key)? })
}

/// The news list's pages ([`Node::page`]): kept for the news generation
/// followed when they were looked for.
impl KeptList for NewsQueryParams {
    const LIST: List = List::News;
    const SHELF: Shelf = Shelf::News;

    async fn make(&self, node: &Node, _: &CatalogVersion, followed: Option<i64>) -> Result<(Tagged, bool), ReadError> {
        node.make_news_page(self, followed).await
    }
}

impl Node {
    /// One page of the news list for `query`: its JSON (a [`Page`] of
    /// [`ArticleSummary`](mds_domain::ArticleSummary)) tagged with its
    /// digest. Made from the news index when it holds the `followed`
    /// generation, else from the store; with whether to keep it for that
    /// generation (not a search made from an index that lags it).
    async fn make_news_page(
        &self,
        query: &NewsQueryParams,
        followed: Option<i64>,
    ) -> Result<(Tagged, bool), ReadError> {
        let filter = &query.filter;
        if filter.q.is_some() {
            return self.make_search_page(query, followed).await;
        }
        let after = self.resume_after(filter, query.page.cursor.as_deref())?;
        let limit = query.page.limit.get();
        if let Some(index) = self.news_index().filter(|i| Some(i.generation()) == followed) {
            let json = index.page_json(filter, after.as_ref(), limit, |last| self.cursor_after(filter, last));
            return Ok((Tagged::hashed(json), true));
        }
        let mut data = self.store().news_page(filter, after.as_ref(), limit + 1).await?;
        let (has_more, next_cursor) = cut(&mut data, limit, |last| self.cursor_after(filter, &NewsKey::of(last)));
        // The index's hint, from the store's values (the same bytes).
        let hint = match data.is_empty() && (filter.category.is_some() || filter.tag.is_some()) {
            true => self.store_facets().await?.hint(filter),
            false => None,
        };
        let page = Page { hint, ..Page::new(data, next_cursor, has_more) };
        let json = serde_json::to_vec(&page).expect("a page of articles serializes");
        Ok((Tagged::hashed(json), true))
    }
}

impl Node {
    /// One page of a search (`q`): made from the news index of the
    /// `followed` generation; while the node's index lags it (an import
    /// moments ago), from the index held, the last one (the store has no
    /// full-text index); with none held yet (a node just started), once
    /// the index is loaded.
    async fn make_search_page(
        &self,
        query: &NewsQueryParams,
        followed: Option<i64>,
    ) -> Result<(Tagged, bool), ReadError> {
        let filter = &query.filter;
        let ranked = filter.order() == NewsSort::Relevance;
        let after = match query.page.cursor.as_deref() {
            Some(c) => {
                let opened = self.cursors().open(&scope(filter), c).and_then(|b| search_position_of(&b, ranked));
                Some(opened.map_err(ReadError::cursor)?)
            }
            None => None,
        };
        let index = match self.news_index() {
            Some(index) => index,
            None => {
                self.refresh_news_index().await?;
                self.news_index().ok_or_else(|| {
                    mds_store::StoreError::Unavailable(mds_store::Cause::new("the news search index is being built"))
                })?
            }
        };
        let current = Some(index.generation()) == followed;
        if !current {
            tracing::debug!(held = index.generation(), ?followed, "search from the news index held; it lags");
        }
        let json = search_json(&index, self, filter, after.as_ref(), query.page.limit.get()).await?;
        Ok((Tagged::hashed(json), current))
    }
}

/// The JSON of a search's page from `index`, its cursors sealed by `node`.
async fn search_json(
    index: &NewsIndex,
    node: &Node,
    filter: &NewsFilter,
    after: Option<&SearchPosition>,
    limit: usize,
) -> StoreResult<Vec<u8>> {
    let seal = |at: &SearchPosition| node.cursors().seal(&scope(filter), &search_position_bytes(at));
    index.search_page_json(filter, after, limit, seal).await
}

/// The news list pages a node has served, by query, for the news
/// generation it follows; see the [module](self).
#[derive(Debug)]
pub struct NewsPages {
    current: ArcSwap<Generation>,
    max_bytes: usize,
}

/// The pages of one news generation.
#[derive(Debug)]
struct Generation {
    /// `None` before the node first followed the store.
    at: Option<i64>,
    pages: Arc<PageCache>,
}

impl NewsPages {
    /// Keeps at most `max_bytes` of pages per generation (`0`: none).
    pub fn new(max_bytes: usize) -> Self {
        let first = Generation { at: None, pages: Arc::new(PageCache::new(max_bytes)) };
        NewsPages { current: ArcSwap::from_pointee(first), max_bytes }
    }

    /// The generation followed now (`None` before the first) and its
    /// pages. Take them before reading
    /// the store for a page, and keep the page in it: a page read across a
    /// move of the generation then goes to the old one, which nobody asks
    /// again.
    pub fn current(&self) -> (Option<i64>, Arc<PageCache>) {
        let held = self.current.load();
        (held.at, held.pages.clone())
    }

    /// The page kept under `key` for the generation followed now, else the
    /// one `make` makes of that generation, kept if `make` says so.
    pub(crate) async fn kept_or_made<E>(
        &self,
        key: PageKey<'_>,
        make: impl AsyncFnOnce(Option<i64>) -> Result<(Tagged, bool), E>,
    ) -> Result<Tagged, E> {
        // Taken before the store is read: see `current`.
        let (followed, pages) = self.current();
        if let Some(kept) = pages.get(key) {
            return Ok(kept);
        }
        let (page, keep) = make(followed).await?;
        if keep {
            pages.put(key, page.clone());
        }
        Ok(page)
    }

    /// Follows the store's news generation: a different one starts with no
    /// page.
    pub fn follow(&self, generation: i64) {
        if self.current.load().at == Some(generation) {
            return;
        }
        self.current.rcu(|held| {
            if held.at == Some(generation) {
                Arc::clone(held)
            } else {
                Arc::new(Generation { at: Some(generation), pages: Arc::new(PageCache::new(self.max_bytes)) })
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pages::test_page as page;
    use mds_domain::time::parse_rfc3339;

    #[test]
    fn positions_round_trip() {
        for (t, slug) in [
            (None, "a"),
            (Some("2026-01-01T00:00:00Z"), "x-1"),
            (Some("1999-12-31T23:59:59.999999999+05:30"), &"z".repeat(200)[..]),
            (Some("1970-01-01T00:00:00Z"), "0"),
            (Some("1960-01-01T00:00:00.5Z"), "before-1970"),
        ] {
            let key = NewsKey { published_at: t.map(|t| parse_rfc3339(t).unwrap()), slug: Slug::parse(slug).unwrap() };
            assert_eq!(position_of(&position_bytes(&key)).unwrap(), key);
        }
        for bad in [&b""[..], b"\x00", b"\x02abc", b"\x01short", b"\x00UPPER", b"\x00\xff"] {
            assert_eq!(position_of(bad), Err(CursorError::Forged), "{bad:?}");
        }
        let mut huge = vec![1u8];
        huge.extend_from_slice(&i64::MAX.to_be_bytes());
        huge.extend_from_slice(&0u32.to_be_bytes());
        huge.push(b'a');
        assert_eq!(position_of(&huge), Err(CursorError::Forged), "an instant chrono cannot hold");
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config { cases: 512, failure_persistence: None, ..Default::default() })]

        /// Whatever bytes a sealed position holds, reading it never panics;
        /// every position reads back as itself.
        #[test]
        fn any_position_bytes_read_without_panic_and_positions_round_trip(
            bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..40),
            secs in -62_000_000_000i64..250_000_000_000,
            nanos in 0u32..1_000_000_000,
            dated in proptest::prelude::any::<bool>(),
            slug in "[a-z0-9-]{1,60}",
        ) {
            let _ = position_of(&bytes);
            let published_at = if dated { DateTime::from_timestamp(secs, nanos) } else { None };
            let key = NewsKey { published_at, slug: Slug::parse(&slug).unwrap() };
            proptest::prop_assert_eq!(position_of(&position_bytes(&key)).unwrap(), key);
        }
    }

    #[test]
    fn pages_follow_the_generation() {
        let pages = NewsPages::new(1 << 20);
        pages.follow(1);
        let q = |query| PageKey { list: List::News, query };
        let (_, at_1) = pages.current();
        at_1.put(q("limit=1"), page(10));
        assert!(pages.current().1.get(q("limit=1")).is_some());
        pages.follow(1);
        assert!(pages.current().1.get(q("limit=1")).is_some(), "same generation: kept");
        // A read that began before the move keeps its page in the old cache.
        let (_, before) = pages.current();
        pages.follow(2);
        before.put(q("limit=2"), page(10));
        assert!(pages.current().1.get(q("limit=1")).is_none(), "an import: dropped");
        assert!(pages.current().1.get(q("limit=2")).is_none(), "a page read before the move is not served after it");
        pages.current().1.put(q("limit=2"), page(10));
        assert!(pages.current().1.get(q("limit=2")).is_some());
        assert!(NewsPages::new(0).current().1.get(q("x")).is_none());
    }
}
