//! [`PageCache`]: company pages as served (body and `ETag`), by query
//! string, for one catalog version.
//!
//! What a page holds is a function of the catalog version and the query
//! (filters, cursor, limit: a cursor never expires, and one that was valid
//! for a query stays valid for it), so a page served once can be served
//! again as bytes: no parsing, no cursor check, no index walk, no JSON. Each
//! [`CatalogVersion`](crate::catalog::CatalogVersion) owns its cache, so an
//! import (a new version) starts with an empty one and no page outlives the
//! rows it was made of.
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

/// Pages by query string; see the [module](self).
#[derive(Debug)]
pub struct PageCache {
    max_bytes: usize,
    inner: RwLock<Halves>,
}

#[derive(Debug, Default)]
struct Halves {
    young: HashMap<Box<str>, Tagged>,
    young_bytes: usize,
    old: HashMap<Box<str>, Tagged>,
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

    /// The page served for `query`, if held.
    pub fn get(&self, query: &str) -> Option<Tagged> {
        if self.max_bytes == 0 {
            return None;
        }
        let g = self.read();
        if let Some(page) = g.young.get(query) {
            return Some(page.clone());
        }
        let page = g.old.get(query)?.clone();
        drop(g);
        // Asked for again: young again.
        self.put(query, page.clone());
        Some(page)
    }

    /// The bytes a page kept for `query` holds.
    fn held(query: &str, page: &Tagged) -> usize {
        query.len() + page.body.len() + page.etag.len() + PER_PAGE
    }

    /// Keeps `page` as the page of `query`.
    pub fn put(&self, query: &str, page: Tagged) {
        let size = Self::held(query, &page);
        if query.len() > Self::MAX_QUERY || size > self.max_bytes / 2 {
            return;
        }
        let mut g = self.inner.write().unwrap_or_else(PoisonError::into_inner);
        if g.young.contains_key(query) {
            return;
        }
        if g.young_bytes + size > self.max_bytes / 2 {
            g.old = std::mem::take(&mut g.young);
            g.young_bytes = 0;
        }
        g.old.remove(query);
        g.young_bytes += size;
        g.young.insert(query.into(), page);
    }

    /// How many pages are held.
    pub fn len(&self) -> usize {
        let g = self.read();
        g.young.len() + g.old.len()
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

    #[test]
    fn keeps_what_it_was_given() {
        let cache = PageCache::new(10_000);
        assert!(cache.get("limit=5").is_none());
        cache.put("limit=5", page(10));
        assert_eq!(cache.get("limit=5").unwrap().body.len(), 10);
        assert!(cache.get("limit=6").is_none());
        assert!(cache.get("").is_none(), "no query is a query of its own");
        cache.put("", page(20));
        assert_eq!(cache.get("").unwrap().body.len(), 20);
    }

    #[test]
    fn bounded_and_recently_asked_for_pages_stay() {
        // Half the bound is four pages (query, tag, bookkeeping included).
        let cache = PageCache::new(8 * PageCache::held("a", &page(24)));
        for q in ["a", "b", "c", "d"] {
            cache.put(q, page(24));
        }
        assert_eq!(cache.len(), 4);
        // "e" turns the generation: a b c d are old, still served.
        cache.put("e", page(24));
        assert_eq!(cache.len(), 5);
        assert!(cache.get("a").is_some(), "an old page is served, and young again");
        // Three more turn it again: what was not asked for since is gone.
        for q in ["f", "g", "h"] {
            cache.put(q, page(24));
        }
        for gone in ["b", "c", "d"] {
            assert!(cache.get(gone).is_none(), "{gone}: not asked for in two generations");
        }
        assert!(cache.get("a").is_some() && cache.get("e").is_some(), "asked for or recent: kept");
        assert!(cache.len() <= 8, "never more than two half-bounds: {}", cache.len());
    }

    #[test]
    fn oversized_and_disabled_keep_nothing() {
        let cache = PageCache::new(2 * PageCache::held("big", &page(60)) - 1);
        cache.put("big", page(60));
        assert!(cache.get("big").is_none(), "over half the bound");
        cache.put(&"q".repeat(PageCache::MAX_QUERY + 1), page(1));
        assert!(cache.is_empty(), "query too long");
        let off = PageCache::new(0);
        off.put("a", page(1));
        assert!(off.get("a").is_none() && off.is_empty());
    }
}
