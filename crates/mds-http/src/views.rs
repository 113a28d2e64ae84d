//! What a node keeps in memory of the store's data, besides keys: the
//! company catalog with the identity of its version ([`CatalogSlot`]), and
//! the news articles it has served, as served ([`NewsCache`]). Both are read
//! on every request without a lock held across an `await`; both follow the
//! store through the reload task.

use std::collections::HashMap;
use std::ops::Deref;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, PoisonError, RwLock};

use arc_swap::{ArcSwap, Guard};
use mds_catalog::Catalog;

use crate::middleware::etag::Tagged;
use crate::pages::PageCache;

/// A company catalog and the identity of its version on this node.
#[derive(Debug)]
pub struct CatalogVersion {
    catalog: Arc<Catalog>,
    id: [u8; 16],
    pages: PageCache,
}

impl CatalogVersion {
    /// Identifies this catalog among every catalog any node has served:
    /// a random number drawn when the node starts, then how many catalogs
    /// it loaded before this one. What a page holds is a function of this
    /// and of the request, so a page's `ETag` derives from it without
    /// hashing the page (see [`crate::controllers::companies`]).
    pub fn id(&self) -> &[u8; 16] {
        &self.id
    }

    /// The pages served from this version, by query.
    pub fn pages(&self) -> &PageCache {
        &self.pages
    }
}

impl Deref for CatalogVersion {
    type Target = Catalog;
    fn deref(&self) -> &Catalog {
        &self.catalog
    }
}

/// The node's current company catalog, swapped whole.
#[derive(Debug)]
pub struct CatalogSlot {
    current: ArcSwap<CatalogVersion>,
    node: u64,
    loads: AtomicU64,
    page_cache_bytes: usize,
}

impl CatalogSlot {
    /// A slot holding `catalog`, each version keeping at most
    /// `page_cache_bytes` of served pages.
    pub fn new(catalog: Arc<Catalog>, page_cache_bytes: usize) -> Self {
        let node = rand::random::<u64>();
        let first = Self::version(node, 0, catalog, page_cache_bytes);
        CatalogSlot { current: ArcSwap::from_pointee(first), node, loads: AtomicU64::new(1), page_cache_bytes }
    }

    fn version(node: u64, n: u64, catalog: Arc<Catalog>, page_cache_bytes: usize) -> CatalogVersion {
        let mut id = [0; 16];
        id[..8].copy_from_slice(&node.to_le_bytes());
        id[8..].copy_from_slice(&n.to_le_bytes());
        CatalogVersion { catalog, id, pages: PageCache::new(page_cache_bytes) }
    }

    /// Serves `catalog` from now on, as a new version (with no pages).
    pub fn store(&self, catalog: Arc<Catalog>) {
        let n = self.loads.fetch_add(1, Ordering::Relaxed);
        self.current.store(Arc::new(Self::version(self.node, n, catalog, self.page_cache_bytes)));
    }

    /// The catalog as of now.
    pub fn load(&self) -> Guard<Arc<CatalogVersion>> {
        self.current.load()
    }
}

/// The news articles this node has served, by slug, so that a popular one
/// is read from the store once, not on every request.
///
/// Dropped whole when the store's news generation moves (the reload task
/// calls [`NewsCache::follow`]), so an import is served within a reload
/// interval, like the catalog. A read from the store that began before a
/// drop is not kept ([`NewsCache::ticket`]). Bounded: when the next
/// article would pass [`NewsCache::MAX_BYTES`], the cache starts over.
/// Only found articles are kept: a miss (`404`) asks the store each time.
#[derive(Debug, Default)]
pub struct NewsCache {
    inner: RwLock<NewsInner>,
}

#[derive(Debug, Default)]
struct NewsInner {
    /// The news generation the articles are at least as new as.
    generation: Option<i64>,
    /// Bumped by every drop.
    epoch: u64,
    bytes: usize,
    by_slug: HashMap<Box<str>, Tagged>,
}

/// Taken before reading an article from the store: the cache keeps the
/// article only if nothing was dropped in between.
#[derive(Debug, Clone, Copy)]
pub struct CacheTicket(u64);

