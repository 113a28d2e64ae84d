//! [`NewsCache`]: the news articles a node has served, as served, read on
//! every request without a lock held across an `await` and dropped when the
//! store's news generation moves (the reload task follows it).

use std::collections::HashMap;
use std::sync::{PoisonError, RwLock};

use crate::tagged::Tagged;

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

    fn article(n: usize) -> Tagged {
        Tagged::hashed(vec![b'x'; n])
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
