//! [`PageCache`]: list pages as served (body and `ETag`), by [`PageKey`]:
//! the list they are of and the query string they were asked with; and
//! the identity lookups (a history, a symbol's holders), by what they
//! were asked for, as those too are a function of the catalog version.
//!
//! What a page holds is a function of what it was made from (a catalog
//! version, a news generation) and the query (filters, cursor, limit: a
//! cursor never expires, and one that was valid for a query stays valid for
//! it), so a page served once can be served again as bytes: no parsing, no
//! cursor check, no index walk, no JSON. Each
//! [`CatalogVersion`](crate::catalog::CatalogVersion) owns its cache (the
//! company list's pages and the change feed's), so an import (a new
//! version) starts with an empty one and no page outlives the rows it was
//! made of; the news list's are kept per news generation
//! ([`crate::news_list`]). Each list's pages are kept apart: the same query
//! string on two lists finds two pages.
//!
//! Bounded in bytes, with two generations: pages go into the young one;
//! when it holds half the bound it becomes the old one (the previous old
//! one is dropped), and a page found in the old one moves back to the young
//! one. The pages asked for in the last half-bound's worth of misses stay,
//! like an LRU, without a list to maintain on every hit.

use std::collections::HashMap;
use std::sync::{PoisonError, RwLock, RwLockReadGuard};

use crate::tagged::Tagged;

/// What one kept page costs beyond its query, body and tag bytes: its
/// entry in the hash table (the key and value, a control byte, at the
/// table's worst load just after it grows: under half full), and the heap
/// blocks of the query, body and tag. Measured by
/// `tests/page_cache_memory.rs`, which holds the cache to its bound.
const PER_PAGE: usize = 2 * (std::mem::size_of::<(Box<str>, Tagged)>() + 1) + 3 * 16;

/// The lists whose pages are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum List {
    /// `GET /v1/companies`.
    Companies,
    /// `GET /v1/companies/changes`.
    CompanyChanges,
    /// `GET /v1/news`.
    News,
    /// `GET /v1/companies/{isin}/history`, by ISIN.
    History,
    /// `GET /v1/symbols/{symbol}`, by exchange and symbol.
    Symbols,
    /// `GET /v1/actions`.
    Actions,
    /// `GET /v1/companies/{isin}/actions`, by catalog generation, ISIN and
    /// query.
    CompanyActions,
    /// `GET /v1/companies/{isin}/prices`, by catalog generation, ISIN,
    /// format and query.
    CompanyPrices,
    /// `GET /v1/prices`, by format and query.
    MarketPrices,
    /// `GET /v1/industries` (of a catalog version).
    Industries,
    /// `GET /v1/news/facets` (of a news generation).
    NewsFacets,
}

impl List {
    /// How many lists there are: one more than the last's index (so a list
    /// added at the end is counted, as two added on two branches were not).
    const COUNT: usize = List::NewsFacets as usize + 1;
}

/// What a kept page is found by: its list and the query string it was
/// asked with, as sent (a kept page is served without parsing it; no query
/// is the empty one).
#[derive(Debug, Clone, Copy)]
pub struct PageKey<'q> {
    /// The list.
    pub list: List,
    /// The query string.
    pub query: &'q str,
}

impl<'q> PageKey<'q> {
    /// The page of `list` asked with the query string `raw`.
    pub fn new(list: List, raw: Option<&'q str>) -> Self {
        PageKey { list, query: raw.unwrap_or("") }
    }
}

/// Pages by [`PageKey`]; see the [module](self).
#[derive(Debug)]
pub struct PageCache {
    max_bytes: usize,
    inner: RwLock<Halves>,
}

/// Pages by query string, one map per [`List`].
type Maps = [HashMap<Box<str>, Tagged>; List::COUNT];

#[derive(Debug, Default)]
struct Halves {
    young: Maps,
    young_bytes: usize,
    old: Maps,
}

impl PageCache {
    /// The longest query string whose page is kept (a longer one is served
    /// but not kept).
    pub const MAX_QUERY: usize = 512;

    /// A cache holding at most `max_bytes` (`0`: holds nothing), counting
    /// what a page really holds: query, body, tag and their bookkeeping.
    pub fn new(max_bytes: usize) -> Self {
        PageCache { max_bytes, inner: RwLock::new(Halves::default()) }
    }

    /// The page served for `key`, if held.
    pub fn get(&self, key: PageKey<'_>) -> Option<Tagged> {
        if self.max_bytes == 0 {
            return None;
        }
        let list = key.list as usize;
        let g = self.read();
        if let Some(page) = g.young[list].get(key.query) {
            return Some(page.clone());
        }
        let page = g.old[list].get(key.query)?.clone();
        drop(g);
        // Asked for again: young again.
        self.put(key, page.clone());
        Some(page)
    }