impl NewsCache {
    /// The most article JSON held, in bytes.
    pub const MAX_BYTES: usize = 64 * 1024 * 1024;

    /// The served article with `slug`, if held.
    pub fn get(&self, slug: &str) -> Option<Tagged> {
        self.read().by_slug.get(slug).cloned()
    }

    /// To take before reading an article from the store, for [`Self::put`].
    pub fn ticket(&self) -> CacheTicket {
        CacheTicket(self.read().epoch)
    }

    /// Keeps `article` under `slug`, unless the cache was dropped since
    /// `ticket` was taken (the article may predate the drop).
    pub fn put(&self, ticket: CacheTicket, slug: &str, article: Tagged) {
        let mut inner = self.inner.write().unwrap_or_else(PoisonError::into_inner);
        if inner.epoch != ticket.0 {
            return;
        }
        let size = slug.len() + article.body.len();
        if inner.bytes + size > Self::MAX_BYTES {
            inner.drop_all();
        }
        inner.bytes += size;
        if let Some(old) = inner.by_slug.insert(slug.into(), article) {
            inner.bytes -= slug.len() + old.body.len();
        }
    }

    /// Follows the store's news generation: a different one drops every
    /// article held.
    pub fn follow(&self, generation: i64) {
        if self.read().generation == Some(generation) {
            return;
        }
        let mut inner = self.inner.write().unwrap_or_else(PoisonError::into_inner);
        if inner.generation != Some(generation) {
            inner.drop_all();
            inner.generation = Some(generation);
        }
    }

    /// How many articles are held.
    pub fn len(&self) -> usize {
        self.read().by_slug.len()
    }

    /// Whether none are.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, NewsInner> {
        self.inner.read().unwrap_or_else(PoisonError::into_inner)
    }
}

impl NewsInner {
    fn drop_all(&mut self) {
        self.by_slug.clear();
        self.bytes = 0;
        self.epoch += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::Bytes;
    use axum::http::HeaderValue;

    fn article(n: usize) -> Tagged {
        Tagged::hashed(vec![b'x'; n])
    }

    #[test]
    fn catalog_versions_differ() {
        let slot = CatalogSlot::new(Arc::new(Catalog::default()), 1 << 20);
        let first = *slot.load().id();
        slot.load()
            .pages()
            .put("limit=1", Tagged { body: Bytes::from_static(b"{}"), etag: HeaderValue::from_static("\"t\"") });
        assert!(slot.load().pages().get("limit=1").is_some());
        assert_eq!(*slot.load().id(), first, "stable while the catalog is");
        slot.store(Arc::new(Catalog::default()));
        assert_ne!(*slot.load().id(), first, "a new catalog is a new version, even with the same rows");
        assert!(slot.load().pages().is_empty(), "a new version serves no page of the old one");
        let other = CatalogSlot::new(Arc::new(Catalog::default()), 0);
        assert_ne!(*other.load().id(), first, "another node (or a restart) draws its own");
    }

    #[test]
    fn news_follows_the_generation() {
        let cache = NewsCache::default();
        cache.follow(1);
        let t = cache.ticket();
        cache.put(t, "a", article(10));
        assert_eq!(cache.get("a").unwrap().body.len(), 10);
        cache.follow(1);
        assert!(cache.get("a").is_some(), "same generation: kept");
        cache.follow(2);
        assert!(cache.get("a").is_none(), "an import: dropped");
        // A read that began before the drop is not kept.
        cache.put(t, "a", article(10));
        assert!(cache.is_empty());
        cache.put(cache.ticket(), "a", article(10));
        assert_eq!(cache.len(), 1);
    }

    #[test]
    fn news_is_bounded() {
        let cache = NewsCache::default();
        let big = NewsCache::MAX_BYTES / 3;
        cache.put(cache.ticket(), "a", article(big));
        cache.put(cache.ticket(), "a", article(big));
        cache.put(cache.ticket(), "b", article(big));
        assert_eq!(cache.len(), 2, "replacing does not count twice");
        cache.put(cache.ticket(), "c", article(big));
        assert_eq!(cache.len(), 1, "over the bound: started over");
        assert!(cache.get("c").is_some());
    }
}
