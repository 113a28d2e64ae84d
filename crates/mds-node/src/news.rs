//! [`NewsCache`]: the news articles a node has served, as served, read on
//! every request without a lock held across an `await` and dropped when the
//! store's news generation moves (the reload task follows it).

use crate::followed::{Followed, Ticket};
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
#[derive(Debug)]
pub struct NewsCache {
    articles: Followed<i64, Box<str>, Tagged>,
}

/// Taken before reading an article from the store: the cache keeps the
/// article only if nothing was dropped in between.
pub type CacheTicket = Ticket;

impl Default for NewsCache {
    fn default() -> Self {
        NewsCache { articles: Followed::new(Self::MAX_BYTES) }
    }
}

impl NewsCache {
    /// The most article JSON held, in bytes.
    pub const MAX_BYTES: usize = 64 * 1024 * 1024;

    /// The served article with `slug`, if held.
    pub fn get(&self, slug: &str) -> Option<Tagged> {
        self.articles.get(slug)
    }

    /// To take before reading an article from the store, for [`Self::put`].
    pub fn ticket(&self) -> CacheTicket {
        self.articles.ticket()
    }

    /// Keeps `article` under `slug`, unless the cache was dropped since
    /// `ticket` was taken (the article may predate the drop).
    pub fn put(&self, ticket: CacheTicket, slug: &str, article: Tagged) {
        let size = slug.len() + article.body.len();
        self.articles.put(ticket, slug.into(), article, size);
    }

    /// Follows the store's news generation: a different one drops every
    /// article held.
    pub fn follow(&self, generation: i64) {
        self.articles.follow(generation);
    }

    /// How many articles are held.
    pub fn len(&self) -> usize {
        self.articles.len()
    }

    /// Whether none are.
    pub fn is_empty(&self) -> bool {
        self.articles.is_empty()
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