    /// The bytes a page kept for `query` holds.
    fn held(query: &str, page: &Tagged) -> usize {
        query.len() + page.body.len() + page.etag.len() + PER_PAGE
    }

    /// Keeps `page` as the page of `key`.
    pub fn put(&self, key: PageKey<'_>, page: Tagged) {
        let (list, query) = (key.list as usize, key.query);
        let size = Self::held(query, &page);
        if query.len() > Self::MAX_QUERY || size > self.max_bytes / 2 {
            return;
        }
        let mut g = self.inner.write().unwrap_or_else(PoisonError::into_inner);
        if g.young[list].contains_key(query) {
            return;
        }
        if g.young_bytes + size > self.max_bytes / 2 {
            g.old = std::mem::take(&mut g.young);
            g.young_bytes = 0;
        }
        g.old[list].remove(query);
        g.young_bytes += size;
        g.young[list].insert(query.into(), page);
    }

    /// How many pages are held.
    pub fn len(&self) -> usize {
        let g = self.read();
        g.young.iter().chain(&g.old).map(HashMap::len).sum()
    }

    /// Whether none are.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn read(&self) -> RwLockReadGuard<'_, Halves> {
        self.inner.read().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A page of `n` bytes, for the caches' tests.
#[cfg(test)]
pub(crate) fn test_page(n: usize) -> Tagged {
    let etag = http::HeaderValue::from_static("\"t\"");
    Tagged { body: bytes::Bytes::from(vec![b'x'; n]), etag }
}

#[cfg(test)]
mod tests {
    use super::test_page as page;
    use super::*;

    fn q(query: &str) -> PageKey<'_> {
        PageKey { list: List::Companies, query }
    }

    #[test]
    fn keeps_what_it_was_given() {
        let cache = PageCache::new(10_000);
        assert!(cache.get(q("limit=5")).is_none());
        cache.put(q("limit=5"), page(10));
        assert_eq!(cache.get(q("limit=5")).unwrap().body.len(), 10);
        assert!(cache.get(q("limit=6")).is_none());
        assert!(cache.get(q("")).is_none(), "no query is a query of its own");
        cache.put(q(""), page(20));
        assert_eq!(cache.get(q("")).unwrap().body.len(), 20);
        let news = PageKey { list: List::News, query: "limit=5" };
        assert!(cache.get(news).is_none(), "another list's page of the same query is another page");
        cache.put(news, page(30));
        assert_eq!(cache.get(news).unwrap().body.len(), 30);
        assert_eq!(cache.get(q("limit=5")).unwrap().body.len(), 10);
    }

    #[test]
    fn every_list_keeps_its_pages_apart() {
        let cache = PageCache::new(100_000);
        let lists = [
            List::Companies,
            List::CompanyChanges,
            List::News,
            List::History,
            List::Symbols,
            List::Actions,
            List::CompanyActions,
            List::CompanyPrices,
            List::MarketPrices,
            List::Industries,
            List::NewsFacets,
        ];
        for (n, list) in lists.into_iter().enumerate() {
            cache.put(PageKey { list, query: "q" }, page(n + 1));
        }
        for (n, list) in lists.into_iter().enumerate() {
            assert_eq!(cache.get(PageKey { list, query: "q" }).unwrap().body.len(), n + 1, "{list:?}");
        }
    }

    #[test]
    fn bounded_and_recently_asked_for_pages_stay() {
        // Half the bound is four pages (query, tag, bookkeeping included).
        let cache = PageCache::new(8 * PageCache::held("a", &page(24)));
        for k in ["a", "b", "c", "d"] {
            cache.put(q(k), page(24));
        }
        assert_eq!(cache.len(), 4);
        // "e" turns the generation: a b c d are old, still served.
        cache.put(q("e"), page(24));
        assert_eq!(cache.len(), 5);
        assert!(cache.get(q("a")).is_some(), "an old page is served, and young again");
        // Three more turn it again: what was not asked for since is gone.
        for k in ["f", "g", "h"] {
            cache.put(q(k), page(24));
        }
        for gone in ["b", "c", "d"] {
            assert!(cache.get(q(gone)).is_none(), "{gone}: not asked for in two generations");
        }
        assert!(cache.get(q("a")).is_some() && cache.get(q("e")).is_some(), "asked for or recent: kept");
        assert!(cache.len() <= 8, "never more than two half-bounds: {}", cache.len());
    }

    #[test]
    fn oversized_and_disabled_keep_nothing() {
        let cache = PageCache::new(2 * PageCache::held("big", &page(60)) - 1);
        cache.put(q("big"), page(60));
        assert!(cache.get(q("big")).is_none(), "over half the bound");
        cache.put(q(&"q".repeat(PageCache::MAX_QUERY + 1)), page(1));
        assert!(cache.is_empty(), "query too long");
        let off = PageCache::new(0);
        off.put(q("a"), page(1));
        assert!(off.get(q("a")).is_none() && off.is_empty());
    }
}
